// A second Tessera instance in its own process on the test's database (test/helpers/instance-process.ts):
// for tests that show a change made through one instance reaching another.
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before } from 'node:test';
import { TEST_SECRET, type TestContext } from './context.ts';

export interface SecondInstance {
  url: string;
  child: ChildProcess;
  /** The instance's identity generation (core/db/revision.ts), asked over IPC. */
  generation(): Promise<number>;
}

export async function startSecondInstance(ctx: TestContext): Promise<SecondInstance> {
  const database = ctx.database.kind === 'postgres' ? ctx.database.url : `sqlite:${ctx.database.file}`;
  const child = spawn(process.execPath, ['test/helpers/instance-process.ts'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: {
      ...process.env, DATABASE_URL: database, TESSERA_DATA_DIR: ctx.dataDir, TESSERA_SECRET_KEY: TEST_SECRET, TESSERA_LOG_LEVEL: 'silent',
      TESSERA_PUBLIC_URL: ctx.config.publicUrl, TESSERA_WORKERS: 'false',
    },
  });
  const { port } = await new Promise<{ port: number }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { port: number }));
    child.once('exit', (code) => reject(new Error(`second instance exited (${code})`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    generation: () => new Promise((resolve) => {
      child.once('message', (m) => resolve((m as { generation: number }).generation));
      child.send('generation');
    }),
  };
}

/** For a suite: a second instance started before its tests and closed after them. */
export function secondInstanceForSuite(ctx: () => TestContext): () => SecondInstance {
  let other: SecondInstance | undefined;
  before(async () => {
    other = await startSecondInstance(ctx());
  });
  after(async () => {
    if (other) await stopSecondInstance(other);
  });
  return () => other!;
}

/**
 * Closes the instance, and returns once its process is gone, whatever state it is in: already
 * exited (its database dropped under it, say), deaf to IPC, or slow to close (killed after 10 s).
 */
async function stopSecondInstance(instance: SecondInstance): Promise<void> {
  const child = instance.child;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  if (child.connected) child.send('close');
  else child.kill();
  const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(kill);
}
