import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { principalOf } from '../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../core/http/responses.ts';
import { sendJsonText } from '../../core/http/shared-json.ts';
import {
  AssetSchema,
  BulkCreateResponseSchema,
  BulkCreateSchema,
  CompleteResponse,
  CompleteSchema,
  CreateResponseSchema,
  DeleteResponse,
  DeleteSchema,
  IdParams,
  LegacyCreateSchema,
  LegacyUpdateSchema,
  PartParams,
  RawBody,
  SignedQuery,
  SimpleAssetSchema,
  SimpleCreateResponseSchema,
  SimpleCreateSchema,
  SimpleGetQuery,
  SimpleGetResponse,
  SimpleUpdateSchema,
  StatusMessage,
  UploadParams,
  UploadReceived,
  type LegacyCreate,
} from './assets.schemas.ts';
import {
  createAsset,
  deleteOrRestore,
  getLatest,
  getVersions,
  updateAsset,
  type CreatedAsset,
} from './assets.service.ts';
import { withAssetView, type AssetView } from './views/asset-views.ts';
import { createAssetsBulk } from './bulk/create-bulk.service.ts';
import { hiddenOf, presentLegacy, presentSimplified } from './views/present.ts';
import { seesSensitiveData } from '../metadata/index.ts';
import { verifySignedPath } from './upload/signed-urls.ts';
import { templateOf } from './metadata-seam/metadata-seam.ts';
import { completeUpload, receivePart, receiveSingle, uploadedAssetFileIds } from './upload/uploads.service.ts';

const tags = ['assets'];
/** POST /v1/assets/bulk accepts bodies up to this size (or TESSERA_BODY_LIMIT_BYTES when larger): 1000 items of up to ~16 KB each. */
export const BULK_BODY_LIMIT = 16 * 1024 * 1024;
const read = errorResponses(...AUTHENTICATED_ERRORS, 'forbidden', 'not_found');
const write = errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found', 'conflict');

/** A request carrying `filesize` (or `fileSize`) gets part URLs whatever the size (reference §7.2, training). */
function createInput(body: LegacyCreate) {
  const filesize = body.filesize ?? body.fileSize;
  return { ...body, filesize, multipart: filesize !== undefined };
}

function createdResponse(created: CreatedAsset) {
  const { asset, upload } = created;
  return {
    filename: asset.filename,
    objectId: asset.id,
    fileId: asset.file_id,
    originalFileId: asset.original_file_id,
    versionNumber: asset.version_number,
    ...(upload ?? {}),
    ...(asset.content_path ? { url: asset.content_path } : {}),
    ...(created.duplicates ? { duplicates: created.duplicates } : {}),
  };
}

