import { parseConfig, ConfigError, type Config } from './config.ts';
import { createDeps, type Deps } from './deps.ts';
import { buildApp } from './app.ts';
import { migrateToLatest } from './core/db/migrate.ts';
import { bootstrapFirstOrganization, organizationIds } from './features/identity/index.ts';
import { checkSecretKey, seedWebAppClients } from './features/auth/index.ts';
import {
  announceFirstRun,
  collectStartupGarbage,
  databaseError,
  listenError,
  prepareDataDir,
  probeListen,
  StartupError,
} from './startup.ts';
import { seedMissingOrganizations, seedOrganizationMetadata } from './features/metadata/index.ts';
import { startWorkers } from './workers.ts';
import { drain, trackInFlight } from './shutdown.ts';
import { sweepTemp } from './core/temp.ts';
import { analyzeTablesNeverAnalyzed } from './core/db/planner-stats.ts';
import { parseRole, RoleError } from './roles.ts';
import { startWorkerEndpoint } from './worker-endpoint.ts';
import { startSearchIndexWarmup } from './features/search/index.ts';

/** Temporary files a crashed earlier process left under `<data dir>/tmp` go at start (core/temp.ts). */
async function sweepLeftovers(deps: Deps): Promise<void> {
  try {
    const removed = await sweepTemp(deps.config.dataDir);
    if (removed.length > 0) deps.log.info({ removed }, 'removed temporary files left by stopped processes');
  } catch (error) {
    deps.log.warn({ err: error }, 'could not sweep temporary files');
  }
}

/** PostgreSQL planner statistics for tables that have none (a restored database): core/db/planner-stats.ts. */
function gatherPlannerStatistics(deps: Deps): void {
  void analyzeTablesNeverAnalyzed(deps.db, deps.engine).then(
    (tables) => {
      if (tables.length > 0)
        deps.log.info({ tables: tables.length }, 'planner statistics gathered for tables that had none');
    },
    (error: unknown) => deps.log.warn({ err: error }, 'could not gather planner statistics'),
  );
}

/** Connects and migrates; a database that cannot be reached or opened is a one-line StartupError. */
async function openDatabase(config: Config, role?: string): Promise<Deps> {
  let deps: Deps | undefined;
  try {
    deps = createDeps(config, { role });
    const applied = await migrateToLatest(deps.db);
    if (applied.length > 0) deps.log.info({ applied }, 'database migrated');
    const secret = await checkSecretKey(deps);
    if (!secret.ok) throw secretMismatch(config);
    if (secret.written) deps.log.info('secret key verifier recorded in the database');
    return deps;
  } catch (error) {
    await deps?.close().catch(() => {});
    throw databaseError(error, config) ?? error;
  }
}

/** Another process initialised this database with another secret: its tokens and sealed secrets would not verify here. */
function secretMismatch(config: Config): StartupError {
  const source = config.secretKey
    ? 'this TESSERA_SECRET_KEY'
    : `the secret in ${config.dataDir}/secret.key (TESSERA_SECRET_KEY is not set)`;
  const previous =
    config.previousSecretKeys.length > 0 ? ' (and so does every key in TESSERA_SECRET_KEY_PREVIOUS)' : '';
  return new StartupError(
    'TESSERA_SECRET_KEY',
    `${source}${previous} differs from the secret the database was initialised with (or last rotated to by tessera rotate-secrets); give every process the same TESSERA_SECRET_KEY`,
  );
}

