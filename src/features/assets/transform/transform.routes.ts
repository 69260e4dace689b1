import { Type } from 'typebox';
import type { Deps } from '../../../deps.ts';
import type { App } from '../../../core/http/app-types.ts';
import { principalOf } from '../../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../../core/http/responses.ts';
import { SignedQuery } from '../assets.schemas.ts';
import { OUTPUT_FORMATS, TRANSFORM_KINDS } from './transform-ops.ts';
import { requestTransformation, revokeTransformation, serveTransformed } from './transform.service.ts';

const tags = ['assets'];

const Operation = Type.Object(
  {
    type: Type.String({
      maxLength: 50,
      description: `The kind: ${TRANSFORM_KINDS.join(', ')} (an unknown kind, such as the reference's proprietary digimarc, is a 400 naming it)`,
    }),
    width: Type.Optional(Type.Number({ description: 'resize: target width (1 to 16384); crop: width of the area' })),
    height: Type.Optional(Type.Number({ description: 'resize: target height (1 to 16384); crop: height of the area' })),
    fit: Type.Optional(
      Type.String({ maxLength: 20, description: 'resize: inside (default), outside, cover, contain, fill' }),
    ),
    withoutEnlargement: Type.Optional(Type.Boolean({ description: 'resize: never enlarge (default true)' })),
    left: Type.Optional(Type.Number({ description: 'crop: left edge (default 0)' })),
    top: Type.Optional(Type.Number({ description: 'crop: top edge (default 0)' })),
    angle: Type.Optional(
      Type.Number({
        description:
          'rotate: degrees clockwise, -360 to 360 (other than quarter turns, the corners are filled with background)',
      }),
    ),
    background: Type.Optional(
      Type.String({ maxLength: 9, description: 'rotate: fill colour #rrggbb[aa] (default #ffffff)' }),
    ),
    direction: Type.Optional(Type.String({ maxLength: 20, description: 'flip: vertical (default) or horizontal' })),
    format: Type.Optional(
      Type.String({
        maxLength: 10,
        description: `format: ${OUTPUT_FORMATS.join(', ')} (jpg accepted); without it the source's format where Tessera writes it, else jpeg`,
      }),
    ),
    quality: Type.Optional(Type.Number({ description: 'quality: 1 to 100 (jpeg, webp, avif, tiff)' })),
    text: Type.Optional(Type.String({ maxLength: 200, description: 'watermark: the text to draw (white, outlined)' })),
    objectId: Type.Optional(
      Type.String({
        maxLength: 100,
        description: 'watermark: an image asset to lay over (you need View and Download on it)',
      }),
    ),
    gravity: Type.Optional(
      Type.String({
        maxLength: 20,
        description:
          'watermark: center, north, northeast, east, southeast (default), south, southwest, west, northwest',
      }),
    ),
    opacity: Type.Optional(Type.Number({ description: 'watermark: 0 to 1 (default 0.5)' })),
    scale: Type.Optional(
      Type.Number({ description: 'watermark: its width as a share of the image width, 0.01 to 1 (default 0.25)' }),
    ),
  },
  { additionalProperties: false },
);

