import { join } from 'node:path';
import type { Config } from './config.ts';
import { systemClock, type Clock } from './core/clock.ts';
import { connectDb, type Db, type Engine } from './core/db/connect.ts';
import { JobSignal } from './core/jobs/queue.ts';
import { createKeyring, loadSecret, type Keyring } from './core/keyring.ts';
import { createLog, type Log } from './core/log.ts';
import { createBlobStore, type BlobStore } from './core/storage/index.ts';
import { createRuntime, type Runtime } from './runtime.ts';
import { createTempFiles, type TempFiles } from './core/temp.ts';
import { Lifecycle } from './core/lifecycle.ts';
import { createMetrics, type Metrics } from './core/metrics.ts';
import { collectJobQueue } from './core/jobs/queue-metrics.ts';
import { createTracing, type Tracing } from './core/tracing.ts';

/** Everything a service needs from the outside world, built once by main.ts (or a test). */
export interface Deps {
  readonly config: Config;
  readonly db: Db;
  readonly engine: Engine;
  readonly blobs: BlobStore;
  readonly log: Log;
  readonly clock: Clock;
  readonly keys: Keyring;
  /** This process's temporary files, under `<data dir>/tmp` (core/temp.ts); removed on close. */
  readonly temp: TempFiles;
  /** Draining after SIGTERM (core/lifecycle.ts, src/shutdown.ts). */
  readonly lifecycle: Lifecycle;
  /** Wake this process's job workers after committing new jobs. */
  readonly jobs: JobSignal;
  /** Prometheus metrics (core/metrics.ts), kept only when TESSERA_METRICS_TOKEN turns /metrics on. */
  readonly metrics: Metrics | undefined;
  /** OpenTelemetry traces (core/tracing.ts), only when an OTLP endpoint is configured. */
  readonly tracing: Tracing | undefined;
  /** This process's long-lived state (caches, batched writers), by feature: see src/runtime.ts. */
  readonly runtime: Runtime;
  /** Closes the runtime (writing what it batched), then the database. */
  close(): Promise<void>;
}

export interface DepsOverrides {
  clock?: Clock;
  log?: Log;
  poolSize?: number;
  /** The process role named on the metrics (serve, api, worker): src/roles.ts. */
  role?: string;
}

export function createDeps(config: Config, overrides: DepsOverrides = {}): Deps {
  const handle = connectDb(config.database, { poolSize: overrides.poolSize, timeouts: config.databaseTimeouts });
  const secret = loadSecret(config.secretKey, join(config.dataDir, 'secret.key'));
  const temp = createTempFiles(config.dataDir);
  const deps: { -readonly [K in keyof Deps]: Deps[K] } = {
    config,
    db: handle.db,
    engine: handle.engine,
    blobs: createBlobStore(config.storage, () => temp.mkdtemp('s3-')),
    log: overrides.log ?? createLog(config.logLevel),
    clock: overrides.clock ?? systemClock,
    keys: createKeyring(secret, config.previousSecretKeys),
    temp,
    lifecycle: new Lifecycle(),
    jobs: new JobSignal(),
    metrics: config.metricsToken === undefined ? undefined : createMetrics(overrides.role ?? 'serve'),
    tracing: config.tracing === undefined ? undefined : createTracing(config.tracing, overrides.role ?? 'serve'),
    runtime: undefined as unknown as Runtime,
    close: async () => {
      try {
        await runtime.close();
      } finally {
        await deps.tracing?.shutdown().catch(() => {});
        await handle.close();
        await temp.close().catch(() => {});
      }
    },
  };
  if (deps.metrics) {
    const { gauges } = deps.metrics;
    deps.metrics.onScrape(() => collectJobQueue(handle.db, deps.clock.now(), gauges.jobs, gauges.jobOldestAge));
    deps.metrics.onScrape(() => {
      const pool = handle.pool();
      gauges.dbPool.set({ state: 'total' }, pool.total);
      gauges.dbPool.set({ state: 'idle' }, pool.idle);
      gauges.dbPool.set({ state: 'waiting' }, pool.waiting);
    });
  }
  // Built from the rest of deps (its factories keep the reference), then attached.
  const runtime = createRuntime(deps);
  deps.runtime = runtime;
  return deps;
}
