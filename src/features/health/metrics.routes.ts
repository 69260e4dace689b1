import { Type } from 'typebox';
import type { FastifyReply } from 'fastify';
import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { AppError } from '../../core/http/errors.ts';
import { errorResponses } from '../../core/http/responses.ts';
import { scrapeAllowed } from '../../core/metrics.ts';

/**
 * GET /metrics: this process's Prometheus metrics (core/metrics.ts). A scraper authenticates with
 * `Authorization: Bearer <TESSERA_METRICS_TOKEN>` (not a user's credentials: the numbers span every
 * organization). Without the setting the route is off: 404, as if it did not exist.
 */
export function metricsRoutes(app: App, deps: Deps): void {
  app.get(
    '/metrics',
    {
      config: { public: true },
      schema: {
        operationId: 'GetMetrics',
        tags: ['system'],
        summary: 'Prometheus metrics of this process (Bearer TESSERA_METRICS_TOKEN)',
        description:
          'Prometheus text exposition format 0.0.4: requests by route and status with latency histograms, the job queue by kind, webhook deliveries by outcome, database pool use, Node process metrics. Off (404) unless TESSERA_METRICS_TOKEN is set; the scraper sends it as `Authorization: Bearer <token>`. Series and labels: docs/operations.md › Metrics.',
        security: [{ bearerAuth: [] }],
        response: {
          200: {
            description: 'Prometheus text format',
            content: { 'text/plain': { schema: Type.String({ description: 'Prometheus exposition format 0.0.4' }) } },
          },
          ...errorResponses('unauthorized', 'not_found'),
        },
      },
    },
    async (request, reply) => {
      const metrics = deps.metrics;
      const token = deps.config.metricsToken;
      if (!metrics || token === undefined)
        throw new AppError('not_found', 'Metrics are off: set TESSERA_METRICS_TOKEN to turn GET /metrics on');
      if (!scrapeAllowed(token, request.headers.authorization)) {
        reply.header('www-authenticate', 'Bearer realm="metrics"');
        throw new AppError('unauthorized', 'GET /metrics needs Authorization: Bearer <TESSERA_METRICS_TOKEN>');
      }
      const { contentType, body } = await metrics.render();
      reply.header('content-type', contentType).header('cache-control', 'no-store');
      return (reply as FastifyReply).send(body);
    },
  );
}