/** `tessera serve [--no-workers]`: the API, and (by default) the background workers in the same process. */
async function serve(config: Config): Promise<void> {
  // Checked in the order a person would fix them, and before any first-run side effect.
  prepareDataDir(config.dataDir);
  await probeListen(config);
  const deps = await openDatabase(config, config.workers ? 'serve' : 'api');
  await sweepLeftovers(deps);
  gatherPlannerStatistics(deps);
  announceFirstRun(deps, await bootstrapFirstOrganization(deps, seedOrganizationMetadata));
  // Organizations made before metadata existed get its system group and Default template.
  await deps.db
    .transaction()
    .execute(async (trx) => seedMissingOrganizations(trx, deps.clock.now(), await organizationIds(trx)))
    .catch((error) => deps.log.warn({ err: error }, 'metadata seeding skipped'));
  // The web app's OAuth client (one row per organization; see features/auth/oauth/clients/web-app-client.ts).
  await seedWebAppClients(deps.db, deps.clock.now(), await organizationIds(deps.db)).catch((error) =>
    deps.log.warn({ err: error }, 'web app client seeding skipped'),
  );
  const app = await buildApp(deps);
  // SQLite: the in-memory search index is read from its snapshots before listening (about a second per
  // million assets); organizations without one are built in the background, answered the SQL way meanwhile.
  await startSearchIndexWarmup(deps).catch((error: unknown) =>
    deps.log.warn({ err: error }, 'search index warm-up failed'),
  );
  const worker = deps.config.workers ? startWorkers(deps) : undefined;
  try {
    await app.listen({ port: deps.config.port, host: deps.config.host });
  } catch (error) {
    await worker?.stop();
    await app.close();
    await deps.close();
    throw listenError(error, config) ?? error;
  }
  collectStartupGarbage(deps);
  const inFlight = trackInFlight(app);
  exitOnSignal(deps, (signal) => drain(deps, app, worker, inFlight, signal));
}

/**
 * `tessera worker [--concurrency N]`: jobs only (renditions, Actions, webhook delivery, the search indexer,
 * the audit sealer, the sweeps), no HTTP listener. Any number of workers and API processes may share one
 * database and one bucket: jobs are claimed with renewed leases (core/jobs/worker.ts). SIGTERM stops
 * claiming, gives running job steps TESSERA_DRAIN_TIMEOUT_MS, releases their leases and exits 0.
 */
async function work(config: Config): Promise<void> {
  prepareDataDir(config.dataDir);
  const deps = await openDatabase(config, 'worker');
  await sweepLeftovers(deps);
  gatherPlannerStatistics(deps);
  const worker = startWorkers(deps);
  const endpoint = config.metricsPort === undefined ? undefined : await startWorkerEndpoint(deps, config.metricsPort);
  const address = endpoint?.address();
  deps.log.info(
    { concurrency: config.jobs.concurrency, port: typeof address === 'object' ? address?.port : undefined },
    'worker started',
  );
  exitOnSignal(deps, async (signal) => {
    deps.log.info({ signal }, 'worker stopping');
    deps.lifecycle.draining = true;
    await worker.stop(deps.config.drainTimeoutMs);
    endpoint?.close();
    await deps.close();
    deps.log.info('worker stopped');
  });
}

/**
 * On the first SIGINT or SIGTERM, runs `stop` and exits 0. A stop that cannot end (a hook that never
 * settles) still ends the process, with 1, 15 s after the drain deadline.
 */
function exitOnSignal(deps: Deps, stop: (signal: string) => Promise<void>): void {
  let stopping = false;
  const handle = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const force = setTimeout(() => process.exit(1), deps.config.drainTimeoutMs + 15_000);
    force.unref();
    await stop(signal);
    process.exit(0);
  };
  process.once('SIGINT', () => void handle('SIGINT'));
  process.once('SIGTERM', () => void handle('SIGTERM'));
}

