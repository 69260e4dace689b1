import { createServer, type Server } from 'node:http';
import { sql } from 'kysely';
import type { Deps } from './deps.ts';
import { scrapeAllowed } from './core/metrics.ts';

/**
 * `tessera worker` has no API listener; with TESSERA_METRICS_PORT set it serves, on HOST, what an
 * orchestrator and a scraper need: GET /healthz, GET /readyz (503 while stopping or when the database
 * does not answer) and GET /metrics (Bearer TESSERA_METRICS_TOKEN, as on the API).
 */
export async function startWorkerEndpoint(deps: Deps, port: number): Promise<Server> {
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(res, 405, { error: 'method_not_allowed' });
    if (path === '/healthz') return json(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      if (deps.lifecycle.draining) return json(res, 503, { error: 'service_unavailable', message: 'draining' });
      return void sql`select 1`.execute(deps.db).then(
        () => json(res, 200, { status: 'ok' }),
        () => json(res, 503, { error: 'service_unavailable', message: 'the database does not answer' }),
      );
    }
    if (path === '/metrics') {
      const token = deps.config.metricsToken;
      if (!deps.metrics || token === undefined)
        return json(res, 404, { error: 'not_found', message: 'Metrics are off: set TESSERA_METRICS_TOKEN' });
      if (!scrapeAllowed(token, req.headers.authorization)) {
        res.setHeader('www-authenticate', 'Bearer realm="metrics"');
        return json(res, 401, { error: 'unauthorized', message: 'Authorization: Bearer <TESSERA_METRICS_TOKEN>' });
      }
      return void deps.metrics.render().then(
        ({ contentType, body }) => {
          res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
          res.end(body);
        },
        () => json(res, 503, { error: 'service_unavailable', message: 'metrics could not be collected' }),
      );
    }
    json(res, 404, { error: 'not_found', message: `${path} not found` });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host: deps.config.host }, () => resolve());
  });
  return server;
}
