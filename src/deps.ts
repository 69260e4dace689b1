import { join } from 'node:path';
import type { Config } from './config.ts';
import { systemClock, type Clock } from './core/clock.ts';
import { connectDb, type Db, type Engine } from './core/db/connect.ts';
import { JobSignal } from './core/jobs/queue.ts';
import { createKeyring, loadSecret, type Keyring } from './core/keyring.ts';
import { createLog, type Log } from './core/log.ts';
import { createBlobStore, type BlobStore } from './core/storage/index.ts';

/** Everything a service needs from the outside world, built once by main.ts (or a test). */
export interface Deps {
  readonly config: Config;
  readonly db: Db;
  readonly engine: Engine;
  readonly blobs: BlobStore;
  readonly log: Log;
  readonly clock: Clock;
  readonly keys: Keyring;
  /** Wake this process's job workers after committing new jobs. */
  readonly jobs: JobSignal;
  close(): Promise<void>;
}

export interface DepsOverrides {
  clock?: Clock;
  log?: Log;
  poolSize?: number;
}

export function createDeps(config: Config, overrides: DepsOverrides = {}): Deps {
  const handle = connectDb(config.database, { poolSize: overrides.poolSize });
  const secret = loadSecret(config.secretKey, join(config.dataDir, 'secret.key'));
  return {
    config,
    db: handle.db,
    engine: handle.engine,
    blobs: createBlobStore(config.storage),
    log: overrides.log ?? createLog(config.logLevel),
    clock: overrides.clock ?? systemClock,
    keys: createKeyring(secret),
    jobs: new JobSignal(),
    close: () => handle.close(),
  };
}
