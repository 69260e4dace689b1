import { Type } from 'typebox';
import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { clientIp, principalOf } from '../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../core/http/responses.ts';
import {
  AddBlockSchema,
  AssetCardSchema,
  BlockParamsSchema,
  BlockSchema,
  CreatedLinkSchema,
  CreateLinkSchema,
  CreateSchema,
  EditBlockSchema,
  IdParamsSchema,
  InternalShareSchema,
  LinkParamsSchema,
  LinkSchema,
  ListQuerySchema,
  ReorderSchema,
  ReplaceBlocksSchema,
  SharesSchema,
  ShareSubjectParamsSchema,
  StoryboardListSchema,
  StoryboardSchema,
  StoryboardSummarySchema,
  StoryboardViewSchema,
  UpdateSchema,
  VersionBodySchema,
  ViewBlockSchema,
} from './storyboards.schemas.ts';
import {
  addBlock,
  createStoryboard,
  deleteStoryboard,
  editBlock,
  getStoryboard,
  listStoryboards,
  removeBlock,
  reorderBlocks,
  replaceBlocks,
  setPublished,
  updateStoryboard,
  viewStoryboard,
} from './storyboards.service.ts';
import { createLink, listShares, revokeLink, shareInternally, unshareInternally } from './sharing/shares.service.ts';

const tags = ['storyboards'];
const errors = (...extra: Parameters<typeof errorResponses>) => errorResponses(...AUTHENTICATED_ERRORS, ...extra);
const NoContent = Type.Null({ description: 'Done' });
const Board = Type.Ref('Storyboard');
/** Clients send bodiless POSTs (often with Content-Type: application/json): treat them as {}. */
const emptyBody = {
  preValidation: async (request: { body: unknown }) => {
    request.body ??= {};
  },
};
const VersionQuery = Type.Object({
  version: Type.Optional(Type.Integer({ minimum: 1, description: 'Refuse (409) unless still at this version' })),
});

/** The shared schemas, added by the API routes (under /v1) and by the share-link routes (their own scope). */
export function addStoryboardSchemas(app: App): void {
  for (const schema of [
    BlockSchema,
    StoryboardSummarySchema,
    StoryboardSchema,
    AssetCardSchema,
    ViewBlockSchema,
    StoryboardViewSchema,
    LinkSchema,
  ])
    app.addSchema(schema);
}

