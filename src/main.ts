import { parseConfig, ConfigError, type Config } from './config.ts';
import { createDeps, type Deps } from './deps.ts';
import { buildApp } from './app.ts';
import { migrateToLatest } from './core/db/migrate.ts';
import { bootstrapFirstOrganization } from './features/identity/index.ts';
import { seedMissingOrganizations } from './features/metadata/index.ts';
import { orgCreate, usage, UsageError, userCreate } from './cli.ts';
import { startWorkers } from './workers.ts';

async function serve(deps: Deps): Promise<void> {
  const applied = await migrateToLatest(deps.db);
  if (applied.length > 0) deps.log.info({ applied }, 'database migrated');
  const boot = await bootstrapFirstOrganization(deps);
  if (boot.created) {
    if (boot.generatedPassword) {
      deps.log.warn(
        { username: boot.username, organizationId: boot.orgId },
        `First start: created administrator "${boot.username}" with generated password ${boot.generatedPassword} (shown only this once; change it)`,
      );
    } else {
      deps.log.info({ username: boot.username, organizationId: boot.orgId }, 'First start: created the first organization and its administrator');
    }
  }
  // Organizations made before metadata existed get its system group and Default template.
  await deps.db.transaction().execute((trx) => seedMissingOrganizations(trx, deps.clock.now())).catch((error) => deps.log.warn({ err: error }, 'metadata seeding skipped'));
  const app = await buildApp(deps);
  const worker = deps.config.workers ? startWorkers(deps) : undefined;
  await app.listen({ port: deps.config.port, host: deps.config.host });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    deps.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    await app.close();
    await worker?.stop();
    await deps.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
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
  const [command = 'serve', sub, ...rest] = argv;
  if (command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${usage()}\n`);
    return;
  }
  const known = command === 'serve' || command === 'migrate' || (command === 'org' && sub === 'create') || (command === 'user' && sub === 'create');
  if (!known) {
    process.stderr.write(`Unknown command: ${argv.join(' ')}\n${usage()}\n`);
    process.exit(2);
  }
  const deps = createDeps(config);
  if (command === 'serve') return serve(deps);
  try {
    await migrateToLatest(deps.db);
    if (command === 'migrate') process.stdout.write('Database is up to date\n');
    else if (command === 'org') process.stdout.write(`${await orgCreate(deps, rest)}\n`);
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
