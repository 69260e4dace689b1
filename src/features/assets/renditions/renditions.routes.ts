import { Type } from 'typebox';
import { TechnicalMetadataSchema } from '../assets.schemas.ts';
import { anyJsonDoc, docAs, docRequired } from '../../../core/http/doc-schema.ts';
import type { Deps } from '../../../deps.ts';
import type { App } from '../../../core/http/app-types.ts';
import { principalOf } from '../../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../../core/http/responses.ts';
import { replacePreview } from './preview.service.ts';
import { setTechnicalMetadata } from './technical-metadata.service.ts';
import { PAGE_SIZES, pagePreview, type PageSize } from './pages.service.ts';
import { serveBlob } from '../download/serve.ts';

const tags = ['assets'];
const write = errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found', 'conflict');

/** What is derived from an asset's file, set from outside: its technical metadata (federated assets) and its preview rendition. */
export function renditionRoutes(app: App, deps: Deps): void {
  app.post(
    '/asset/:id/technical-metadata',
    {
      schema: {
        operationId: 'UpdateAssetTechMetadata',
        tags,
        summary: 'Set the technical metadata of a federated asset (Edit Metadata)',
        params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
        body: TechnicalMetadataSchema,
        response: { 200: Type.Object({ message: Type.String() }), ...write },
      },
    },
    async (request) => {
      await setTechnicalMetadata(
        deps,
        principalOf(request),
        request.params.id,
        request.body as Record<string, unknown>,
      );
      return { message: 'Success' };
    },
  );

  app.get(
    '/asset/:id/page/:page',
    {
      schema: {
        operationId: 'GetAssetPage',
        tags,
        summary:
          'A page of a PDF as a JPEG of a rendition size, rendered on first request (View), with ETag, Range and Cache-Control',
        params: Type.Object({
          id: Type.String({ maxLength: 100 }),
          page: Type.Integer({ minimum: 1, maximum: 100_000, description: 'Page number, from 1' }),
        }),
        querystring: Type.Object({
          size: Type.Optional(
            Type.Union(
              Object.keys(PAGE_SIZES).map((k) => Type.Literal(k)),
              { description: 'thumbnail (200), preview (700, the default), large (1000) or mezzanine (3000)' },
            ),
          ),
        }),
        response: {
          200: Type.String({ format: 'binary', description: 'The page (JPEG)' }),
          206: Type.String({ format: 'binary' }),
          304: Type.Null({ description: 'Not modified' }),
          416: Type.Ref('Error', { description: 'Range Not Satisfiable' }),
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found', 'conflict'),
        },
      },
    },
    async (request, reply) =>
      serveBlob(
        deps,
        request,
        reply,
        await pagePreview(
          deps,
          principalOf(request),
          request.params.id,
          request.params.page,
          (request.query.size ?? 'preview') as PageSize,
        ),
      ),
  );

  app.post(
    '/asset/content/preview',
    {
      schema: {
        operationId: 'ReplacePreview',
        tags,
        summary: 'Replace the preview rendition of assets with an upload (Replace Mezzanine + Upload, View)',
        body: docRequired(
          Type.Object({
            fileIds: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 })),
            filename: Type.Optional(Type.String({ maxLength: 255 })),
            filesize: Type.Optional(Type.Integer({ minimum: 1, maximum: 5 * 1024 ** 4 })),
            contentPaths: Type.Optional(
              docAs(Type.Object({}, { additionalProperties: true }), {
                type: 'object',
                description: "The reference's content paths: accepted for its clients, not read by Tessera",
                additionalProperties: anyJsonDoc('Not read'),
              }),
            ),
          }),
          ['fileIds', 'filename', 'filesize'],
        ),
        response: {
          200: Type.Object({
            status: Type.Literal('success'),
            message: Type.String(),
            uploads: Type.Array(
              Type.Object({
                fileId: Type.String(),
                objectId: Type.String(),
                url: Type.Optional(Type.String()),
                uploadId: Type.Optional(Type.String()),
                urls: Type.Optional(Type.Array(Type.Object({ partNumber: Type.Integer(), url: Type.String() }))),
              }),
            ),
          }),
          ...write,
        },
      },
    },
    async (request) => replacePreview(deps, principalOf(request), request.body),
  );
}
