import { docAs } from '../../core/http/doc-schema.ts';
import { Type } from 'typebox';
import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { clientIp, principalOf } from '../../core/http/authenticate.ts';
import { AppError } from '../../core/http/errors.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../core/http/responses.ts';
import { applyChanges, listPendingChanges } from './apply/apply.service.ts';
import {
  createAttribute,
  deleteAttribute,
  getAttribute,
  listAttributes,
  updateAttribute,
} from './definitions/attributes/attributes.service.ts';
import { createGroup, deleteGroup, getGroup, listGroups, updateGroup } from './definitions/groups/groups.service.ts';
import {
  ApplySchema,
  AttributeCreateSchema,
  AttributeListQuerySchema,
  AttributeSchema,
  AttributeUpdateSchema,
  DeletedSchema,
  GroupCreateSchema,
  GroupListQuerySchema,
  GroupPageSchema,
  GroupSchema,
  GroupUpdateSchema,
  IdParamsSchema,
  LegacyTemplateSchema,
  PendingChangesSchema,
  TemplateCreateSchema,
  TemplateListQuerySchema,
  TemplatePageSchema,
  TemplateSchema,
  TemplateUpdateSchema,
  VocabularyCreateSchema,
  VocabularyListItemSchema,
  VocabularySchema,
  VocabularyUpdateSchema,
} from './metadata.schemas.ts';
import {
  createTemplate,
  deleteTemplate,
  getTemplateLegacy,
  listTemplatesLegacy,
  listTemplatesPaged,
  updateTemplate,
} from './definitions/templates/templates.service.ts';
import {
  createVocabulary,
  deleteVocabulary,
  getVocabulary,
  listVocabularies,
  updateVocabulary,
} from './definitions/vocabularies/vocabularies.service.ts';
import { externalUsageOf, type MetadataRouteHooks } from './hooks.ts';

const tags = ['metadata'];
const read = errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found');
const write = errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found', 'conflict');
const NoContent = Type.Null({ description: 'Deleted' });

