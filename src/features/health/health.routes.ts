import { sql } from 'kysely';
import { Type } from 'typebox';
import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { AppError } from '../../core/http/errors.ts';
import { errorResponses } from '../../core/http/responses.ts';

const LiveSchema = Type.Object({ status: Type.Literal('ok') });
const ReadySchema = Type.Object({
  status: Type.Literal('ok'),
  checks: Type.Object({ database: Type.Literal('ok'), storage: Type.Literal('ok') }),
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
        summary: 'Readiness: the database and the blob storage are reachable',
        security: [],
        response: { 200: ReadySchema, ...errorResponses('service_unavailable') },
      },
    },
    async () => {
      const failed: string[] = [];
      await withTimeout(sql`select 1`.execute(deps.db), 2000).catch(() => failed.push('database'));
      await withTimeout(deps.blobs.ping(), 2000).catch(() => failed.push('storage'));
      if (failed.length > 0) throw new AppError('service_unavailable', `Not ready: ${failed.join(', ')} unreachable`);
      return { status: 'ok' as const, checks: { database: 'ok' as const, storage: 'ok' as const } };
    },
  );
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