/** The reference's asset operations (§7) under /v1, legacy and 1.5 shapes. */
export function assetRoutes(app: App, deps: Deps): void {
  app.addSchema(AssetSchema);
  app.addSchema(SimpleAssetSchema);

  app.post(
    '/asset',
    {
      schema: {
        operationId: 'CreateAsset',
        tags,
        summary:
          'Create an asset, a new version (originalFileId) or a metadata-only asset; answers where to upload the content',
        body: LegacyCreateSchema,
        response: { 200: CreateResponseSchema, ...write },
      },
    },
    async (request) =>
      createdResponse(await createAsset(deps, principalOf(request), createInput(request.body), 'legacy')),
  );

  app.get(
    '/asset/:id',
    {
      schema: {
        operationId: 'GetAsset',
        tags,
        summary: 'An asset by objectId or fileId (View)',
        params: IdParams,
        response: { 200: Type.Ref('Asset'), ...read },
      },
    },
    (request, reply) => {
      // Served from the asset view cache (asset-views.ts): the body is serialized once per view.
      // A cached view is answered synchronously (nothing returned: the reply is sent).
      const send = (view: AssetView) => {
        // Restricted attributes are left out for a caller without Sensitive Data: one body per kind of reader.
        const sensitive = seesSensitiveData(principal);
        return sendJsonText(
          reply,
          view.body(
            `GetAsset:${sensitive}`,
            () =>
              reply.serialize(
                presentLegacy(deps, view.asset, view.security, view.template, hiddenOf(view.template, sensitive)),
              ) as string,
          ),
        );
      };
      const principal = principalOf(request);
      return withAssetView(deps, principal, request.params.id, send);
    },
  );

  app.patch(
    '/asset/:id',
    {
      schema: {
        operationId: 'UpdateAsset',
        tags,
        summary:
          'Change metadata (per attribute: what is sent replaces, the rest stays) and/or security templates (Edit Metadata)',
        params: IdParams,
        body: LegacyUpdateSchema,
        response: { 200: StatusMessage, ...write },
      },
    },
    async (request) => {
      await updateAsset(deps, principalOf(request), request.params.id, request.body, 'legacy');
      return { status: 'success' as const, message: 'Asset update was successful' };
    },
  );

  app.get(
    '/asset/:id/latest',
    {
      schema: {
        operationId: 'GetLatestVersion',
        tags,
        summary: 'The current version of an asset',
        params: IdParams,
        response: { 200: Type.Ref('Asset'), ...read },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { asset, security } = await getLatest(deps, principal, request.params.id);
      const template = await templateOf(deps.db, principal.orgId, asset.metadata_template_id);
      return presentLegacy(deps, asset, security, template, hiddenOf(template, seesSensitiveData(principal)));
    },
  );

  app.get(
    '/asset/:id/version',
    {
      schema: {
        operationId: 'GetVersions',
        tags,
        summary: 'Every version of an asset, newest first (objectId, fileId or originalFileId)',
        params: IdParams,
        response: { 200: Type.Array(Type.Ref('Asset')), ...read },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const versions = await getVersions(deps, principal, request.params.id);
      return Promise.all(
        versions.map(async ({ asset, security }) => {
          const template = await templateOf(deps.db, principal.orgId, asset.metadata_template_id);
          return presentLegacy(deps, asset, security, template, hiddenOf(template, seesSensitiveData(principal)));
        }),
      );
    },
  );

  app.post(
    '/asset/:id/delete',
    {
      schema: {
        operationId: 'DeleteAsset',
        tags,
        summary: 'Send an asset (all its versions) to the recycle bin, or restore it (Delete permission)',
        params: IdParams,
        body: DeleteSchema,
        response: { 200: DeleteResponse, ...write },
      },
    },
    async (request) => {
      const asset = await deleteOrRestore(deps, principalOf(request), request.params.id, request.body.action);
      return {
        status: 'success' as const,
        message: 'Master Object update was successful',
        data: JSON.stringify({
          objectId: asset.id,
          fileId: asset.file_id,
          originalFileId: asset.original_file_id,
          filename: asset.filename,
          metadataDeletedEpoch: asset.deleted_at,
          lastUpdatedEpoch: asset.updated_at,
          lastUpdatedBy: asset.updated_by,
        }),
      };
    },
  );

  app.post(
    '/asset/complete',
    {
      schema: {
        operationId: 'FinishUpload',
        tags,
        summary: 'Finish (complete) or cancel a multipart upload; also confirms a single presigned upload',
        body: CompleteSchema,
        response: {
          200: CompleteResponse,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'not_found', 'conflict', 'gone'),
        },
      },
    },
    async (request) => {
      const { upload, status } = await completeUpload(deps, principalOf(request), request.body);
      const asset = await uploadedAssetFileIds(deps, upload.asset_id);
      const fileId = asset?.file_id ?? request.body.fileId ?? upload.asset_id;
      return {
        fileId,
        filename: upload.filename,
        action: status === 'completed' ? ('Complete' as const) : ('Cancel' as const),
        originalFileId: asset?.original_file_id ?? fileId,
        uploadId: upload.id,
        s3Key: `masters/${fileId}/${upload.filename}`,
        status: 'success' as const,
      };
    },
  );

  // 1.5 simplified endpoints (reference §7.18): name-based metadata, {status, message, data}.
  app.post(
    '/assets/asset',
    {
      schema: {
        operationId: 'CreateAssetSimplified',
        tags,
        summary: 'Create an asset, a new version or a metadata-only asset (name-based metadata)',
        body: SimpleCreateSchema,
        response: { 200: SimpleCreateResponseSchema, ...write },
      },
    },
    async (request) => ({
      status: 'success' as const,
      message: 'Asset created successfully',
      data: createdResponse(await createAsset(deps, principalOf(request), createInput(request.body), 'simplified')),
    }),
  );

  // Tessera's own (the reference has no bulk create): up to 1000 metadata-only assets, all or nothing.
  app.post(
    '/assets/bulk',
    {
      bodyLimit: Math.max(deps.config.bodyLimitBytes, BULK_BODY_LIMIT),
      // Its answer does not wait for the indexing of up to 1000 documents: this process's next search
      // indexes them first, other processes within a pass (decision 0027, update).
      config: { indexAfterAnswer: true },
      schema: {
        operationId: 'CreateAssetsBulk',
        tags,
        summary:
          'Create 1 to 1000 metadata-only assets in one transaction: all or nothing, every invalid item reported (body.assets.<i>…)',
        body: BulkCreateSchema,
        response: {
          200: BulkCreateResponseSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'payload_too_large'),
        },
      },
    },
    async (request) => {
      const rows = await createAssetsBulk(deps, principalOf(request), request.body.assets.map(createInput));
      return {
        status: 'success' as const,
        message: `${rows.length} assets created successfully`,
        data: rows.map((asset) => createdResponse({ asset, upload: null, uploadRowId: null })),
      };
    },
  );

  // The live page's path, and the 1.5 change log's `GET /assets/{id}` (reference §19.13) as an alias with its own operationId.
  for (const [path, operationId, summary] of [
    ['/assets/asset/:id', 'GetAssetSimplified', 'An asset by objectId or fileId, simplified'],
    [
      '/assets/:id',
      'GetAssetSimplifiedAlias',
      'The same as GET /v1/assets/asset/{id} (the path the 1.5 change log names)',
    ],
  ] as const) {
    app.get(
      path,
      {
        schema: {
          operationId,
          tags,
          summary,
          params: IdParams,
          querystring: SimpleGetQuery,
          response: { 200: SimpleGetResponse, ...read },
        },
      },
      (request, reply) => {
        const options = request.query;
        const principal = principalOf(request);
        const sensitive = seesSensitiveData(principal);
        const send = (view: AssetView) =>
          sendJsonText(
            reply,
            view.body(
              `GetAssetSimplified:${options.empty}:${options.system}:${sensitive}`,
              () =>
                reply.serialize({
                  status: 'success' as const,
                  message: 'Asset retrieved successfully',
                  data: presentSimplified(
                    deps,
                    view.asset,
                    view.security,
                    view.securityTemplates,
                    view.template,
                    options,
                    hiddenOf(view.template, sensitive),
                  ),
                }) as string,
            ),
          );
        return withAssetView(deps, principal, request.params.id, send);
      },
    );
  }

  app.patch(
    '/assets/asset/:id',
    {
      schema: {
        operationId: 'UpdateAssetSimplified',
        tags,
        summary: 'Change an asset: only the attributes and templates sent change',
        params: IdParams,
        body: SimpleUpdateSchema,
        response: { 200: StatusMessage, ...write },
      },
    },
    async (request) => {
      await updateAsset(deps, principalOf(request), request.params.id, request.body, 'simplified');
      return { status: 'success' as const, message: 'Asset Update was successful' };
    },
  );

  // Tessera's presigned upload URLs (local-disk storage): signed, so no credentials.
  app.register(async (scope: App) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      '*',
      (_request: FastifyRequest, _payload: unknown, done: (err: Error | null, body?: unknown) => void) => done(null),
    );
    const declared = (request: FastifyRequest) => {
      const type = request.headers['content-type'];
      return typeof type === 'string' && type !== '' ? type : undefined;
    };
    const length = (request: FastifyRequest) => {
      const value = request.headers['content-length'];
      return value === undefined ? undefined : Number(value);
    };
    scope.put(
      '/uploads/:uploadId',
      {
        config: { public: true },
        schema: {
          operationId: 'UploadContent',
          tags,
          summary: 'Upload the content of an asset to its presigned URL (local-disk storage)',
          security: [],
          consumes: ['application/octet-stream'],
          params: UploadParams,
          querystring: SignedQuery,
          body: RawBody,
          response: {
            200: UploadReceived,
            ...errorResponses('validation_failed', 'forbidden', 'not_found', 'conflict', 'gone'),
          },
        },
      },
      async (request, reply) => {
        verifySignedPath(
          deps,
          'PUT',
          `/v1/uploads/${request.params.uploadId}`,
          request.query.expires,
          request.query.signature,
        );
        const { etag } = await receiveSingle(
          deps,
          request.params.uploadId,
          request.raw,
          declared(request),
          length(request),
        );
        reply.header('etag', etag);
        return { status: 'success' as const, etag };
      },
    );
    scope.put(
      '/uploads/:uploadId/parts/:partNumber',
      {
        config: { public: true },
        schema: {
          operationId: 'UploadPart',
          tags,
          summary: 'Upload one part of a multipart upload to its presigned URL (local-disk storage)',
          security: [],
          consumes: ['application/octet-stream'],
          params: PartParams,
          querystring: SignedQuery,
          body: RawBody,
          response: {
            200: UploadReceived,
            ...errorResponses('validation_failed', 'forbidden', 'not_found', 'conflict', 'gone'),
          },
        },
      },
      async (request, reply) => {
        verifySignedPath(
          deps,
          'PUT',
          `/v1/uploads/${request.params.uploadId}/parts/${request.params.partNumber}`,
          request.query.expires,
          request.query.signature,
        );
        const { etag } = await receivePart(deps, request.params.uploadId, request.params.partNumber, request.raw);
        reply.header('etag', etag);
        return { status: 'success' as const, etag };
      },
    );
  });
}
