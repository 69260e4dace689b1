import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import type { EdgeConfig } from '../../src/config.ts';
import { createLog } from '../../src/core/log.ts';
import { Edge } from '../../src/edge/edge.ts';
import { deliveringAssetOrigin } from '../../src/features/cdn/index.ts';
import { json, TEST_SECRET, type TestContext } from './context.ts';
import { freePort } from './net.ts';
import type { TestOrg } from './factories.ts';

/** A real HTTP origin on loopback whose answers a test sets per path; counts requests per path. */
export class TestOrigin {
  readonly hits = new Map<string, number>();
  readonly requests: { url: string; headers: IncomingMessage['headers'] }[] = [];
  routes = new Map<string, (req: IncomingMessage, res: ServerResponse) => unknown>();
  private server: Server | undefined;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0]!;
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
      this.requests.push({ url: req.url ?? '/', headers: req.headers });
      const route = this.routes.get(path);
      if (!route) {
        res.writeHead(404, { 'content-type': 'text/plain', 'cache-control': 'max-age=60' }).end('not found');
        return;
      }
      void Promise.resolve(route(req, res)).catch(() => res.destroy());
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Serve `body` at `path` with these headers. */
  set(path: string, body: string | Buffer, headers: Record<string, string> = {}): void {
    this.routes.set(path, (_req, res) => {
      res
        .writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body), ...headers })
        .end(body);
    });
  }

  count(path: string): number {
    return this.hits.get(path) ?? 0;
  }

  async close(): Promise<void> {
    await new Promise<void>((r) => {
      this.server?.close(() => r());
      this.server?.closeAllConnections();
    });
  }
}

export function edgeConfig(ctx: TestContext, overrides: Partial<EdgeConfig> = {}): EdgeConfig {
  return {
    port: 0,
    host: '127.0.0.1',
    region: 'de',
    cacheDir: join(ctx.dataDir, 'edge-cache'),
    cacheMaxBytes: 64 * 1024 * 1024,
    memoryMaxBytes: 32 * 1024 * 1024,
    maxObjectBytes: 16 * 1024 * 1024,
    controlHost: '127.0.0.1',
    controlPort: 0,
    controlUrl: undefined,
    heartbeatMs: 60_000,
    trustedProxies: ['loopback'],
    workers: 1,
    cpuAffinity: 'off',
    geoipDb: undefined,
    http: { headersTimeoutMs: 20_000, requestTimeoutMs: 60_000, idleTimeoutMs: 65_000 },
    ...overrides,
  };
}

/** An edge server in this process (real HTTP on loopback), on the test context's database. */
export async function startEdge(
  ctx: TestContext,
  overrides: Partial<EdgeConfig> = {},
): Promise<{ edge: Edge; url: string; close(): Promise<void> }> {
  const edge = new Edge({
    config: edgeConfig(ctx, overrides),
    db: ctx.deps.db,
    keys: ctx.deps.keys,
    log: createLog('silent'),
    allowPrivateTargets: true,
    assetOrigin: deliveringAssetOrigin(ctx.deps),
    metrics:
      ctx.deps.metrics && ctx.config.metricsToken !== undefined
        ? { metrics: ctx.deps.metrics, token: ctx.config.metricsToken }
        : undefined,
  });
  const { port } = await edge.start();
  return { edge, url: `http://127.0.0.1:${port}`, close: () => edge.stop() };
}

/** A short random suffix for names that must not collide between tests. */
export const unique = () => Math.random().toString(36).slice(2, 10);

/** Creates a pull zone of `org` in front of `origin` through the API (201), with any extra fields. */
export async function makeZone(
  ctx: TestContext,
  org: TestOrg,
  origin: TestOrigin,
  fields: Record<string, unknown> = {},
) {
  const res = await ctx.inject({
    method: 'POST',
    url: '/v1/cdn/pullzones',
    headers: org.admin.headers,
    payload: { name: `z-${unique()}`, originUrl: origin.url, ...fields },
  });
  assert.equal(res.statusCode, 201, res.body);
  return json(res);
}

/** `tessera edge` as a separate OS process on the test database; resolves when it listens. */
export async function spawnEdge(
  ctx: TestContext,
  name: string,
  env: Record<string, string> = {},
  workers = 1,
): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['src/main.ts', 'edge'], {
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    env: {
      ...process.env,
      TESSERA_DATA_DIR: ctx.dataDir,
      TESSERA_SECRET_KEY: TEST_SECRET,
      TESSERA_LOG_LEVEL: 'error',
      TESSERA_ALLOW_PRIVATE_TARGETS: 'true',
      DATABASE_URL: ctx.database.kind === 'postgres' ? ctx.database.url : `sqlite:${ctx.database.file}`,
      EDGE_PORT: String(port),
      EDGE_HOST: '127.0.0.1',
      EDGE_CACHE_DIR: join(ctx.dataDir, `edge-${name}`),
      EDGE_HEARTBEAT_MS: '500',
      ...env,
    },
  });
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  await new Promise<void>((resolve, reject) => {
    // A slow start must not leave an orphan edge holding this test process open.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`edge ${name} did not start: ${stderr}`));
    }, 60_000);
    let ready = 0;
    child.on('message', (m: { type?: string }) => {
      if (m.type === 'edge-ready' && ++ready === workers) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`edge ${name} exited ${code}: ${stderr}`));
    });
  });
  return { url: `http://127.0.0.1:${port}`, child };
}
