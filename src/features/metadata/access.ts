import { groupsGranting, hasPrivilege, permissionsOn, templatesGranting } from '../../core/authz/authorize.ts';
import type { Principal } from '../../core/authz/principal.ts';
import type { DbOrTrx } from '../../core/db/connect.ts';
import { fromJson, toJson } from '../../core/db/json.ts';
import { AppError } from '../../core/http/errors.ts';
import { newId } from '../../core/ids.ts';
import type { Problem } from './validation/model.ts';
import { servesAssets } from './definitions/templates/template-types.ts';

/**
 * Whether the caller may use a metadata template: templates without access templates are open to
 * everyone in the organization; otherwise the caller needs View through at least one of them.
 * False also when the template does not exist in the caller's organization.
 */
export async function canUseTemplate(db: DbOrTrx, principal: Principal, templateId: string): Promise<boolean> {
  return (await templateUse(db, principal, templateId)) !== 'unknown';
}

/**
 * What an asset may do with a template: `unknown` when it does not exist for the caller (missing,
 * another organization's, or closed by its access templates), `not_for_assets` when its types
 * include neither `default` nor `asset` (an action-only template), `ok` otherwise.
 */
export async function templateUse(
  db: DbOrTrx,
  principal: Principal,
  templateId: string,
): Promise<'ok' | 'unknown' | 'not_for_assets'> {
  const template = await db
    .selectFrom('metadata_templates')
    .select(['id', 'template_types'])
    .where('org_id', '=', principal.orgId)
    .where('id', '=', templateId)
    .executeTakeFirst();
  if (!template) return 'unknown';
  const access = await db
    .selectFrom('metadata_template_access')
    .select('security_template_id')
    .where('org_id', '=', principal.orgId)
    .where('template_id', '=', templateId)
    .execute();
  if (
    access.length > 0 &&
    !(
      await permissionsOn(
        db,
        principal,
        access.map((a) => a.security_template_id),
      )
    ).has('view')
  )
    return 'unknown';
  return servesAssets(fromJson<string[]>(template.template_types, [])) ? 'ok' : 'not_for_assets';
}

/**
 * The metadata templates the caller may not see: those with access templates through none of which
 * the caller holds View (an access template that was deleted grants nobody). Holders of Metadata
 * Management see every template, as the template reads do. Search hides the assets of these
 * templates (reference §8.1: the caller also needs access to the asset's metadata template).
 */
export async function templatesHiddenFrom(db: DbOrTrx, principal: Principal): Promise<string[]> {
  if (hasPrivilege(principal, 'metadata_management')) return [];
  const rows = await db
    .selectFrom('metadata_template_access')
    .select(['template_id', 'security_template_id'])
    .where('org_id', '=', principal.orgId)
    .execute();
  if (rows.length === 0) return [];
  const viewable = new Set(
    principal.groupIds.length === 0
      ? []
      : (await templatesGranting(db, principal, 'view').execute()).map((r) => r.template_id),
  );
  const open = new Set(rows.filter((r) => viewable.has(r.security_template_id)).map((r) => r.template_id));
  return [...new Set(rows.map((r) => r.template_id))].filter((t) => !open.has(t)).sort();
}

/**
 * Who a metadata template is open to: `accessTemplateIds` empty means everyone; otherwise the
 * groups through which View is granted on at least one access template (`viewGroups`).
 */
export interface TemplateAccess {
  accessTemplateIds: readonly string[];
  viewGroups: ReadonlySet<string>;
}

export const OPEN_TEMPLATE: TemplateAccess = { accessTemplateIds: [], viewGroups: new Set() };

/** A metadata template's access templates and the groups they grant View (no second query for an open template). */
export async function templateAccess(db: DbOrTrx, orgId: string, templateId: string | null): Promise<TemplateAccess> {
  if (templateId === null) return OPEN_TEMPLATE;
  const rows = await db
    .selectFrom('metadata_template_access')
    .select('security_template_id')
    .where('org_id', '=', orgId)
    .where('template_id', '=', templateId)
    .execute();
  if (rows.length === 0) return OPEN_TEMPLATE;
  const accessTemplateIds = [...new Set(rows.map((r) => r.security_template_id))];
  const granted = await groupsGranting(db, orgId, accessTemplateIds, 'view');
  return { accessTemplateIds, viewGroups: new Set([...granted.values()].flatMap((groups) => [...groups])) };
}

/**
 * Whether a metadata template is open to the caller: no access templates, View through one of
 * them, or Metadata Management (as templatesHiddenFrom, which search applies in SQL).
 */
export function templateOpenTo(principal: Principal, access: TemplateAccess): boolean {
  if (access.accessTemplateIds.length === 0 || hasPrivilege(principal, 'metadata_management')) return true;
  return principal.groupIds.some((g) => access.viewGroups.has(g));
}

/** The organization's default metadata template (seeded with every organization). */
export async function defaultTemplateId(db: DbOrTrx, orgId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('metadata_templates')
    .select('id')
    .where('org_id', '=', orgId)
    .where('is_default', '=', 1)
    .orderBy('created_at')
    .executeTakeFirst();
  return row?.id;
}

/** 400 listing every metadata problem, each with its path. */
export function metadataInvalid(problems: readonly Problem[]): AppError {
  const first = problems[0];
  const message =
    problems.length === 1 && first
      ? `${first.path}: ${first.message}`
      : `metadata has ${problems.length} problems; first: ${first?.path}: ${first?.message}`;
  return new AppError('validation_failed', message, {
    details: problems.map((p) => ({ field: p.path, message: p.message })),
  });
}

/** Records a definition change for POST /v1/metadata/apply; call in the transaction of the change. */
export async function recordDefinitionChange(
  db: DbOrTrx,
  now: number,
  input: {
    orgId: string;
    kind: string;
    subjectType: string;
    subjectId: string;
    data?: Record<string, unknown>;
    actorId?: string | null;
  },
): Promise<void> {
  await db
    .insertInto('metadata_changes')
    .values({
      id: newId(now),
      org_id: input.orgId,
      kind: input.kind,
      subject_type: input.subjectType,
      subject_id: input.subjectId,
      data: toJson(input.data ?? {}),
      created_by: input.actorId ?? null,
      created_at: now,
      applied_at: null,
      action_id: null,
    })
    .execute();
}
