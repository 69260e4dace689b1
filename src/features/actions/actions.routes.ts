import { anyJsonDoc, docAs } from '../../core/http/doc-schema.ts';
import { Type, type TSchema } from 'typebox';
import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { principalOf } from '../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../core/http/responses.ts';
import { cancelAction, listActions, readAction, resumeAction, type ActionObjectReader } from './actions.service.ts';

/*
 * An action's input and result depend on its type (the feature that starts it). Declared in the
 * document with the fields each type writes; a type added later may write others.
 */
const int = (description: string) => ({ type: 'integer', description });
const ids = (description: string) => ({ type: 'array', items: { type: 'string' }, description });
const ACTION_INPUT_DOC = {
  type: 'object',
  description:
    'What the action was started with, by type: metadata.apply {pendingChanges}; bulk edit {metadataTemplateId, objectIds, metadataDocument, securityTemplateIds, securityTemplateOp, total}; purge {objectIds, …}; regenerate {objectIds}; transformation {items, recipients, …}; collection share {collection, recipients, expiresAt, …}',
  properties: {
    objectIds: ids('The assets it works on'),
    total: int('Items to process'),
    pendingChanges: int('metadata.apply: definition changes waiting when it started'),
    metadataTemplateId: { type: 'string' },
    securityTemplateIds: ids('Bulk edit: security templates to set or add'),
  },
  additionalProperties: anyJsonDoc('Further parameters of the action type'),
};
const ACTION_RESULT_DOC = {
  type: ['object', 'null'],
  description:
    'null until the action has one (while it runs it may hold the counts so far); by type: metadata.apply {message, changesApplied, itemsUpdated, handlers}; bulk edit {updated, failed, total}; purge {purged}; regenerate {queued}; transformation {files, recipients, mailQueued}; collection share {collectionId, recipients, assets, leftOut, mailQueued, expiresEpoch}',
  properties: {
    message: { type: 'string' },
    changesApplied: int('metadata.apply: definition changes applied'),
    itemsUpdated: int('metadata.apply: assets and collections updated'),
    handlers: {
      type: 'object',
      description: 'metadata.apply: items updated per handler',
      additionalProperties: { type: 'integer' },
    },
    updated: int('Bulk edit: assets changed'),
    failed: int('Bulk edit: assets refused (see errors)'),
    total: int('Items in all'),
    purged: int('Purge: assets removed for good'),
    queued: int('Regenerate: assets whose renditions were queued'),
    files: {
      type: 'array',
      description: 'Transformation: the files made, as expiring links',
      items: {
        type: 'object',
        required: ['objectId', 'filename', 'source', 'url', 'expiresEpoch'],
        properties: {
          objectId: { type: 'string' },
          filename: { type: 'string' },
          source: { type: 'string' },
          url: { type: ['string', 'null'], description: 'null: this file could not be made' },
          originalUrl: { type: 'string' },
          expiresEpoch: int('Seconds since the epoch'),
          width: { type: 'integer' },
          height: { type: 'integer' },
          contentType: { type: 'string' },
          size: int('Bytes'),
        },
      },
    },
    recipients: int('Addresses mailed'),
    mailQueued: { type: 'boolean' },
    collectionId: { type: 'string' },
    assets: int('Collection share: assets in the zip'),
    leftOut: int('Collection share: assets left out (see errors)'),
    expiresEpoch: int('Collection share: when the links stop working (ms)'),
  },
  additionalProperties: anyJsonDoc('Further counts of the action type'),
};

