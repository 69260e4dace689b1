import { Type } from 'typebox';
import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { principalOf } from '../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../core/http/responses.ts';
import {
  ConfigurePatchSchema,
  ConfigureSchema,
  EdgeListSchema,
  PublishSchema,
  PurgeResultSchema,
  PurgeSchema,
  SignedUrlSchema,
  SignUrlSchema,
  StatsQuerySchema,
  StatsSchema,
  SuccessSchema,
  ZoneCreateSchema,
  ZoneIdParamsSchema,
  ZoneListSchema,
  ZoneSchema,
  ZoneUpdateSchema,
} from './cdn.schemas.ts';
import {
  configurePatch,
  createZone,
  deleteZone,
  getZone,
  listEdges,
  listZones,
  publishAssets,
  purgeZone,
  signUrl,
  updateZone,
} from './cdn.service.ts';
import { statsDashboard, zoneStats } from './stats.service.ts';

const tags = ['cdn'];
const NoContent = Type.Null({ description: 'Done' });
const errors = (...extra: Parameters<typeof errorResponses>) =>
  errorResponses(...AUTHENTICATED_ERRORS, 'forbidden', ...extra);

/** Pull zones (reference §16 plus Tessera's fuller zone API). Registered under /v1. */
export function cdnRoutes(app: App, deps: Deps): void {
  app.addSchema(ZoneSchema);
  const zoneRef = Type.Ref('CdnPullZone');

  // Reference §16.1
  app.post(
    '/cdn/configure',
    {
      schema: {
        operationId: 'cdnConfigure',
        tags,
        summary: 'Create a CDN pull zone (reference shape: name, region, url)',
        body: ConfigureSchema,
        response: { 200: zoneRef, ...errors('validation_failed', 'conflict') },
      },
    },
    async (request) => createZone(deps, principalOf(request), request.body),
  );

  app.patch(
    '/cdn/configure',
    {
      schema: {
        operationId: 'editCdnConfiguration',
        tags,
        summary: 'Update a pull zone (the one named by id, or the only one)',
        body: ConfigurePatchSchema,
        response: { 204: NoContent, ...errors('validation_failed', 'not_found', 'conflict') },
      },
    },
    async (request, reply) => {
      await configurePatch(deps, principalOf(request), request.body);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/cdn/publish',
    {
      schema: {
        operationId: 'cdnPublish',
        tags,
        summary: 'Publish assets to an asset-origin pull zone (only published assets are served)',
        body: PublishSchema,
        response: { 200: SuccessSchema, ...errors('validation_failed', 'not_found', 'conflict') },
      },
    },
    async (request) => publishAssets(deps, principalOf(request), request.body, true),
  );

  app.post(
    '/cdn/unpublish',
    {
      schema: {
        operationId: 'cdnUnpublish',
        tags,
        summary: 'Unpublish assets: purged from every edge and no longer served',
        body: PublishSchema,
        response: { 200: SuccessSchema, ...errors('validation_failed', 'not_found') },
      },
    },
    async (request) => publishAssets(deps, principalOf(request), request.body, false),
  );

  app.get(
    '/cdn/pullzone/stats/:pullZoneId',
    {
      schema: {
        operationId: 'getPullZoneStats',
        tags,
        summary: 'Pull zone statistics (reference §16.2 totals plus hourly series and countries)',
        params: Type.Object({ pullZoneId: Type.Integer({ minimum: 1, description: 'Pull zone id' }) }),
        querystring: StatsQuerySchema,
        response: { 200: StatsSchema, ...errors('validation_failed', 'not_found') },
      },
    },
    async (request) => zoneStats(deps, principalOf(request), request.params.pullZoneId, request.query),
  );

  // Tessera's zone API
  app.post(
    '/cdn/pullzones',
    {
      schema: {
        operationId: 'createPullZone',
        tags,
        summary: 'Create a pull zone',
        body: ZoneCreateSchema,
        response: { 201: zoneRef, ...errors('validation_failed', 'conflict') },
      },
    },
    async (request, reply) => reply.code(201).send(await createZone(deps, principalOf(request), request.body)),
  );

  app.get(
    '/cdn/pullzones',
    {
      schema: {
        operationId: 'listPullZones',
        tags,
        summary: "The organization's pull zones",
        response: { 200: ZoneListSchema, ...errors() },
      },
    },
    async (request) => listZones(deps, principalOf(request)),
  );

  app.get(
    '/cdn/pullzones/:id',
    {
      schema: {
        operationId: 'getPullZone',
        tags,
        summary: 'One pull zone',
        params: ZoneIdParamsSchema,
        response: { 200: zoneRef, ...errors('not_found') },
      },
    },
    async (request) => getZone(deps, principalOf(request), request.params.id),
  );

  app.patch(
    '/cdn/pullzones/:id',
    {
      schema: {
        operationId: 'editPullZone',
        tags,
        summary: 'Update a pull zone (edges reload it before this returns)',
        params: ZoneIdParamsSchema,
        body: ZoneUpdateSchema,
        response: { 200: zoneRef, ...errors('validation_failed', 'not_found', 'conflict') },
      },
    },
    async (request) => updateZone(deps, principalOf(request), request.params.id, request.body),
  );

  app.delete(
    '/cdn/pullzones/:id',
    {
      schema: {
        operationId: 'deletePullZone',
        tags,
        summary: 'Delete a pull zone (purged from every edge)',
        params: ZoneIdParamsSchema,
        response: { 204: NoContent, ...errors('not_found') },
      },
    },
    async (request, reply) => {
      await deleteZone(deps, principalOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/cdn/pullzones/:id/purge',
    {
      schema: {
        operationId: 'purgePullZoneCache',
        tags,
        summary: 'Purge by URL, prefix, tag or everything; applied on every edge before this returns',
        params: ZoneIdParamsSchema,
        body: PurgeSchema,
        response: { 200: PurgeResultSchema, ...errors('validation_failed', 'not_found') },
      },
    },
    async (request) => purgeZone(deps, principalOf(request), request.params.id, request.body),
  );

  app.get(
    '/cdn/pullzones/:id/stats',
    {
      schema: {
        operationId: 'getPullZoneStatistics',
        tags,
        summary: 'Pull zone statistics (same as /cdn/pullzone/stats/{id})',
        params: ZoneIdParamsSchema,
        querystring: StatsQuerySchema,
        response: { 200: StatsSchema, ...errors('validation_failed', 'not_found') },
      },
    },
    async (request) => zoneStats(deps, principalOf(request), request.params.id, request.query),
  );

  app.get(
    '/cdn/pullzones/:id/dashboard',
    {
      schema: {
        operationId: 'getPullZoneDashboard',
        tags,
        summary: 'Statistics as a small HTML page with an hourly chart',
        params: ZoneIdParamsSchema,
        querystring: StatsQuerySchema,
        response: { 200: Type.String({ description: 'text/html' }), ...errors('validation_failed', 'not_found') },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const zone = await getZone(deps, principal, request.params.id);
      const stats = await zoneStats(deps, principal, request.params.id, request.query);
      return reply.type('text/html; charset=utf-8').send(statsDashboard(zone.name, stats));
    },
  );

  app.post(
    '/cdn/pullzones/:id/sign',
    {
      schema: {
        operationId: 'signPullZoneUrl',
        tags,
        summary: 'A signed URL for a zone with token authentication',
        params: ZoneIdParamsSchema,
        body: SignUrlSchema,
        response: { 200: SignedUrlSchema, ...errors('validation_failed', 'not_found') },
      },
    },
    async (request) => signUrl(deps, principalOf(request), request.params.id, request.body),
  );

  app.get(
    '/cdn/edges',
    {
      schema: {
        operationId: 'listCdnEdges',
        tags,
        summary: 'Edge processes currently registered',
        response: { 200: EdgeListSchema, ...errors() },
      },
    },
    async (request) => listEdges(deps, principalOf(request)),
  );
}