async function fileCommand(
  config: Config,
  command: 'backup' | 'restore' | 'migrate-to-postgres',
  args: string[],
): Promise<void> {
  const { backupCommand, migrateToPostgresCommand, restoreCommand, usage, UsageError } = await import('./cli.ts');
  const { BackupError } = await import('./core/backup/index.ts');
  try {
    if (command === 'backup' || command === 'migrate-to-postgres') {
      const { ok, text } =
        command === 'backup'
          ? await backupCommand(config, args)
          : await migrateToPostgresCommand(config, args, (line) => process.stderr.write(`${line}\n`));
      process.stdout.write(`${text}\n`);
      if (!ok) process.exitCode = 1;
    } else {
      process.stdout.write(`${await restoreCommand(config, args)}\n`);
    }
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${(error as Error).message}\n${usage()}\n`);
      process.exitCode = 2;
    } else if (error instanceof BackupError) {
      process.stderr.write(`tessera ${command}: ${error.message}\n`);
      process.exitCode = 1;
    } else {
      throw error;
    }
  }
}

async function main(argv: string[]): Promise<void> {
  let config: Config;
  try {
    config = parseConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const [command, sub, ...rest] = argv;
  // The command-line tools (and TypeBox's compiler with them) load only for a command, not with the server.
  const cli = () => import('./cli.ts');
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${(await cli()).usage()}\n`);
    return;
  }
  const known =
    command === 'serve' ||
    command === 'worker' ||
    command === 'edge' ||
    command === 'migrate' ||
    (command === 'org' && sub === 'create') ||
    (command === 'user' && (sub === 'create' || sub === 'reset-password')) ||
    (command === 'audit' && sub === 'verify') ||
    command === 'rotate-secrets' ||
    command === 'backup' ||
    command === 'restore' ||
    command === 'migrate-to-postgres';
  if (!known) {
    process.stderr.write(`Unknown command: ${argv.join(' ')}\n${(await cli()).usage()}\n`);
    process.exit(2);
  }
  // Files Tessera writes (database, secret key, first-run credentials, blobs) are for this user only.
  process.umask(0o077);
  if (command === 'serve' || command === 'worker') {
    try {
      const role = parseRole(command, argv.slice(1));
      if (role.kind === 'worker')
        return await work({ ...config, workers: true, jobs: { ...config.jobs, ...role.jobs } });
      return await serve(role.workers ? config : { ...config, workers: false });
    } catch (error) {
      if (error instanceof RoleError) {
        process.stderr.write(`${error.message}\n${(await cli()).usage()}\n`);
        process.exit(2);
      }
      if (!(error instanceof StartupError)) throw error;
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
  }
  // Backup and restore work on files, beside a serving process or before one: no migration, no deps.
  if (command === 'backup' || command === 'restore' || command === 'migrate-to-postgres')
    return fileCommand(config, command, argv.slice(1));
  let deps: Deps;
  try {
    prepareDataDir(config.dataDir);
    deps = await openDatabase(config, command === 'edge' ? 'edge' : 'cli');
  } catch (error) {
    if (!(error instanceof StartupError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  // The edge is its own program (src/edge/run.ts); its modules (sharp, lightningcss, esbuild, GeoIP) load only here.
  if (command === 'edge') {
    await sweepLeftovers(deps);
    return (await import('./edge/run.ts')).runEdge(deps);
  }
  const { auditVerify, orgCreate, rotateSecretsCommand, usage, UsageError, userCreate, userResetPassword } =
    await cli();
  try {
    if (command === 'migrate') process.stdout.write('Database is up to date\n');
    else if (command === 'rotate-secrets') {
      const { ok, text } = await rotateSecretsCommand(deps, argv.slice(1));
      process.stdout.write(`${text}\n`);
      if (!ok) process.exitCode = 1;
    } else if (command === 'org') process.stdout.write(`${await orgCreate(deps, rest)}\n`);
    else if (command === 'audit') {
      const { ok, text } = await auditVerify(deps, rest);
      process.stdout.write(`${text}\n`);
      if (!ok) process.exitCode = 1;
    } else if (sub === 'reset-password') process.stdout.write(`${await userResetPassword(deps, rest)}\n`);
    else process.stdout.write(`${await userCreate(deps, rest)}\n`);
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${(error as Error).message}\n${usage()}\n`);
      process.exitCode = 2;
    } else {
      throw error;
    }
  } finally {
    await deps.close();
  }
}

await main(process.argv.slice(2));
