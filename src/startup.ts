import { accessSync, chmodSync, constants, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Config } from './config.ts';
import type { Deps } from './deps.ts';
import type { BootstrapResult } from './features/identity/index.ts';

/**
 * Start-up failures a person can fix: one line naming the cause and the setting, exit code 2, no
 * stack trace. Everything else is a bug and keeps its stack.
 */
export class StartupError extends Error {
  readonly setting: string;
  constructor(setting: string, problem: string) {
    super(`Cannot start: ${problem} (${setting})`);
    this.setting = setting;
  }
}

/** The data directory exists (made 0700 when new), is a directory, and this process can write in it. */
export function prepareDataDir(dir: string): void {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(dir).isDirectory();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new StartupError('TESSERA_DATA_DIR', `cannot read the data directory ${dir}: ${(error as Error).message}`);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (mkdirError) {
      throw new StartupError(
        'TESSERA_DATA_DIR',
        `cannot create the data directory ${dir}: ${(mkdirError as NodeJS.ErrnoException).code ?? (mkdirError as Error).message}`,
      );
    }
    return;
  }
  if (!isDirectory) throw new StartupError('TESSERA_DATA_DIR', `${dir} is not a directory`);
  // A real write, not access(2): root passes access checks on directories it still cannot write (read-only mounts, /proc).
  const probe = join(dir, `.tessera-write-check-${process.pid}`);
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
    writeFileSync(probe, '', { mode: 0o600 });
    rmSync(probe, { force: true });
  } catch (error) {
    throw new StartupError(
      'TESSERA_DATA_DIR',
      `the data directory ${dir} is not writable: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

/** Binds the configured address once and lets go, so a busy port or a bad HOST stops us before any first-run side effect. */
export async function probeListen(config: Config): Promise<void> {
  const server = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => resolve());
    });
  } catch (error) {
    throw listenError(error, config) ?? error;
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

export function listenError(error: unknown, config: Config): StartupError | undefined {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE')
    return new StartupError(
      'PORT',
      `port ${config.port} on ${config.host} is already in use; stop the other process or set PORT`,
    );
  if (code === 'EACCES')
    return new StartupError('PORT', `not allowed to listen on port ${config.port}; use a port above 1023 or set PORT`);
  if (code === 'EADDRNOTAVAIL') return new StartupError('HOST', `${config.host} is not an address of this machine`);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME')
    return new StartupError('HOST', `${config.host} does not resolve to an address`);
  if (code === 'EINVAL' || code === 'ERR_SOCKET_BAD_PORT')
    return new StartupError('HOST', `cannot listen on ${config.host}:${config.port}`);
  return undefined;
}

/** Maps a failure to reach or prepare the database to one line naming DATABASE_URL (the password is never shown). */
export function databaseError(error: unknown, config: Config): StartupError | undefined {
  const e = error as NodeJS.ErrnoException & { code?: string };
  const where = config.database.kind === 'postgres' ? redact(config.database.url) : config.database.file;
  const code = typeof e.code === 'string' ? e.code : '';
  const networkCodes = new Set([
    'ECONNREFUSED',
    'ENOTFOUND',
    'EAI_AGAIN',
    'ETIMEDOUT',
    'EHOSTUNREACH',
    'ECONNRESET',
    'ENETUNREACH',
  ]);
  if (networkCodes.has(code)) return new StartupError('DATABASE_URL', `cannot reach the database at ${where}: ${code}`);
  if (config.database.kind === 'postgres' && /^(28|3D|08|42501)/.test(code))
    return new StartupError('DATABASE_URL', `the database at ${where} refused us: ${e.message}`);
  if (
    config.database.kind === 'sqlite' &&
    (code.startsWith('SQLITE_CANTOPEN') ||
      code === 'SQLITE_READONLY' ||
      code === 'SQLITE_NOTADB' ||
      code === 'EACCES' ||
      code === 'ENOTDIR')
  ) {
    return new StartupError('DATABASE_URL', `cannot open the SQLite database ${where}: ${e.message}`);
  }
  return undefined;
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'DATABASE_URL';
  }
}

export const FIRST_RUN_FILE = 'first-run-credentials.txt';

/**
 * Shows the first administrator's credentials whatever the log level: on stderr, and (when the
 * password was generated) in a 0600 file in the data directory that the log names.
 */
export function announceFirstRun(deps: Deps, boot: BootstrapResult): void {
  if (!boot.created) return;
  const fields = { username: boot.username, organizationId: boot.orgId };
  if (!boot.generatedPassword) {
    process.stderr.write(
      `First start: created the first organization and its administrator "${boot.username}" (password from TESSERA_ADMIN_PASSWORD)\n`,
    );
    deps.log.info(fields, 'First start: created the first organization and its administrator');
    return;
  }
  const file = join(deps.config.dataDir, FIRST_RUN_FILE);
  writeFileSync(
    file,
    `# Tessera first-run administrator. Sign in, change the password, then delete this file.\nusername=${boot.username}\npassword=${boot.generatedPassword}\nurl=${deps.config.publicUrl}\n`,
    { mode: 0o600 },
  );
  chmodSync(file, 0o600);
  process.stderr.write(
    `\nFirst start: created administrator "${boot.username}" with generated password ${boot.generatedPassword}\n` +
      `It is shown only this once and saved to ${file} (readable only by this user): sign in, change it, delete the file.\n` +
      `Lost it? Run: npx tessera user reset-password --username ${boot.username}\n\n`,
  );
  deps.log.warn(
    { ...fields, credentialsFile: file },
    `First start: created administrator "${boot.username}"; credentials saved to ${file}`,
  );
}

/**
 * One full garbage collection a second after the server listens. An idle server allocates too
 * little to ever trigger a major collection, so what start-up left behind (migrations, the first
 * organization and its seeding, every route registered) is otherwise carried, with the memory V8
 * and malloc hold for it, for the life of the process. `npm run bench -- memory`, idle RSS 10 s
 * after start: SQLite 116–121 MiB without it, 110–111 with it; PostgreSQL 113–115 and 106–108.
 * `gc` is taken from a fresh context after turning on `--expose-gc`, so it never becomes a global
 * of the application's own.
 */
export function collectStartupGarbage(deps: Pick<Deps, 'log'>, delayMs = 1000): void {
  setTimeout(() => {
    try {
      setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc') as () => void;
      const before = process.memoryUsage();
      gc();
      const after = process.memoryUsage();
      const mib = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;
      deps.log.debug(
        {
          heapUsedMiB: [mib(before.heapUsed), mib(after.heapUsed)],
          heapTotalMiB: [mib(before.heapTotal), mib(after.heapTotal)],
          rssMiB: [mib(before.rss), mib(after.rss)],
        },
        'start-up garbage collected',
      );
    } catch (error) {
      deps.log.debug({ err: error }, 'start-up garbage collection not available');
    }
  }, delayMs).unref();
}
