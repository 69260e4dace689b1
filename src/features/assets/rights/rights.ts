import { createHash } from 'node:crypto';
import type { Trx } from '../../../core/db/connect.ts';
import { isUniqueViolation } from '../../../core/db/connect.ts';
import { fromJson } from '../../../core/db/json.ts';
import { publishEvent } from '../../../core/events/index.ts';
import { enqueueJob } from '../../../core/jobs/queue.ts';
import type { HandlersFor } from '../../../core/jobs/catalog.ts';
import type { Deps } from '../../../deps.ts';

/**
 * Usage rights (issue 29 part 4, docs/usage-rights.md). An asset's rights are system metadata
 * attributes (features/metadata/seed.ts): the license (Usage Rights), usage terms, territories,
 * channels, start and expiry dates. They are written, validated, searched and faceted like any
 * metadata; this module turns their changes into the reference's rights-management events (the
 * asset's rights are its agreement: `agreement.id` is the asset's objectId) and announces each expiry
 * once (`rm.agreement.expired`, the `rights.expiry_sweep` job).
 */
export const RIGHTS_FIELDS = {
  license: 'usage_rights',
  usageTerms: 'usage_terms',
  territories: 'rights_territories',
  channels: 'rights_channels',
  startDate: 'rights_start_date',
  expiryDate: 'expiration_date',
} as const;

export interface Rights {
  license: string | null;
  usageTerms: string | null;
  territories: string[];
  channels: string[];
  /** ISO calendar dates (yyyy-MM-dd). */
  startDate: string | null;
  expiryDate: string | null;
}

const text = (v: unknown): string | null =>
  typeof v === 'string' && v !== '' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v.join(', ') : null;
const list = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' && v ? [v] : [];

/** The rights an asset's denormalized metadata holds, or null when it holds none. */
export function rightsOf(denormalized: Record<string, unknown> | string): Rights | null {
  const d = typeof denormalized === 'string' ? fromJson<Record<string, unknown>>(denormalized, {}) : denormalized;
  const r: Rights = {
    license: text(d[RIGHTS_FIELDS.license]),
    usageTerms: text(d[RIGHTS_FIELDS.usageTerms]),
    territories: list(d[RIGHTS_FIELDS.territories]),
    channels: list(d[RIGHTS_FIELDS.channels]),
    startDate: text(d[RIGHTS_FIELDS.startDate]),
    expiryDate: text(d[RIGHTS_FIELDS.expiryDate]),
  };
  const empty =
    r.license === null &&
    r.usageTerms === null &&
    r.territories.length === 0 &&
    r.channels.length === 0 &&
    r.startDate === null &&
    r.expiryDate === null;
  return empty ? null : r;
}

const same = (a: Rights | null, b: Rights | null) => JSON.stringify(a) === JSON.stringify(b);

/**
 * rm.agreement.created / updated / deleted for a change of an asset's rights (nothing when they did
 * not change), in the transaction of the change.
 */
export async function publishRightsChange(
  trx: Trx,
  now: number,
  asset: { id: string; org_id: string; filename: string },
  actor: string | null,
  before: Rights | null,
  after: Rights | null,
): Promise<void> {
  if (same(before, after)) return;
  const type =
    before === null ? 'rm.agreement.created' : after === null ? 'rm.agreement.deleted' : 'rm.agreement.updated';
  const current = after ?? before!;
  await publishEvent(trx, now, {
    orgId: asset.org_id,
    type,
    actor,
    data: {
      agreement: { id: asset.id, name: current.license ?? asset.filename },
      asset: { id: asset.id, filename: asset.filename },
      rights: after,
      previous: before,
    },
  });
}

export const RIGHTS_SWEEP_JOB = 'rights.expiry_sweep';
const HOUR = 3_600_000;

function sweepJobId(hour: number): string {
  const hex = createHash('sha256').update(`${RIGHTS_SWEEP_JOB}:${hour}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Enqueues the hour's sweep (a job id derived from the hour, so every process enqueues the same one
 * and it runs once). Called by the workers' loop (src/workers.ts).
 */
export async function scheduleRightsSweep(deps: Deps, state: { hour: number }): Promise<void> {
  const now = deps.clock.now();
  const hour = Math.floor(now / HOUR);
  if (state.hour === hour) return;
  try {
    await enqueueJob(deps.db, now, { id: sweepJobId(hour), type: RIGHTS_SWEEP_JOB, payload: null, maxAttempts: 5 });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
  }
  state.hour = hour;
}

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Announces every right that has expired (expiry date before today, UTC) and was not announced yet:
 * one `rm.agreement.expired` per asset and expiry date, exactly once across processes and re-runs —
 * the event is published in the transaction that inserts (asset, expiry) into asset_rights_expiries,
 * whose primary key refuses a second insert. A right given a new expiry date expires again then.
 * Returns how many were announced.
 */
export async function sweepExpiredRights(deps: Deps): Promise<number> {
  const now = deps.clock.now();
  const today = isoDay(now);
  let announced = 0;
  let after = '';
  for (;;) {
    // Current, live assets holding an expiry date (a text prefilter; the date is read from the JSON).
    const rows = await deps.db
      .selectFrom('assets')
      .select(['id', 'org_id', 'filename', 'metadata_denormalized'])
      .where('is_current', '=', 1)
      .where('deleted_at', 'is', null)
      .where('metadata_denormalized', 'like', `%"${RIGHTS_FIELDS.expiryDate}"%`)
      .where('id', '>', after)
      .orderBy('id')
      .limit(500)
      .execute();
    if (rows.length === 0) break;
    after = rows[rows.length - 1]!.id;
    for (const row of rows) {
      const rights = rightsOf(row.metadata_denormalized);
      if (!rights?.expiryDate || rights.expiryDate >= today) continue;
      const expiry = rights.expiryDate;
      const done = await deps.db.transaction().execute(async (trx) => {
        const inserted = await trx
          .insertInto('asset_rights_expiries')
          .values({ asset_id: row.id, expiry_date: expiry, org_id: row.org_id, announced_at: now })
          .onConflict((oc) => oc.columns(['asset_id', 'expiry_date']).doNothing())
          .returning('asset_id')
          .executeTakeFirst();
        if (!inserted) return false;
        await publishEvent(trx, now, {
          orgId: row.org_id,
          type: 'rm.agreement.expired',
          actor: null,
          data: {
            agreement: { id: row.id, name: rights.license ?? row.filename },
            asset: { id: row.id, filename: row.filename },
            rights,
            previous: null,
          },
        });
        return true;
      });
      if (done) announced++;
    }
  }
  return announced;
}

export function rightsJobHandlers(deps: Deps): HandlersFor<typeof RIGHTS_SWEEP_JOB> {
  return {
    [RIGHTS_SWEEP_JOB]: async () => {
      const n = await sweepExpiredRights(deps);
      if (n > 0) deps.log.info({ announced: n }, 'rights expiries announced');
    },
  };
}
