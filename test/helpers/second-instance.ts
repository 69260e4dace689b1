// A second Tessera instance in its own process on the test's database (test/helpers/instance-process.ts):
// for tests that show a change made through one instance reaching another.
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before } from 'node:test';
import { TEST_SECRET, type TestContext } from './context.ts';
import { stopProcess } from './processes.ts';

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
      ...process.env,
      DATABASE_URL: database,
      TESSERA_DATA_DIR: ctx.dataDir,
      TESSERA_SECRET_KEY: TEST_SECRET,
      TESSERA_LOG_LEVEL: 'silent',
      TESSERA_PUBLIC_URL: ctx.config.publicUrl,
      TESSERA_WORKERS: 'false',
    },
  });
  const { port } = await new Promise<{ port: number }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { port: number }));
    child.once('exit', (code) => reject(new Error(`second instance exited (${code})`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    generation: () =>
      new Promise((resolve) => {
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

/** Closes the instance over IPC (killed if it cannot hear it, or after 10 s), once its process is gone. */
async function stopSecondInstance(instance: SecondInstance): Promise<void> {
  const child = instance.child;
  await stopProcess(child, () => (child.connected ? child.send('close') : child.kill()));
}