/** Story boards, mounted under /v1 by app.ts (reference §15 for the list; the rest is Tessera's own, in the same style). */
export function storyboardRoutes(app: App, deps: Deps): void {
  addStoryboardSchemas(app);
  app.get(
    '/storyboards',
    {
      schema: {
        operationId: 'listStoryboards',
        tags,
        summary: 'Story boards the caller may view (cursor-paged; empty without viewStoryboards)',
        querystring: ListQuerySchema,
        response: { 200: StoryboardListSchema, ...errors('validation_failed') },
      },
    },
    async (request) => listStoryboards(deps, principalOf(request), request.query),
  );

  app.post(
    '/storyboards',
    {
      schema: {
        operationId: 'createStoryboard',
        tags,
        summary: 'Create a story board (Story Board Management)',
        body: CreateSchema,
        response: { 201: Board, ...errors('validation_failed', 'forbidden') },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createStoryboard(deps, principalOf(request), request.body, clientIp(request))),
  );

  app.get(
    '/storyboards/:id',
    {
      schema: {
        operationId: 'getStoryboard',
        tags,
        summary: 'One story board with its block definitions',
        params: IdParamsSchema,
        response: { 200: Board, ...errors('forbidden', 'not_found') },
      },
    },
    async (request) => getStoryboard(deps, principalOf(request), request.params.id),
  );

  app.patch(
    '/storyboards/:id',
    {
      schema: {
        operationId: 'updateStoryboard',
        tags,
        summary: 'Change title, description, locale, cover, security templates or all blocks at once',
        params: IdParamsSchema,
        body: UpdateSchema,
        response: { 200: Board, ...errors('validation_failed', 'forbidden', 'not_found', 'conflict') },
      },
    },
    async (request) => updateStoryboard(deps, principalOf(request), request.params.id, request.body, clientIp(request)),
  );

  app.delete(
    '/storyboards/:id',
    {
      schema: {
        operationId: 'deleteStoryboard',
        tags,
        summary: 'Delete a story board, its shares and links',
        params: IdParamsSchema,
        response: { 204: NoContent, ...errors('forbidden', 'not_found') },
      },
    },
    async (request, reply) => {
      await deleteStoryboard(deps, principalOf(request), request.params.id, clientIp(request));
      return reply.code(204).send(null);
    },
  );

  for (const [path, published, operationId] of [
    ['publish', true, 'publishStoryboard'],
    ['unpublish', false, 'unpublishStoryboard'],
  ] as const) {
    app.post(
      `/storyboards/:id/${path}`,
      {
        ...emptyBody,
        schema: {
          operationId,
          tags,
          summary: published ? 'Publish: viewers may now see it' : 'Back to draft: only managers see it',
          params: IdParamsSchema,
          body: VersionBodySchema,
          response: { 200: Board, ...errors('validation_failed', 'forbidden', 'not_found', 'conflict') },
        },
      },
      async (request) =>
        setPublished(deps, principalOf(request), request.params.id, published, request.body.version, clientIp(request)),
    );
  }

  app.get(
    '/storyboards/:id/view',
    {
      schema: {
        operationId: 'viewStoryboard',
        tags,
        summary: 'The story board resolved for the caller: only blocks and assets the caller may see',
        params: IdParamsSchema,
        response: { 200: Type.Ref('StoryboardView'), ...errors('forbidden', 'not_found') },
      },
    },
    async (request) => viewStoryboard(deps, principalOf(request), request.params.id),
  );

  app.put(
    '/storyboards/:id/blocks',
    {
      schema: {
        operationId: 'replaceStoryboardBlocks',
        tags,
        summary: 'Replace every block at once (atomic)',
        params: IdParamsSchema,
        body: ReplaceBlocksSchema,
        response: { 200: Board, ...errors('validation_failed', 'forbidden', 'not_found', 'conflict') },
      },
    },
    async (request) => replaceBlocks(deps, principalOf(request), request.params.id, request.body, clientIp(request)),
  );

  app.post(
    '/storyboards/:id/blocks',
    {
      schema: {
        operationId: 'addStoryboardBlock',
        tags,
        summary: 'Insert one block (at position, default the end)',
        params: IdParamsSchema,
        body: AddBlockSchema,
        response: { 201: Board, ...errors('validation_failed', 'forbidden', 'not_found', 'conflict') },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(await addBlock(deps, principalOf(request), request.params.id, request.body, clientIp(request))),
  );

  app.post(
    '/storyboards/:id/blocks/reorder',
    {
      schema: {
        operationId: 'reorderStoryboardBlocks',
        tags,
        summary: 'Put every block in a new order (atomic)',
        params: IdParamsSchema,
        body: ReorderSchema,
        response: { 200: Board, ...errors('validation_failed', 'forbidden', 'not_found', 'conflict') },
      },
    },
    async (request) => reorderBlocks(deps, principalOf(request), request.params.id, request.body, clientIp(request)),
  );

  app.patch(
    '/storyboards/:id/blocks/:blockId',
    {
      schema: {
        operationId: 'updateStoryboardBlock',
        tags,
        summary: 'Replace one block in place (same id, same position)',
        params: BlockParamsSchema,
        body: EditBlockSchema,
        response: { 200: Board, ...errors('validation_failed', 'forbidden', 'not_found', 'conflict') },
      },
    },
    async (request) =>
      editBlock(deps, principalOf(request), request.params.id, request.params.blockId, request.body, clientIp(request)),
  );

  app.delete(
    '/storyboards/:id/blocks/:blockId',
    {
      schema: {
        operationId: 'deleteStoryboardBlock',
        tags,
        summary: 'Remove one block',
        params: BlockParamsSchema,
        querystring: VersionQuery,
        response: { 200: Board, ...errors('validation_failed', 'forbidden', 'not_found', 'conflict') },
      },
    },
    async (request) =>
      removeBlock(
        deps,
        principalOf(request),
        request.params.id,
        request.params.blockId,
        request.query.version,
        clientIp(request),
      ),
  );

  app.get(
    '/storyboards/:id/shares',
    {
      schema: {
        operationId: 'listStoryboardShares',
        tags,
        summary: 'Users and groups it is shared with, and its external links',
        params: IdParamsSchema,
        response: { 200: SharesSchema, ...errors('forbidden', 'not_found') },
      },
    },
    async (request) => listShares(deps, principalOf(request), request.params.id),
  );

  app.post(
    '/storyboards/:id/shares',
    {
      schema: {
        operationId: 'shareStoryboard',
        tags,
        summary: 'Share with users and groups of the organization',
        params: IdParamsSchema,
        body: InternalShareSchema,
        response: { 200: SharesSchema, ...errors('validation_failed', 'forbidden', 'not_found') },
      },
    },
    async (request) => shareInternally(deps, principalOf(request), request.params.id, request.body, clientIp(request)),
  );

  app.delete(
    '/storyboards/:id/shares/:subjectId',
    {
      schema: {
        operationId: 'unshareStoryboard',
        tags,
        summary: 'Stop sharing with a user or group',
        params: ShareSubjectParamsSchema,
        response: { 204: NoContent, ...errors('forbidden', 'not_found') },
      },
    },
    async (request, reply) => {
      await unshareInternally(
        deps,
        principalOf(request),
        request.params.id,
        request.params.subjectId,
        clientIp(request),
      );
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/storyboards/:id/links',
    {
      ...emptyBody,
      schema: {
        operationId: 'createStoryboardLink',
        tags,
        summary: 'Create an external share link (token shown once; expiry, optional password)',
        params: IdParamsSchema,
        body: CreateLinkSchema,
        response: { 201: CreatedLinkSchema, ...errors('validation_failed', 'forbidden', 'not_found') },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(await createLink(deps, principalOf(request), request.params.id, request.body, clientIp(request))),
  );

  app.delete(
    '/storyboards/:id/links/:linkId',
    {
      schema: {
        operationId: 'revokeStoryboardLink',
        tags,
        summary: 'Revoke an external share link at once',
        params: LinkParamsSchema,
        response: { 204: NoContent, ...errors('forbidden', 'not_found') },
      },
    },
    async (request, reply) => {
      await revokeLink(deps, principalOf(request), request.params.id, request.params.linkId, clientIp(request));
      return reply.code(204).send(null);
    },
  );
}
