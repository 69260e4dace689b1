import type { DbOrTrx } from '../../../core/db/connect.ts';
import { prepared } from '../../../core/db/prepared.ts';
import { newId } from '../../../core/ids.ts';
import { loadCompiledTemplate } from './definitions.repo.ts';
import type { CompiledTemplate } from '../validation/model.ts';

/**
 * Compiled templates, cached per process and checked against the organization's definitions
 * version (one primary-key read) on every use, so a change made by any process is seen at once.
 */
const versionKey = (orgId: string) => `metadata.version.${orgId}`;

/**
 * Marks the organization's definitions changed. Call it first in every transaction that changes
 * definitions: the upsert also takes the organization's row lock (PostgreSQL; SQLite serializes
 * writers anyway), so concurrent changes check names, duplicates and usage one after the other.
 */
export async function touchDefinitions(db: DbOrTrx, orgId: string, now: number): Promise<void> {
  const value = newId(now);
  await db
    .insertInto('server_state')
    .values({ key: versionKey(orgId), value, updated_at: now })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value, updated_at: now }))
    .execute();
}

// Read on every asset write and every asset view load: compiled once (core/db/prepared.ts).
export const versionQuery = prepared<{ key: string }>()((db, p) =>
  db.selectFrom('server_state').select('value').where('key', '=', p.key),
);

const MAX_ENTRIES = 1000;
const cache = new Map<string, { version: string; template: CompiledTemplate }>();

/**
 * Like loadTemplate, but reuses the compiled template while the organization's definitions are
 * unchanged: one indexed read instead of five queries. For hot write paths (bulk asset creation).
 */
export async function loadTemplateCached(
  db: DbOrTrx,
  orgId: string,
  templateId: string,
): Promise<CompiledTemplate | undefined> {
  const row = (await versionQuery.execute(db, { key: versionKey(orgId) }))[0];
  const version = row?.value ?? 'initial';
  const key = `${orgId}:${templateId}`;
  const hit = cache.get(key);
  if (hit && hit.version === version) {
    cache.delete(key);
    cache.set(key, hit);
    return hit.template;
  }
  const template = await loadCompiledTemplate(db, orgId, templateId);
  if (!template) {
    cache.delete(key);
    return undefined;
  }
  cache.set(key, { version, template });
  if (cache.size > MAX_ENTRIES) cache.delete(cache.keys().next().value!);
  return template;
}
