import type { DbOrTrx, Trx } from '../../core/db/connect.ts';

/**
 * Seams for features that hold metadata (assets, collections): they tell metadata what uses a
 * definition, and how to bring their stored documents in line after definition changes. They are
 * arguments, wired by the composition roots: usage probes by src/app.ts (metadataRoutes), apply
 * handlers by src/workers.ts (metadataJobHandlers).
 */

export type UsageKind = 'template' | 'attribute' | 'vocabulary';

/** Returns, per id that is in use, a short description of what uses it (e.g. "3 assets"). */
export type UsageProbe = (
  db: DbOrTrx,
  orgId: string,
  kind: UsageKind,
  ids: readonly string[],
) => Promise<Map<string, string>>;

export interface DefinitionChange {
  id: string;
  kind: string;
  subjectType: string;
  subjectId: string;
  data: Record<string, unknown>;
  createdAt: number;
}

export interface ApplyContext {
  orgId: string;
  actionId: string;
  changes: readonly DefinitionChange[];
  /** When the apply runs (epoch ms): handlers stamp what they rewrite, so indexes that follow changes see it. */
  now: number;
  /** Who started the apply (the Action's creator), the actor of the events handlers publish. */
  actor: string | null;
  /** Report progress (0..1) of this handler's share of the work. */
  progress(fraction: number): Promise<void>;
}

/** Brings a feature's stored metadata in line with definition changes. Must be idempotent. */
export type ApplyHandler = (
  trxOrDb: DbOrTrx,
  context: ApplyContext,
) => Promise<{ updated: number; errors?: { item: string; message: string }[] }>;

/** What the metadata routes need from the features that store metadata (src/app.ts wires it). */
export interface MetadataRouteHooks {
  readonly usageProbes: readonly UsageProbe[];
}

/** What the metadata jobs need from the features that store metadata (src/workers.ts wires it), by handler name. */
export interface MetadataJobHooks {
  readonly applyHandlers: Readonly<Record<string, ApplyHandler>>;
}

/** What uses each id, from every probe. */
export type ExternalUsage = (
  db: DbOrTrx | Trx,
  orgId: string,
  kind: UsageKind,
  ids: readonly string[],
) => Promise<Map<string, string[]>>;

export function externalUsageOf(probes: readonly UsageProbe[]): ExternalUsage {
  return async (db, orgId, kind, ids) => {
    const out = new Map<string, string[]>();
    if (ids.length === 0) return out;
    for (const probe of probes) {
      for (const [id, what] of await probe(db, orgId, kind, ids)) out.set(id, [...(out.get(id) ?? []), what]);
    }
    return out;
  };
}
