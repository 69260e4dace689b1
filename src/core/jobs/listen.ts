import type pg from 'pg';

export const JOBS_CHANNEL = 'tessera_jobs';

/**
 * PostgreSQL: LISTENs on `tessera_jobs` (NOTIFYed at the commit of every statement that adds jobs,
 * migration 0050) and calls `wake` for each notification, so this process's workers claim a job
 * another process enqueued at once rather than at their next poll. One connection of its own,
 * reopened a second after it drops (the poll covers the gap); its socket never keeps a finished
 * process alive. Returns the function that stops listening.
 */
export function listenForJobs(url: string, wake: () => void): () => Promise<void> {
  let client: pg.Client | undefined;
  let closed = false;
  let retryTimer: NodeJS.Timeout | undefined;
  const connect = async () => {
    if (closed) return;
    const { default: pgModule } = await import('pg');
    const c = new pgModule.Client({ connectionString: url });
    client = c;
    const retry = () => {
      if (client !== c) return;
      client = undefined;
      c.removeAllListeners('notification');
      void c.end().catch(() => {});
      if (closed) return;
      retryTimer = setTimeout(() => void connect().then(wake), 1000);
      retryTimer.unref();
    };
    c.on('error', retry);
    c.on('end', retry);
    c.on('notification', (message) => {
      if (message.channel === JOBS_CHANNEL) wake();
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${JOBS_CHANNEL}`);
      (c as unknown as { connection?: { stream?: { unref?: () => void } } }).connection?.stream?.unref?.();
    } catch {
      retry();
    }
  };
  void connect();
  return async () => {
    closed = true;
    clearTimeout(retryTimer);
    const c = client;
    client = undefined;
    if (c) await c.end().catch(() => {});
  };
}
