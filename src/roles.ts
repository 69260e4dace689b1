import { parseArgs } from 'node:util';

/** A command line that names a process role wrongly (`tessera worker --concurrency 0`): exit 2 with the usage. */
export class RoleError extends Error {}

export type Role = { kind: 'serve'; workers: boolean } | { kind: 'worker'; jobs: { concurrency?: number } };

/**
 * The process roles (docs/deploy.md): `serve` (API + workers, the default), `serve --no-workers` (API only),
 * `worker [--concurrency N]` (jobs only; N defaults to TESSERA_JOB_CONCURRENCY). `edge` is parsed by the edge.
 */
export function parseRole(command: 'serve' | 'worker', args: string[]): Role {
  let values: Record<string, unknown>;
  try {
    values = parseArgs({
      args,
      options:
        command === 'serve'
          ? { 'no-workers': { type: 'boolean' }, workers: { type: 'boolean' } }
          : { concurrency: { type: 'string' } },
      strict: true,
    }).values;
  } catch (error) {
    throw new RoleError(`tessera ${command}: ${(error as Error).message}`);
  }
  if (command === 'serve') return { kind: 'serve', workers: values['no-workers'] !== true };
  const raw = values.concurrency;
  if (raw === undefined) return { kind: 'worker', jobs: {} };
  const concurrency = Number(raw);
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || concurrency < 1 || concurrency > 256)
    throw new RoleError(`tessera worker: --concurrency must be a whole number from 1 to 256 (got "${String(raw)}")`);
  return { kind: 'worker', jobs: { concurrency } };
}
