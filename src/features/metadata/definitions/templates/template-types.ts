import type { DbOrTrx } from '../../../../core/db/connect.ts';
import { fromJson } from '../../../../core/db/json.ts';
import { invalidField } from '../../../../core/http/errors.ts';
import type { JobPayload } from '../../../../core/jobs/catalog.ts';

/**
 * Template types (reference §10.1, §10.7). The create endpoint takes `default`, `asset` and
 * `action`; `search`, `proof` and `tile` are labels of the legacy list that Tessera shows when a
 * stored template carries them but never writes. A template serves assets when its types include
 * `default` or `asset`; a template whose types include `action` is also a DAM object of type
 * Action ("template-as-asset"), made and kept in line by the ACTION_OBJECT_JOB.
 */
export const WRITABLE_TEMPLATE_TYPES = ['default', 'asset', 'action'] as const;
export const LEGACY_TEMPLATE_TYPES = ['search', 'proof', 'tile'] as const;
export const ASSET_TEMPLATE_TYPES: readonly string[] = ['default', 'asset'];

/** The job that creates, updates or retires the Action object of an action-type template. */
export const ACTION_OBJECT_JOB = 'metadata.template.action_object';
/** Its payload (core/jobs/catalog.ts): the template, and on delete the object to retire. */
export type ActionObjectJob = JobPayload<typeof ACTION_OBJECT_JOB>;

/** The `templateType` of a create request: lower-cased, de-duplicated, `["default"]` when absent or empty. */
export function normalizeTemplateTypes(input: readonly unknown[] | undefined): string[] {
  const out: string[] = [];
  (input ?? []).forEach((raw, i) => {
    const field = `body.templateType[${i}]`;
    if (typeof raw !== 'string') throw invalidField(field, `must be one of ${WRITABLE_TEMPLATE_TYPES.join(', ')}`);
    const type = raw.trim().toLowerCase();
    if ((LEGACY_TEMPLATE_TYPES as readonly string[]).includes(type)) {
      throw invalidField(
        field,
        `"${raw}" is a legacy template type that is only read, never created; use one of ${WRITABLE_TEMPLATE_TYPES.join(', ')}`,
      );
    }
    if (!(WRITABLE_TEMPLATE_TYPES as readonly string[]).includes(type))
      throw invalidField(field, `"${raw}" is not a template type; use one of ${WRITABLE_TEMPLATE_TYPES.join(', ')}`);
    if (!out.includes(type)) out.push(type);
  });
  return out.length === 0 ? ['default'] : out;
}

export function servesAssets(types: readonly string[]): boolean {
  return types.some((t) => ASSET_TEMPLATE_TYPES.includes(t));
}

export function isActionTemplate(types: readonly string[]): boolean {
  return types.includes('action');
}

/** What the Action-object job needs of a template; undefined once the template is deleted. */
export interface ActionTemplateInfo {
  id: string;
  name: string;
  types: string[];
  createdBy: string | null;
  updatedBy: string | null;
  accessTemplateIds: string[];
  actionObjectId: string | null;
}

export async function actionTemplateInfo(
  db: DbOrTrx,
  orgId: string,
  templateId: string,
): Promise<ActionTemplateInfo | undefined> {
  const row = await db
    .selectFrom('metadata_templates')
    .select(['id', 'name', 'template_types', 'created_by', 'updated_by', 'action_object_id'])
    .where('org_id', '=', orgId)
    .where('id', '=', templateId)
    .executeTakeFirst();
  if (!row) return undefined;
  const access = await db
    .selectFrom('metadata_template_access')
    .select('security_template_id')
    .where('org_id', '=', orgId)
    .where('template_id', '=', templateId)
    .execute();
  return {
    id: row.id,
    name: row.name,
    types: fromJson<string[]>(row.template_types, []),
    createdBy: row.created_by,
    updatedBy: row.updated_by,
    accessTemplateIds: access.map((a) => a.security_template_id).sort(),
    actionObjectId: row.action_object_id,
  };
}

/** Records the Action object made for a template; false when the template is gone (deleted meanwhile). */
export async function setActionObjectId(
  db: DbOrTrx,
  orgId: string,
  templateId: string,
  objectId: string,
): Promise<boolean> {
  const r = await db
    .updateTable('metadata_templates')
    .set({ action_object_id: objectId })
    .where('org_id', '=', orgId)
    .where('id', '=', templateId)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}
