import type { Keyring } from '../../../core/keyring.ts';
import type { Db } from '../../../core/db/connect.ts';

/**
 * The API → edge control channel. Every edge process registers a control URL in `cdn_edges` and
 * heartbeats; the API pushes purges and configuration changes to every live edge and waits for
 * each to answer, so a purge has taken effect everywhere when the API call returns.
 */
export const CONTROL_AUTH_HEADER = 'x-tessera-edge-auth';
/** An edge not seen for this long is not pushed to; it drops its cache before serving again. */
export const EDGE_LIVENESS_MS = 15_000;
export const CONTROL_TIMEOUT_MS = 3_000;

export interface PurgeMessage {
  id: string;
  zoneId: number;
  kind: 'url' | 'prefix' | 'tag' | 'all' | 'asset';
  value: string;
}

export interface ControlMessage {
  purges?: PurgeMessage[];
  /** Reload these zones' configuration (or all when true). */
  reload?: number[] | true;
  /** Write buffered statistics to the database before answering. */
  flushStats?: boolean;
}

export function controlAuth(keys: Keyring, nowMs: number): string {
  const ts = String(nowMs);
  return `${ts}.${keys.hash('cdn-edge-control', ts)}`;
}

export function checkControlAuth(keys: Keyring, header: string | undefined, nowMs: number): boolean {
  if (!header) return false;
  const dot = header.indexOf('.');
  if (dot < 0) return false;
  const ts = header.slice(0, dot);
  if (!/^\d{1,16}$/.test(ts) || Math.abs(nowMs - Number(ts)) > 60_000) return false;
  // Under any held key: API and edge processes on either side of a secret rotation still talk.
  return keys.verify('cdn-edge-control', ts, header.slice(dot + 1));
}

export interface PushResult {
  acked: number;
  failed: number;
}

/** Sends `message` to every live edge, in parallel; edges that fail to answer are deregistered. */
export async function pushToEdges(db: Db, keys: Keyring, nowMs: number, message: ControlMessage): Promise<PushResult> {
  const edges = await db
    .selectFrom('cdn_edges')
    .select(['id', 'control_url'])
    .where('last_seen_at', '>=', nowMs - EDGE_LIVENESS_MS)
    .execute();
  const results = await Promise.all(
    edges.map(async (edge) => {
      try {
        const res = await fetch(`${edge.control_url}/sync`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [CONTROL_AUTH_HEADER]: controlAuth(keys, Date.now()) },
          body: JSON.stringify(message),
          signal: AbortSignal.timeout(CONTROL_TIMEOUT_MS),
        });
        await res.arrayBuffer();
        return res.ok;
      } catch {
        return false;
      }
    }),
  );
  const failed = edges.filter((_, i) => !results[i]);
  // A deregistered edge notices at its next heartbeat, drops everything it cached and registers anew.
  if (failed.length > 0)
    await db
      .deleteFrom('cdn_edges')
      .where(
        'id',
        'in',
        failed.map((e) => e.id),
      )
      .execute();
  return { acked: results.filter(Boolean).length, failed: failed.length };
}
