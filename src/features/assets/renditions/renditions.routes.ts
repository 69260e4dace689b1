import { Type } from 'typebox';
import type { Deps } from '../../../deps.ts';
import type { App } from '../../../core/http/app-types.ts';
import { principalOf } from '../../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../../core/http/responses.ts';
import { replacePreview } from './preview.service.ts';
import { setTechnicalMetadata } from './technical-metadata.service.ts';

const tags = ['assets'];
const write = errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found', 'conflict');

/** What is derived from an asset's file, set from outside: its technical metadata (federated assets) and its preview rendition. */
export function renditionRoutes(app: App, deps: Deps): void {
  app.post('/asset/:id/technical-metadata', {
    schema: {
      operationId: 'UpdateAssetTechMetadata', tags, summary: 'Set the technical metadata of a federated asset (Edit Metadata)',
      params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
      body: Type.Object({ tenovos_metadata: Type.Optional(Type.Object({}, { additionalProperties: true })), image_metadata: Type.Optional(Type.Object({}, { additionalProperties: true })) }, { additionalProperties: true }),
      response: { 200: Type.Object({ message: Type.String() }), ...write },
    },
  }, async (request) => {
    await setTechnicalMetadata(deps, principalOf(request), request.params.id, request.body as Record<string, unknown>);
    return { message: 'Success' };
  });

  app.post('/asset/content/preview', {
    schema: {
      operationId: 'ReplacePreview', tags, summary: 'Replace the preview rendition of assets with an upload (Replace Mezzanine + Upload, View)',
      body: Type.Object({ fileIds: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 })), filename: Type.Optional(Type.String({ maxLength: 255 })), filesize: Type.Optional(Type.Integer({ minimum: 1, maximum: 5 * 1024 ** 4 })), contentPaths: Type.Optional(Type.Object({}, { additionalProperties: true })) }),
      response: {
        200: Type.Object({ status: Type.Literal('success'), message: Type.String(), uploads: Type.Array(Type.Object({ fileId: Type.String(), objectId: Type.String(), url: Type.Optional(Type.String()), uploadId: Type.Optional(Type.String()), urls: Type.Optional(Type.Array(Type.Object({ partNumber: Type.Integer(), url: Type.String() }))) })) }),
        ...write,
      },
    },
  }, async (request) => replacePreview(deps, principalOf(request), request.body));
}
