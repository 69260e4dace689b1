import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildApp, type BuildAppOptions } from '../../src/app.ts';
import { parseConfig, type Config } from '../../src/config.ts';
import { createDeps, type Deps } from '../../src/deps.ts';
import { ManualClock, systemClock, type Clock } from '../../src/core/clock.ts';
import { migrateToLatest } from '../../src/core/db/migrate.ts';
import type { App } from '../../src/core/http/app-types.ts';
import { createLog } from '../../src/core/log.ts';
import { copyMigratedSqlite, createPgDatabase, engines, type EngineName } from './engines.ts';
import { testResolver } from './credentials.ts';
import { recordingChecker } from './openapi-check.ts';

export interface TestContext {
  engine: EngineName;
  app: App;
  deps: Deps;
  clock: ManualClock;
  dataDir: string;
  /** Connection settings of this context's database, to start a second instance on it. */
  database: Config['database'];
  config: Config;
  /** A second app instance on the same database (for cross-instance behaviour). */
  secondInstance(): Promise<{ app: App; deps: Deps; close(): Promise<void> }>;
  inject(options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface InjectOptions {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE' | 'HEAD' | 'OPTIONS';
  url: string;
  headers?: Record<string, string>;
  payload?: unknown;
  body?: unknown;
}

export interface ContextOptions {
  env?: Record<string, string>;
  /** Start time of the manual clock (defaults to now). */
  now?: number;
  /** Use the real clock instead of a manual one. */
  realClock?: boolean;
  appOptions?: BuildAppOptions;
  /** Where the log goes (with TESSERA_LOG_LEVEL in env): a test reading log lines passes a stream. */
  logTo?: NodeJS.WritableStream;
}

/** Which engines run here, decided once per test process (PostgreSQL may be skipped with a reason). */
export const ENGINES = await engines();

export const TEST_SECRET = 'test-secret-key-for-tessera-0123456789abcdef';

/** A fresh database (SQLite file or PostgreSQL database), migrated, with an app built on it. */
export async function createTestContext(engine: EngineName, options: ContextOptions = {}): Promise<TestContext> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tessera-test-'));
  const pgDb = engine === 'postgres' ? await createPgDatabase({ migrated: true }) : undefined;
  const config = parseConfig({
    TESSERA_DATA_DIR: dataDir,
    TESSERA_LOG_LEVEL: process.env.TESSERA_TEST_LOG_LEVEL ?? 'silent',
    TESSERA_SECRET_KEY: TEST_SECRET,
    TESSERA_ALLOW_PRIVATE_TARGETS: 'true',
    // A second instance here (secondInstance) shares this process's one thread: when it waits for SQLite's write
    // lock, synchronously, the instance holding the lock cannot run to release it, so every such wait lasts the
    // whole busy timeout (10 s by default) and ends in SQLITE_BUSY. Between processes the default stands.
    TESSERA_SQLITE_BUSY_TIMEOUT_MS: '500',
    ...(pgDb ? { DATABASE_URL: pgDb.url } : {}),
    ...options.env,
  });
  if (config.database.kind === 'sqlite' && config.database.file !== ':memory:' && !existsSync(config.database.file)) {
    await copyMigratedSqlite(config.database.file);
  }
  const clock = new ManualClock(options.now ?? Date.now());
  const useClock: Clock = options.realClock ? systemClock : clock;
  const make = async () => {
    const deps = createDeps(config, { clock: useClock, log: createLog(config.logLevel, options.logTo), poolSize: 5 });
    await migrateToLatest(deps.db);
    const app = await buildApp(deps, {
      ...options.appOptions,
      extraResolvers: [testResolver(deps), ...(options.appOptions?.extraResolvers ?? [])],
    });
    return {
      app,
      deps,
      close: async () => {
        await app.close();
        await deps.close();
      },
    };
  };
  const main = await make();
  // TESSERA_TEST_CHECK_RESPONSES=<file>: every answer checked against /openapi.json, problems appended to the file.
  const checkFile = process.env.TESSERA_TEST_CHECK_RESPONSES;
  let checker: ReturnType<typeof recordingChecker> | undefined;
  const extra: { close(): Promise<void> }[] = [];
  return {
    engine,
    app: main.app,
    deps: main.deps,
    clock,
    dataDir,
    database: config.database,
    config,
    async secondInstance() {
      const instance = await make();
      extra.push(instance);
      return instance;
    },
    async inject(request) {
      const res = await main.app.inject({
        method: request.method,
        url: request.url,
        headers: request.headers,
        payload: (request.payload ?? request.body) as string | object | undefined,
      });
      if (checkFile && request.url !== '/openapi.json' && request.method !== 'HEAD' && request.method !== 'OPTIONS') {
        checker ??= recordingChecker(
          (await main.app.inject({ method: 'GET', url: '/openapi.json' })).json(),
          checkFile,
        );
        checker(request.method, request.url, res);
      }
      return res;
    },
    async close() {
      for (const instance of extra) await instance.close();
      await main.close();
      await pgDb?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Runs a suite once per database engine, each with its own fresh database and app. PostgreSQL
 * is reported as skipped, with the reason, where it is not reachable (never in CI).
 */
export function forEachEngine(
  title: string,
  body: (ctx: () => TestContext) => void,
  options: ContextOptions = {},
): void {
  for (const engine of ENGINES) {
    describe(`${title} [${engine.name}]`, { skip: engine.skip }, () => {
      let ctx: TestContext | undefined;
      before(async () => {
        ctx = await createTestContext(engine.name, options);
      });
      after(async () => {
        await ctx?.close();
      });
      body(() => {
        if (!ctx) throw new Error('test context not ready');
        return ctx;
      });
    });
  }
}

export function json<T = any>(response: LightMyRequestResponse): T {
  return response.json() as T;
}