/** Metadata definitions and their admin API (reference §10), registered under /v1. */
export function metadataRoutes(app: App, deps: Deps, hooks: MetadataRouteHooks): void {
  // What other features' data uses a definition (deletes are refused with 409 while it is used).
  const usage = externalUsageOf(hooks.usageProbes);
  app.addSchema(AttributeSchema);
  app.addSchema(GroupSchema);
  app.addSchema(LegacyTemplateSchema);
  app.addSchema(TemplateSchema);
  app.addSchema(VocabularyListItemSchema);
  app.addSchema(VocabularySchema);

  // Templates: the legacy reads (for anyone who fills metadata in) and the 1.5 admin operations.
  app.get(
    '/metadata/template',
    {
      schema: {
        operationId: 'GetMetadataTemplates',
        tags,
        summary: 'Metadata templates the caller may use, with groups and attributes',
        response: { 200: Type.Array(Type.Ref('MetadataTemplate')), ...read },
      },
    },
    async (request) => listTemplatesLegacy(deps, principalOf(request)),
  );
  app.get(
    '/metadata/template/:id',
    {
      schema: {
        operationId: 'GetMetadataTemplate',
        tags,
        summary: 'One metadata template with its groups and attributes',
        params: IdParamsSchema,
        response: { 200: Type.Ref('MetadataTemplate'), ...read },
      },
    },
    async (request) => getTemplateLegacy(deps, principalOf(request), request.params.id),
  );
  app.post(
    '/metadata/template',
    {
      schema: {
        operationId: 'CreateMetadataTemplate',
        tags,
        summary: 'Create a metadata template (Metadata Management)',
        body: TemplateCreateSchema,
        response: { 201: Type.Ref('MetadataTemplateAdmin'), ...write },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createTemplate(deps, principalOf(request), request.body, clientIp(request), usage)),
  );
  app.patch(
    '/metadata/template/:id',
    {
      schema: {
        operationId: 'UpdateMetadataTemplate',
        tags,
        summary:
          'Change a metadata template (name, groupIds, attributesDefaultValue, accessTemplates, templateOverride)',
        params: IdParamsSchema,
        body: TemplateUpdateSchema,
        response: { 200: Type.Ref('MetadataTemplateAdmin'), ...write },
      },
    },
    async (request) =>
      updateTemplate(deps, principalOf(request), request.params.id, request.body, clientIp(request), usage),
  );
  app.delete(
    '/metadata/template/:id',
    {
      schema: {
        operationId: 'DeleteMetadataTemplate',
        tags,
        summary: 'Delete a metadata template no asset uses',
        params: IdParamsSchema,
        response: { 204: NoContent, ...write },
      },
    },
    async (request, reply) => {
      await deleteTemplate(deps, principalOf(request), request.params.id, clientIp(request), usage);
      return reply.code(204).send(null);
    },
  );
  app.get(
    '/metadata/templates',
    {
      schema: {
        operationId: 'ListMetadataTemplates',
        tags,
        summary: 'Metadata templates, paged (Metadata Management)',
        querystring: TemplateListQuerySchema,
        response: { 200: TemplatePageSchema, ...read },
      },
    },
    async (request) => listTemplatesPaged(deps, principalOf(request), request.query, usage),
  );

  // Controlled vocabularies (reference §10.5)
  app.get(
    '/metadata/vocabulary',
    {
      schema: {
        operationId: 'GetAllControlledVocab',
        tags,
        summary: 'Controlled vocabularies and their values',
        response: { 200: Type.Array(Type.Ref('ControlledVocabularyListItem')), ...read },
      },
    },
    async (request) => listVocabularies(deps, principalOf(request)),
  );
  app.post(
    '/metadata/vocabulary',
    {
      schema: {
        operationId: 'CreateControlledVocab',
        tags,
        summary: 'Create a controlled vocabulary (values may carry parentValueId for cascades)',
        body: VocabularyCreateSchema,
        response: { 200: Type.Ref('ControlledVocabularyResponse'), ...write },
      },
    },
    async (request) => createVocabulary(deps, principalOf(request), request.body, clientIp(request)),
  );
  app.get(
    '/metadata/vocabulary/:id',
    {
      schema: {
        operationId: 'GetControlledVocab',
        tags,
        summary: 'One controlled vocabulary',
        params: IdParamsSchema,
        response: { 200: Type.Ref('ControlledVocabularyResponse'), ...read },
      },
    },
    async (request) => getVocabulary(deps, principalOf(request), request.params.id),
  );
  app.patch(
    '/metadata/vocabulary/:id',
    {
      schema: {
        operationId: 'UpdateControlledVocab',
        tags,
        summary: 'Rename a vocabulary; add, update (rename, re-parent) and delete values',
        params: IdParamsSchema,
        body: VocabularyUpdateSchema,
        response: { 200: Type.Ref('ControlledVocabularyResponse'), ...write },
      },
    },
    async (request) => updateVocabulary(deps, principalOf(request), request.params.id, request.body, clientIp(request)),
  );
  app.delete(
    '/metadata/vocabulary/:id',
    {
      schema: {
        operationId: 'DeleteControlledVocab',
        tags,
        summary: 'Delete a vocabulary no attribute uses',
        params: IdParamsSchema,
        response: { 200: DeletedSchema, ...write },
      },
    },
    async (request) => deleteVocabulary(deps, principalOf(request), request.params.id, clientIp(request), usage),
  );

  // Attributes
  app.get(
    '/metadata/attributes',
    {
      schema: {
        operationId: 'ListMetadataAttributes',
        tags,
        summary: 'Every metadata attribute (Metadata Management)',
        querystring: AttributeListQuerySchema,
        response: { 200: Type.Array(Type.Ref('MetadataAttribute')), ...read },
      },
    },
    async (request) => listAttributes(deps, principalOf(request), request.query),
  );
  app.post(
    '/metadata/attributes',
    {
      schema: {
        operationId: 'CreateMetadataAttribute',
        tags,
        summary: 'Create a metadata attribute: text, date, controlled vocabulary, table or cascade',
        body: AttributeCreateSchema,
        response: { 201: Type.Ref('MetadataAttribute'), ...write },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createAttribute(deps, principalOf(request), request.body, clientIp(request))),
  );
  app.get(
    '/metadata/attributes/:id',
    {
      schema: {
        operationId: 'GetMetadataAttribute',
        tags,
        summary: 'One metadata attribute',
        params: IdParamsSchema,
        response: { 200: Type.Ref('MetadataAttribute'), ...read },
      },
    },
    async (request) => getAttribute(deps, principalOf(request), request.params.id),
  );
  app.patch(
    '/metadata/attributes/:id',
    {
      schema: {
        operationId: 'UpdateMetadataAttribute',
        tags,
        summary: 'Change a metadata attribute (its type and searchField are fixed)',
        params: IdParamsSchema,
        body: AttributeUpdateSchema,
        response: { 200: Type.Ref('MetadataAttribute'), ...write },
      },
    },
    async (request) => updateAttribute(deps, principalOf(request), request.params.id, request.body, clientIp(request)),
  );
  app.delete(
    '/metadata/attributes/:id',
    {
      schema: {
        operationId: 'DeleteMetadataAttribute',
        tags,
        summary: 'Delete a metadata attribute no group, table or asset uses',
        params: IdParamsSchema,
        response: { 204: NoContent, ...write },
      },
    },
    async (request, reply) => {
      await deleteAttribute(deps, principalOf(request), request.params.id, clientIp(request), usage);
      return reply.code(204).send(null);
    },
  );

  // Groups
  app.get(
    '/metadata/groups',
    {
      schema: {
        operationId: 'ListMetadataGroups',
        tags,
        summary: 'Metadata groups, paged (Metadata Management)',
        querystring: GroupListQuerySchema,
        response: { 200: GroupPageSchema, ...read },
      },
    },
    async (request) => listGroups(deps, principalOf(request), request.query),
  );
  app.post(
    '/metadata/groups',
    {
      schema: {
        operationId: 'CreateMetadataGroup',
        tags,
        summary: 'Create a metadata group of attributes',
        body: GroupCreateSchema,
        response: { 201: Type.Ref('MetadataGroupSummary'), ...write },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createGroup(deps, principalOf(request), request.body, clientIp(request))),
  );
  app.get(
    '/metadata/groups/:id',
    {
      schema: {
        operationId: 'GetMetadataGroup',
        tags,
        summary: 'One metadata group',
        params: IdParamsSchema,
        response: { 200: Type.Ref('MetadataGroupSummary'), ...read },
      },
    },
    async (request) => getGroup(deps, principalOf(request), request.params.id),
  );
  app.patch(
    '/metadata/groups/:id',
    {
      schema: {
        operationId: 'UpdateMetadataGroup',
        tags,
        summary: 'Change a metadata group (attributeIds replaces its attributes, in order)',
        params: IdParamsSchema,
        body: GroupUpdateSchema,
        response: { 200: Type.Ref('MetadataGroupSummary'), ...write },
      },
    },
    async (request) => updateGroup(deps, principalOf(request), request.params.id, request.body, clientIp(request)),
  );
  app.delete(
    '/metadata/groups/:id',
    {
      schema: {
        operationId: 'DeleteMetadataGroup',
        tags,
        summary: 'Delete a metadata group no template uses',
        params: IdParamsSchema,
        response: { 204: NoContent, ...write },
      },
    },
    async (request, reply) => {
      await deleteGroup(deps, principalOf(request), request.params.id, clientIp(request));
      return reply.code(204).send(null);
    },
  );

  // Definition changes and applying them
  app.get(
    '/metadata/changes',
    {
      schema: {
        operationId: 'ListMetadataChanges',
        tags,
        summary: 'Definition changes not yet applied (at most 1000 shown)',
        response: { 200: PendingChangesSchema, ...read },
      },
    },
    async (request) => listPendingChanges(deps, principalOf(request)),
  );
  app.register(async (scope: App) => {
    // Reference clients POST here with Content-Type: application/json and no body at all.
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
      const text = String(body).trim();
      if (text === '') return done(null, null);
      try {
        done(null, JSON.parse(text));
      } catch {
        done(new AppError('invalid_json', 'Body is not valid JSON'), undefined);
      }
    });
    scope.post(
      '/metadata/apply',
      {
        schema: {
          operationId: 'ApplyMetadataChanges',
          tags,
          summary:
            'Apply metadata definition changes to assets and the search index, as an Action (202; follow GET /v1/action/{actionId})',
          body: docAs(
            Type.Unsafe<Record<string, never> | null>({
              type: ['object', 'null'],
              description: 'No body (an empty object or nothing)',
            }),
            {
              type: ['object', 'null'],
              description: 'No body (an empty object or nothing)',
              additionalProperties: false,
            },
          ),
          response: { 202: ApplySchema, ...errorResponses(...AUTHENTICATED_ERRORS, 'forbidden') },
        },
      },
      async (request, reply) => reply.code(202).send(await applyChanges(deps, principalOf(request), clientIp(request))),
    );
  });
}
