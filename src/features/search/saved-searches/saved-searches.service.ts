import { sql } from 'kysely';
import { permissionsOn } from '../../../core/authz/authorize.ts';
import { permitted } from '../../../core/authz/permissions.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import type { DbOrTrx } from '../../../core/db/connect.ts';
import { fromJson, toJson } from '../../../core/db/json.ts';
import { forbidden, invalidField, notFound } from '../../../core/http/errors.ts';
import { newId } from '../../../core/ids.ts';
import type { SavedSearchesTable } from '../../../core/db/schema.ts';
import type { Deps } from '../../../deps.ts';
import { checkSecurityTemplateIds } from '../../identity/index.ts';
import { parseQuery } from '../query/search.query.ts';
import { runSearch, specFromBody, type RunResult } from '../search.service.ts';
import type { SavedQuery, SavedSearch, SavedSearchCreate, SavedSearchUpdate } from './saved-searches.schemas.ts';
import { viewableTemplateIds } from '../access/visibility.ts';

/**
 * Saved searches (Tessera's own; the reference has none). A saved search stores a query, never
 * results: running it evaluates the query with the *runner's* visibility, so sharing one shares
 * the question, not the answers.
 */
interface Loaded {
  row: SavedSearchesTable;
  templateIds: string[];
  viewable: string[];
}

function validateQuery(query: SavedQuery): void {
  parseQuery(specFromBody(query));
}

async function templatesOf(db: DbOrTrx, id: string): Promise<string[]> {
  const rows = await db
    .selectFrom('saved_search_templates')
    .select('template_id')
    .where('saved_search_id', '=', id)
    .orderBy('template_id')
    .execute();
  return rows.map((r) => r.template_id);
}

function view(row: SavedSearchesTable, templateIds: string[]): SavedSearch {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    visibility: row.visibility,
    securityTemplateIds: templateIds,
    query: fromJson<SavedQuery>(row.query, {}),
    ownerId: row.owner_id,
    createdEpoch: Number(row.created_at),
    lastUpdatedEpoch: Number(row.updated_at),
  };
}

async function load(db: DbOrTrx, principal: Principal, id: string): Promise<Loaded> {
  const row = await db
    .selectFrom('saved_searches')
    .selectAll()
    .where('org_id', '=', principal.orgId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw notFound('Saved search');
  const templateIds = await templatesOf(db, id);
  const viewable = await viewableTemplateIds(db, principal);
  const visible =
    row.owner_id === principal.userId || (row.visibility === 'shared' && templateIds.some((t) => viewable.includes(t)));
  if (!visible) throw notFound('Saved search');
  return { row, templateIds, viewable };
}

/** Each id must name a security template through which the caller may view. */
async function checkTemplates(deps: Deps, principal: Principal, ids: readonly string[], viewable: readonly string[]) {
  const checked = await checkSecurityTemplateIds(deps.db, principal.orgId, ids, {
    field: 'body.securityTemplateIds',
    among: viewable,
    report: { each: 'no security template with this id through which you may view' },
  });
  return checked.ids;
}

async function requireEditable(deps: Deps, principal: Principal, s: Loaded): Promise<void> {
  if (s.row.owner_id === principal.userId) return;
  const perms = await permissionsOn(deps.db, principal, s.templateIds);
  if (!permitted(perms, 'saved_search.edit'))
    throw forbidden('Changing this saved search needs the Edit Metadata permission through its security templates');
}

export async function createSavedSearch(
  deps: Deps,
  principal: Principal,
  body: SavedSearchCreate,
): Promise<SavedSearch> {
  validateQuery(body.query);
  const name = body.name.trim();
  if (name === '') throw invalidField('body.name', 'is required');
  const templates = await checkTemplates(
    deps,
    principal,
    body.securityTemplateIds ?? [],
    await viewableTemplateIds(deps.db, principal),
  );
  const now = deps.clock.now();
  const id = newId(now);
  await deps.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('saved_searches')
      .values({
        id,
        org_id: principal.orgId,
        owner_id: principal.userId,
        name,
        description: body.description ?? '',
        visibility: templates.length > 0 ? 'shared' : 'private',
        query: toJson(body.query),
        created_at: now,
        updated_at: now,
      })
      .execute();
    if (templates.length > 0)
      await trx
        .insertInto('saved_search_templates')
        .values(templates.map((template_id) => ({ org_id: principal.orgId, saved_search_id: id, template_id })))
        .execute();
  });
  return getSavedSearch(deps, principal, id);
}

