import { spawn, type ChildProcess } from 'node:child_process';
import type { TestContext } from './context.ts';
import { TEST_SECRET } from './context.ts';
import { stopProcess } from './processes.ts';

/** A real `node src/main.ts <role> …` process on the test context's database and data directory. */
export interface TesseraProcess {
  readonly child: ChildProcess;
  /** Everything it printed so far (JSON log lines on stdout, errors on stderr). */
  output(): string;
  /** Waits until its output matches `pattern` (or it exits, which fails). */
  waitFor(pattern: RegExp, ms?: number): Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after the grace; resolves when it is gone. */
  stop(graceMs?: number): Promise<void>;
}

/** The environment `tessera` reads, pointing at the context's database (and blob store: local disk under its data dir). */
export function tesseraEnv(ctx: TestContext, extra: Record<string, string> = {}): Record<string, string> {
  const database = ctx.database;
  return {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: database.kind === 'postgres' ? database.url : `sqlite:${database.file}`,
    TESSERA_DATA_DIR: ctx.dataDir,
    HOST: '127.0.0.1',
    TESSERA_SECRET_KEY: TEST_SECRET,
    TESSERA_LOG_LEVEL: 'info',
    TESSERA_ALLOW_PRIVATE_TARGETS: 'true',
    // Every process of one installation names the same public address (it is the tokens' issuer).
    TESSERA_PUBLIC_URL: ctx.config.publicUrl,
    ...extra,
  };
}

export function spawnTessera(args: string[], env: Record<string, string>): TesseraProcess {
  const child = spawn(process.execPath, ['src/main.ts', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer) => {
    out += chunk.toString('utf8');
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  void exited.then(() => {
    for (const listener of listeners) listener();
  });
  return {
    child,
    output: () => out,
    exited,
    waitFor(pattern, ms = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(out);
          if (match) {
            done();
            resolve(match);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            done();
            reject(
              new Error(
                `tessera ${args.join(' ')} exited (${child.exitCode ?? child.signalCode}) before ${pattern}:\n${out}`,
              ),
            );
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`timed out waiting for ${pattern} from tessera ${args.join(' ')}:\n${out}`));
        }, ms);
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
    stop: (graceMs = 30_000) => stopProcess(child, undefined, graceMs),
  };
}