const TransformBody = Type.Object(
  {
    transformations: Type.Array(
      Type.Object({
        objectId: Type.String({ maxLength: 100, description: 'The asset (objectId or fileId)' }),
        expiration: Type.Optional(
          Type.Integer({ description: 'Seconds the download links stay valid (60 to 2592000; default 7 days)' }),
        ),
        source: Type.Optional(
          Type.String({
            maxLength: 50,
            description:
              "original (default) or the name of one of the asset's renditions (imagePreview, imagePreviewLarge, …)",
          }),
        ),
        includeOriginal: Type.Optional(Type.Boolean({ description: 'Also link the original' })),
        transformations: Type.Union(
          [
            Type.Array(Operation, { maxItems: 20 }),
            Type.String({
              maxLength: 200,
              description:
                'A kind by name, as the reference\'s example ("digimarc"): refused with 400 naming it, since every kind Tessera offers takes parameters',
            }),
          ],
          { description: 'The operations, applied in order' },
        ),
      }),
      { minItems: 1, maxItems: 50 },
    ),
    recipients: Type.Optional(
      Type.Union([
        Type.String({
          maxLength: 32_000,
          description: 'E-mail addresses separated by commas, semicolons or spaces (the reference sends one string)',
        }),
        Type.Array(Type.String({ maxLength: 320 }), { maxItems: 100 }),
      ]),
    ),
    shareMessage: Type.Optional(Type.String({ maxLength: 5000 })),
    sender: Type.Optional(
      Type.Object(
        { name: Type.Optional(Type.String({ maxLength: 200 })) },
        { description: "Tessera's own: the name the mail gives (default: your user name)" },
      ),
    ),
  },
  {
    examples: [
      {
        transformations: [
          {
            objectId: '8f1c7d2e-0a4b-4c5d-9e6f-1a2b3c4d5e6f',
            expiration: 86400,
            source: 'original',
            includeOriginal: true,
            transformations: [
              { type: 'resize', width: 1200 },
              { type: 'watermark', text: '© ACME' },
              { type: 'format', format: 'webp' },
            ],
          },
        ],
        recipients: 'jane@example.com, john@example.com',
        shareMessage: 'The web versions',
      },
    ],
  },
);

const TransformStarted = Type.Object({
  jobId: Type.String({
    format: 'uuid',
    description: 'The Action making the files: GET /v1/action/{jobId} (its result lists the links)',
  }),
  actionId: Type.String({ format: 'uuid', description: 'Same as jobId' }),
  status: Type.Literal('success'),
  message: Type.String(),
  mail: Type.Union([Type.Literal('queued'), Type.Literal('not_configured'), Type.Literal('none')], {
    description:
      'queued: the recipients are mailed the links when the files are ready; not_configured: no SMTP (the links are in the action result); none: no recipients',
  }),
  items: Type.Integer({ description: 'Files to make' }),
});

/** Transformations (reference §7.16): a transformed copy of each asset, linked and mailed by an Action. */
export function transformRoutes(app: App, deps: Deps): void {
  app.post(
    '/asset/transform',
    {
      schema: {
        operationId: 'GetTransformation',
        tags,
        summary:
          'Transform assets (resize, crop, rotate, flip, format, quality, a text or image watermark) into files behind expiring links, mailed to the recipients; an Action (202)',
        description:
          "The reference's X-API-Verification-Key header is accepted and not needed. Needs View, Download and Share on each asset (and View and Download on a watermark image).",
        body: TransformBody,
        response: {
          202: TransformStarted,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'conflict', 'rate_limited'),
        },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await requestTransformation(deps, principalOf(request), request.body)),
  );

  app.get(
    '/transform/:actionId/:n',
    {
      config: { public: true },
      schema: {
        operationId: 'GetTransformedFile',
        tags,
        summary: 'A transformed file behind its signed, expiring link',
        security: [],
        params: Type.Object({
          actionId: Type.String({ format: 'uuid' }),
          n: Type.Integer({ minimum: 0, maximum: 49 }),
        }),
        querystring: SignedQuery,
        response: {
          200: Type.String({ format: 'binary', description: 'The file (206 for a range request, 304 when unchanged)' }),
          206: Type.String({ format: 'binary' }),
          304: Type.Null({ description: 'Not modified' }),
          416: Type.Ref('Error', { description: 'Range Not Satisfiable' }),
          ...errorResponses('validation_failed', 'forbidden', 'not_found', 'gone'),
        },
      },
    },
    async (request, reply) => serveTransformed(deps, request, reply, request.params, request.query),
  );

  app.delete(
    '/asset/transform/:actionId',
    {
      schema: {
        operationId: 'RevokeTransformation',
        tags,
        summary:
          'Revoke a transformation: every link it made answers 410 at once and its files are removed. Who asked for it, or someone who may transform every asset in it',
        params: Type.Object({ actionId: Type.String({ format: 'uuid' }) }),
        response: {
          204: Type.Null({ description: 'Revoked' }),
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found'),
        },
      },
    },
    async (request, reply) => {
      await revokeTransformation(deps, principalOf(request), request.params.actionId);
      return reply.code(204).send(null);
    },
  );
}