export async function getSavedSearch(deps: Deps, principal: Principal, id: string): Promise<SavedSearch> {
  const s = await load(deps.db, principal, id);
  return view(s.row, s.templateIds);
}

export async function listSavedSearches(
  deps: Deps,
  principal: Principal,
  query: { from?: number; limit?: number; searchTerm?: string },
) {
  const viewable = await viewableTemplateIds(deps.db, principal);
  const shared =
    viewable.length > 0
      ? sql<boolean>`(s.visibility = 'shared' and exists (select 1 from saved_search_templates t where t.saved_search_id = s.id and t.template_id in (${sql.join(viewable)})))`
      : sql<boolean>`1 = 0`;
  const conds = [sql`s.org_id = ${principal.orgId}`, sql`(s.owner_id = ${principal.userId} or ${shared})`];
  if (query.searchTerm)
    conds.push(sql`lower(s.name) like ${`%${query.searchTerm.toLowerCase().replace(/[%_]/g, '')}%`}`);
  const where = sql.join(conds, sql` and `);
  const order = deps.engine === 'postgres' ? sql`lower(s.name) collate "C", s.id` : sql`lower(s.name), s.id`;
  const [{ rows }, count] = await Promise.all([
    sql<SavedSearchesTable>`select s.* from saved_searches s where ${where} order by ${order} limit ${query.limit ?? 50} offset ${query.from ?? 0}`.execute(
      deps.db,
    ),
    sql<{ n: number | string }>`select count(*) as n from saved_searches s where ${where}`.execute(deps.db),
  ]);
  const result = [];
  for (const row of rows) result.push(view(row, await templatesOf(deps.db, row.id)));
  return { totalCount: Number(count.rows[0]?.n ?? 0), result };
}

export async function updateSavedSearch(
  deps: Deps,
  principal: Principal,
  id: string,
  body: SavedSearchUpdate,
): Promise<SavedSearch> {
  const s = await load(deps.db, principal, id);
  await requireEditable(deps, principal, s);
  if (body.query) validateQuery(body.query);
  const name = body.name?.trim();
  if (name === '') throw invalidField('body.name', 'must not be empty');
  const templates = body.securityTemplateIds
    ? await checkTemplates(deps, principal, body.securityTemplateIds, s.viewable)
    : undefined;
  if (templates !== undefined && s.row.owner_id !== principal.userId)
    throw forbidden('Only the creator changes who a saved search is shared with');
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('saved_searches')
      .set({
        updated_at: now,
        ...(name !== undefined ? { name } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.query ? { query: toJson(body.query) } : {}),
        ...(templates ? { visibility: templates.length > 0 ? ('shared' as const) : ('private' as const) } : {}),
      })
      .where('id', '=', id)
      .execute();
    if (templates) {
      await trx.deleteFrom('saved_search_templates').where('saved_search_id', '=', id).execute();
      if (templates.length > 0)
        await trx
          .insertInto('saved_search_templates')
          .values(templates.map((template_id) => ({ org_id: principal.orgId, saved_search_id: id, template_id })))
          .execute();
    }
  });
  return getSavedSearch(deps, principal, id);
}

export async function deleteSavedSearch(deps: Deps, principal: Principal, id: string): Promise<void> {
  const s = await load(deps.db, principal, id);
  if (s.row.owner_id !== principal.userId) throw forbidden('Only the creator deletes a saved search');
  await deps.db.deleteFrom('saved_searches').where('id', '=', id).execute();
}

/** Runs a saved search as `principal` sees the index (story boards call this for each viewer). */
export async function runSavedSearchForViewer(
  deps: Deps,
  principal: Principal,
  id: string,
  options: { from?: number; limit?: number; facets?: boolean } = {},
): Promise<RunResult> {
  const s = await load(deps.db, principal, id);
  const query = fromJson<SavedQuery>(s.row.query, {});
  return runSearch(deps, principal, specFromBody(query), {
    from: options.from ?? 0,
    limit: options.limit ?? 50,
    facets: options.facets === false ? undefined : { size: 20 },
  });
}

export async function runSavedSearch(
  deps: Deps,
  principal: Principal,
  id: string,
  body: { from?: number; limit?: number; aggregations?: boolean },
) {
  const from = body.from ?? 0;
  const limit = body.limit ?? 50;
  const result = await runSavedSearchForViewer(deps, principal, id, {
    from,
    limit,
    facets: body.aggregations !== false,
  });
  return {
    hitCount: result.records.length,
    totalCount: result.total,
    from,
    limit,
    result: result.records,
    facets: result.facets,
    ...(result.estimated ? { estimated: true } : {}),
  };
}