/** These POSTs read no fields: the document says so (the validator drops any sent). */
const NoFields = docAs(Type.Object({}), {
  type: 'object',
  description: 'No fields (an empty object, or no body)',
  additionalProperties: false,
});

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const ActionSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    objectId: Type.String({ format: 'uuid', description: 'Same as id (the reference addresses actions by objectId)' }),
    objectType: Type.Literal('Action'),
    type: Type.String({ description: 'What the action does, e.g. metadata.apply' }),
    status: Type.String({ description: 'queued | running | succeeded | failed | cancelled' }),
    progress: Type.Integer({ minimum: 0, maximum: 100, description: 'Percent done' }),
    processed: Type.Integer(),
    total: Type.Union([Type.Integer(), Type.Null()]),
    createdBy: Nullable(Type.String()),
    createdEpoch: Type.Integer(),
    createdDate: Type.String({ format: 'date-time' }),
    lastUpdatedEpoch: Type.Integer(),
    lastUpdatedDate: Type.String({ format: 'date-time' }),
    startedDate: Nullable(Type.String({ format: 'date-time' })),
    finishedDate: Nullable(Type.String({ format: 'date-time' })),
    input: docAs(Type.Unknown(), ACTION_INPUT_DOC),
    result: docAs(Type.Unknown(), ACTION_RESULT_DOC),
    errors: Type.Array(Type.Object({ item: Type.String(), message: Type.String() })),
  },
  { $id: 'Action' },
);

/**
 * What GET /v1/action/{id} needs from the feature that stores Action objects (assets), wired by
 * src/app.ts: the object's schema ($id 'ActionObject') and its reader.
 */
export interface ActionRouteHooks {
  readonly objectSchema: TSchema;
  readonly readObject: ActionObjectReader;
}

export function actionRoutes(app: App, deps: Deps, hooks: ActionRouteHooks): void {
  app.addSchema(ActionSchema);
  app.addSchema(hooks.objectSchema);
  app.get(
    '/action/:id',
    {
      schema: {
        operationId: 'GetAction',
        tags: ['actions'],
        summary:
          'An invoked Action (status, progress, result and per-item errors; its creator, or a holder of the privilege it needs), or an Action object by objectId or fileId (the template-as-asset of an action-type metadata template; View through its security templates)',
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
        response: {
          200: Type.Union([Type.Ref('Action'), Type.Ref('ActionObject')]),
          ...errorResponses(...AUTHENTICATED_ERRORS, 'not_found'),
        },
      },
    },
    async (request) => readAction(deps, principalOf(request), request.params.id, hooks.readObject),
  );

  app.get(
    '/actions',
    {
      schema: {
        operationId: 'ListActions',
        tags: ['actions'],
        summary:
          "The caller's Actions, newest first; with scope=visible also the organization's Actions the caller may read through a privilege (a Purge holder sees every purge)",
        querystring: Type.Object({
          scope: Type.Optional(
            Type.Union([Type.Literal('mine'), Type.Literal('visible')], {
              description:
                "mine (default): the caller's own; visible: also others' Actions whose privilege the caller holds",
            }),
          ),
          status: Type.Optional(
            Type.Union(['queued', 'running', 'succeeded', 'failed', 'cancelled'].map((s) => Type.Literal(s))),
          ),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
          before: Type.Optional(Type.String({ format: 'uuid', description: 'The `next` of the previous page' })),
        }),
        response: {
          200: Type.Object({ actions: Type.Array(Type.Ref('Action')), next: Type.Union([Type.String(), Type.Null()]) }),
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed'),
        },
      },
    },
    async (request) =>
      listActions(
        deps,
        principalOf(request),
        request.query as { status?: 'queued'; limit?: number; before?: string; scope?: 'mine' | 'visible' },
      ),
  );
  app.post(
    '/action/:id/cancel',
    {
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        operationId: 'CancelAction',
        tags: ['actions'],
        summary: 'Cancel an Action: at once when queued, at its next checkpoint when running',
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
        body: NoFields,
        response: { 200: Type.Ref('Action'), ...errorResponses(...AUTHENTICATED_ERRORS, 'not_found', 'conflict') },
      },
    },
    async (request) => cancelAction(deps, principalOf(request), request.params.id),
  );
  app.post(
    '/action/:id/resume',
    {
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        operationId: 'ResumeAction',
        tags: ['actions'],
        summary:
          'Start a cancelled or failed Action again where it stopped: finished items stay done, the rest run (409 when it is queued, running or succeeded)',
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
        body: NoFields,
        response: { 200: Type.Ref('Action'), ...errorResponses(...AUTHENTICATED_ERRORS, 'not_found', 'conflict') },
      },
    },
    async (request) => resumeAction(deps, principalOf(request), request.params.id),
  );
}
