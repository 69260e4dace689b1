import { randomBytes } from 'node:crypto';
import { rm, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import { Type } from 'typebox';
import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { AppError } from '../../core/http/errors.ts';
import { errorResponses } from '../../core/http/responses.ts';

const LiveSchema = Type.Object({ status: Type.Literal('ok') });
const ReadySchema = Type.Object({
  status: Type.Literal('ok'),
  checks: Type.Object({
    database: Type.Literal('ok'),
    storage: Type.Literal('ok'),
    disk_writable: Type.Literal('ok'),
    disk_space: Type.Literal('ok'),
  }),
});

export function healthRoutes(app: App, deps: Deps): void {
  app.get(
    '/healthz',
    {
      config: { public: true },
      schema: {
        operationId: 'GetLiveness',
        tags: ['system'],
        summary: 'Liveness: the process answers',
        security: [],
        response: { 200: LiveSchema },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      config: { public: true },
      schema: {
        operationId: 'GetReadiness',
        tags: ['system'],
        summary: 'Readiness: the database and the blob storage answer, the local disk is writable and not full',
        description:
          'A 503 names each failed check in `details` (`field` is `checks.<name>`: draining, database, storage, disk_writable, disk_space).',
        security: [],
        response: { 200: ReadySchema, ...errorResponses('service_unavailable') },
      },
    },
    async () => {
      // SIGTERM: unready at once, before any other check (src/shutdown.ts).
      if (deps.lifecycle.draining)
        throw new AppError('service_unavailable', 'Not ready: draining (the process is stopping)', {
          details: [{ field: 'checks.draining', message: 'the process is stopping' }],
        });
      const failed: { check: string; why: string }[] = [];
      await withTimeout(sql`select 1`.execute(deps.db), 2000).catch(() =>
        failed.push({ check: 'database', why: 'the database does not answer' }),
      );
      await withTimeout(deps.blobs.ping(), 2000).catch(() =>
        failed.push({ check: 'storage', why: 'the blob storage does not answer' }),
      );
      failed.push(
        ...(await withTimeout(diskChecks(deps), 2000).catch(() => [
          { check: 'disk_writable', why: 'the disk does not answer' },
        ])),
      );
      if (failed.length > 0)
        throw new AppError(
          'service_unavailable',
          `Not ready: ${failed.map((f) => `${f.check} (${f.why})`).join(', ')}`,
          {
            details: failed.map((f) => ({ field: `checks.${f.check}`, message: f.why })),
          },
        );
      return {
        status: 'ok' as const,
        checks: { database: 'ok', storage: 'ok', disk_writable: 'ok', disk_space: 'ok' } as const,
      };
    },
  );
}

/**
 * The directories this process writes on its own disk — the data directory (SQLite, temporary
 * files) and the local blob directory — take a real write (root passes permission checks on a
 * read-only mount) and keep at least TESSERA_READY_MIN_FREE_BYTES free. A full disk makes every
 * write fail, so a load balancer should send the requests elsewhere.
 */
async function diskChecks(deps: Deps): Promise<{ check: string; why: string }[]> {
  // Named, not shown: /readyz is public, the paths are not for everyone.
  const dirs: [string, string][] = [['the data directory', deps.config.dataDir]];
  if (deps.config.storage.kind === 'local' && deps.config.storage.dir !== deps.config.dataDir)
    dirs.push(['the blob directory', deps.config.storage.dir]);
  const failed: { check: string; why: string }[] = [];
  for (const [name, dir] of dirs) {
    const probe = join(dir, `.tessera-ready-${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      await writeFile(probe, 'ready', { mode: 0o600 });
    } catch (error) {
      failed.push({
        check: 'disk_writable',
        why: `cannot write in ${name}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
      });
      continue;
    } finally {
      await rm(probe, { force: true }).catch(() => {});
    }
    const fs = await statfs(dir).catch(() => undefined);
    const free = fs ? fs.bavail * fs.bsize : undefined;
    if (free !== undefined && free < deps.config.readyMinFreeBytes) {
      failed.push({
        check: 'disk_space',
        why: `${Math.floor(free / 1048576)} MiB free for ${name}, below TESSERA_READY_MIN_FREE_BYTES`,
      });
    }
  }
  return failed;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timeout')), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
