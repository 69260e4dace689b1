import multipart from '@fastify/multipart';
import { docAs } from '../../../core/http/doc-schema.ts';
import { Type } from 'typebox';
import type { App } from '../../../core/http/app-types.ts';
import { principalOf } from '../../../core/http/authenticate.ts';
import { AppError, invalidField } from '../../../core/http/errors.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../../core/http/responses.ts';
import { bag } from '../../../core/lookup.ts';
import type { Deps } from '../../../deps.ts';
import { PlaceholderSchema } from '../assets.schemas.ts';
import { wellFormedParts } from '../upload/upload-form.routes.ts';
import { findSimilar, type SimilarQuery } from './similar.service.ts';

/** An uploaded query picture may be this large. */
const IMAGE_MAX_BYTES = 25 * 1024 * 1024;
const FIELDS = ['assetId', 'threshold', 'limit', 'offset'] as const;

const SimilarResponse = Type.Object({
  hash: Type.String({ description: 'The query’s 64-bit perceptual hash (dHash), hexadecimal' }),
  threshold: Type.Integer(),
  offset: Type.Integer(),
  limit: Type.Integer(),
  nextOffset: Type.Union([Type.Integer(), Type.Null()], { description: 'offset of the next page; null on the last' }),
  results: Type.Array(
    Type.Object({
      objectId: Type.String(),
      filename: Type.String(),
      contentType: Type.Union([Type.String(), Type.Null()]),
      distance: Type.Integer({ description: 'bits of the 64-bit hash that differ (0: the same picture)' }),
      similarity: Type.Number({ description: '1 − distance/64' }),
      renditions: Type.Record(Type.String(), Type.String()),
      placeholder: Type.Optional(PlaceholderSchema),
    }),
  ),
});

function integer(raw: unknown, field: string, min: number, max: number, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : raw;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max)
    throw invalidField(`body.${field}`, `must be an integer from ${min} to ${max}`);
  return n;
}

/** The query's fields, from JSON or form fields alike; anything else is a 400 naming it. */
function parseFields(raw: Record<string, unknown>): Omit<SimilarQuery, 'image'> {
  for (const key of Object.keys(raw))
    if (!(FIELDS as readonly string[]).includes(key))
      throw invalidField(
        `body.${key}`,
        `is not a field of this request (${FIELDS.join(', ')}, or the file part \`file\`)`,
      );
  const assetId = raw.assetId;
  if (assetId !== undefined && (typeof assetId !== 'string' || assetId.length === 0 || assetId.length > 100))
    throw invalidField('body.assetId', 'must be an asset id');
  return {
    ...(assetId !== undefined ? { assetId: assetId as string } : {}),
    threshold: integer(raw.threshold, 'threshold', 0, 32, 10),
    limit: integer(raw.limit, 'limit', 1, 100, 25),
    offset: integer(raw.offset, 'offset', 0, 10_000, 0),
  };
}

/** POST /v1/search/similar: near-duplicates of an asset or of an uploaded picture. */
export function similarRoutes(app: App, deps: Deps): void {
  app.register(async (scope: App) => {
    await scope.register(multipart, { limits: { files: 1, fields: 10, fieldSize: 1024, fileSize: IMAGE_MAX_BYTES } });
    scope.post(
      '/search/similar',
      {
        config: { scope: 'read' },
        schema: {
          operationId: 'SearchSimilar',
          tags: ['search'],
          summary:
            'Near-duplicates by perceptual hash: of an asset (JSON {assetId}) or of an uploaded picture (multipart/form-data, part `file`); only assets the caller may view, nearest first',
          consumes: ['application/json', 'multipart/form-data'],
          body: docAs(Type.Any(), {
            type: 'object',
            description:
              'JSON {assetId, threshold?, limit?, offset?}, or multipart/form-data with the same fields (threshold, limit, offset) and the picture as the part `file` (up to 25 MiB)',
            properties: {
              assetId: {
                type: 'string',
                description: 'JSON: the asset whose near-duplicates are wanted (objectId or fileId)',
              },
              file: {
                type: 'string',
                format: 'binary',
                description: 'multipart/form-data: the picture (up to 25 MiB)',
              },
              threshold: {
                type: 'integer',
                minimum: 0,
                maximum: 32,
                default: 10,
                description: 'Most differing bits of 64',
              },
              limit: { type: 'integer', minimum: 1, maximum: 100, default: 25 },
              offset: { type: 'integer', minimum: 0, maximum: 10_000, default: 0 },
            },
            anyOf: [{ required: ['assetId'] }, { required: ['file'] }],
          }),
          response: {
            200: SimilarResponse,
            ...errorResponses(
              ...AUTHENTICATED_ERRORS,
              'validation_failed',
              'not_found',
              'conflict',
              'payload_too_large',
              'unsupported_media_type',
            ),
          },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        if (request.isMultipart()) {
          const fields = bag<string>();
          let image: Buffer | undefined;
          for await (const part of wellFormedParts(request)) {
            if (part.type === 'field') {
              fields[part.fieldname] = String(part.value);
              continue;
            }
            if (part.fieldname !== 'file') {
              part.file.resume();
              throw invalidField(`body.${part.fieldname}`, 'the picture goes in the part `file`');
            }
            image = await part.toBuffer();
          }
          const query = parseFields(fields);
          if (query.assetId !== undefined)
            throw invalidField('body.assetId', 'send either assetId (JSON) or a picture, not both');
          if (!image || image.length === 0) throw invalidField('body.file', 'is required: the picture to compare');
          return findSimilar(deps, principal, { ...query, image });
        }
        const body = request.body;
        if (!body || typeof body !== 'object' || Array.isArray(body))
          throw new AppError(
            'validation_failed',
            'body: must be a JSON object {assetId} or multipart/form-data with a file',
            {
              details: [{ field: 'body', message: 'must be a JSON object or multipart/form-data' }],
            },
          );
        const query = parseFields(body as Record<string, unknown>);
        if (query.assetId === undefined)
          throw invalidField('body.assetId', 'is required (or upload a picture as multipart/form-data, part `file`)');
        return findSimilar(deps, principal, query);
      },
    );
  });
}
