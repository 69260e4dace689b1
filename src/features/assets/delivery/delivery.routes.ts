import { Type } from 'typebox';
import type { App } from '../../../core/http/app-types.ts';
import { principalOf } from '../../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../../core/http/responses.ts';
import type { Deps } from '../../../deps.ts';
import { serveBlob } from '../download/serve.ts';
import { deliver } from './deliver.service.ts';
import { loadAssetFor } from '../access.ts';
import { exemptPrincipal, rightsGate, serveWatermarked } from '../rights/gate.ts';
import { createPreset, deletePreset, FITS, FORMATS, listPresets, updatePreset } from './presets.service.ts';

const tags = ['assets'];
const Size = (what: string) =>
  Type.Integer({ minimum: 1, maximum: 8192, description: `${what} in pixels (1–8192); never enlarged` });
const Fit = Type.String({ maxLength: 10, description: `${FITS.join(', ')} (default inside)` });
const Format = Type.String({ maxLength: 10, description: `${FORMATS.join(', ')} (jpg accepted; default jpeg)` });
const Quality = Type.Integer({ minimum: 1, maximum: 100, description: '1–100 (default 80; PNG is lossless)' });

const Preset = Type.Object({
  id: Type.String(),
  name: Type.String(),
  width: Type.Union([Type.Integer(), Type.Null()]),
  height: Type.Union([Type.Integer(), Type.Null()]),
  fit: Type.String(),
  format: Type.String(),
  quality: Type.Integer(),
  createdEpoch: Type.Integer(),
  lastUpdatedEpoch: Type.Integer(),
});
const PresetBody = (required: boolean) =>
  Type.Object(
    {
      name: required
        ? Type.String({ maxLength: 50, description: 'Unique in the organization, any case (Web, Print, Social…)' })
        : Type.Optional(Type.String({ maxLength: 50 })),
      width: Type.Optional(Type.Union([Size('Width'), Type.Null()])),
      height: Type.Optional(Type.Union([Size('Height'), Type.Null()])),
      fit: Type.Optional(Fit),
      format: Type.Optional(Format),
      quality: Type.Optional(Quality),
    },
    { additionalProperties: false },
  );
const errors = errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found', 'conflict');

/** Delivery presets (admin) and image renditions on request (issue 25 item 6). */
export function deliveryRoutes(app: App, deps: Deps): void {
  app.get(
    '/asset/:id/delivery',
    {
      schema: {
        operationId: 'GetAssetDelivery',
        tags,
        summary:
          'An image rendition on request, by parameters (width, height, fit, format, quality) or by a delivery preset; made on the first request, then served from storage (View and Download), with ETag, Range and Cache-Control',
        params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
        querystring: Type.Object(
          {
            preset: Type.Optional(
              Type.String({
                maxLength: 50,
                description: 'A delivery preset by name (any case); not with the other parameters',
              }),
            ),
            width: Type.Optional(Size('Width')),
            height: Type.Optional(Size('Height')),
            fit: Type.Optional(Fit),
            format: Type.Optional(Format),
            quality: Type.Optional(Quality),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.String({ format: 'binary', description: 'The image' }),
          206: Type.String({ format: 'binary' }),
          304: Type.Null({ description: 'Not modified' }),
          416: Type.Ref('Error', { description: 'Range Not Satisfiable' }),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      // Out of rights (docs/usage-rights.md): a delivery is a picture of any size, gated like the original
      // (refused before anything is made; a delivery is always an image, so `watermark` marks it).
      const { asset } = await loadAssetFor(deps.db, principal, request.params.id, 'asset.deliver');
      const verdict = await rightsGate(deps, asset, 'original', exemptPrincipal(principal), 'image/jpeg');
      const item = await deliver(deps, principal, request.params.id, request.query);
      if (verdict !== 'serve') return serveWatermarked(deps, request, reply, item);
      return serveBlob(deps, request, reply, item);
    },
  );

  app.get(
    '/delivery-presets',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'ListDeliveryPresets',
        tags,
        summary:
          'The delivery presets of the organization (any user: they name what GET /v1/asset/{id}/delivery?preset= makes)',
        response: { 200: Type.Object({ presets: Type.Array(Preset) }), ...errorResponses(...AUTHENTICATED_ERRORS) },
      },
    },
    async (request) => listPresets(deps, principalOf(request)),
  );
  app.post(
    '/delivery-presets',
    {
      schema: {
        operationId: 'CreateDeliveryPreset',
        tags,
        summary: 'Define a delivery preset (Content Management)',
        body: PresetBody(true),
        response: { 200: Preset, ...errors },
      },
    },
    async (request) => createPreset(deps, principalOf(request), request.body),
  );
  app.put(
    '/delivery-presets/:id',
    {
      schema: {
        operationId: 'UpdateDeliveryPreset',
        tags,
        summary:
          'Change a delivery preset (Content Management); renditions made with its old parameters are not served for it again',
        params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
        body: PresetBody(false),
        response: { 200: Preset, ...errors },
      },
    },
    async (request) => updatePreset(deps, principalOf(request), request.params.id, request.body),
  );
  app.delete(
    '/delivery-presets/:id',
    {
      schema: {
        operationId: 'DeleteDeliveryPreset',
        tags,
        summary: 'Delete a delivery preset (Content Management)',
        params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
        response: { 200: Type.Object({ message: Type.String() }), ...errors },
      },
    },
    async (request) => deletePreset(deps, principalOf(request), request.params.id),
  );
}
