import type { Deps } from '../../../deps.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import type { Trx } from '../../../core/db/connect.ts';
import { fromJson, toJson } from '../../../core/db/json.ts';
import { newId } from '../../../core/ids.ts';
import type { TypedJobHandler } from '../../../core/jobs/catalog.ts';
import {
  type ACTION_OBJECT_JOB,
  actionTemplateInfo,
  loadTemplate,
  mergeMetadata,
  seesSensitiveData,
  setActionObjectId,
  validateMetadata,
  type ActionObjectJob,
  type ActionTemplateInfo,
  type CompiledTemplate,
} from '../../metadata/index.ts';
import { defaultSecurityTemplateId } from '../../identity/index.ts';
import { callerPermissions } from '../access.ts';
import { findAsset, securityOf, setAssetSecurity } from '../assets.repo.ts';
import { firstVersionRow } from '../new-row.ts';
import { project, templateOf, withSystemValues, type LegacyItem } from '../metadata-seam/metadata-seam.ts';
import { hiddenOf, presentLegacy } from '../views/present.ts';

/**
 * Action objects ("template-as-asset", reference §5 and §10.7): an action-type metadata template
 * is also a DAM object stored like an asset, objectType Action, whose metadata template is that
 * template. The metadata feature queues ACTION_OBJECT_JOB in the transaction of every create,
 * update and delete of such a template; this job makes the object, keeps it in line with the
 * template (file name = template name, attributes and defaults, access templates as security),
 * and moves it to the recycle bin when the template is deleted. It is idempotent: a repeat or
 * retry finds the object and writes the same state again.
 */

export const ACTION_OBJECT_TYPE = 'Action';

/** Security of the object: the template's access templates, else the organization's Default security template. */
async function securityFor(trx: Trx, orgId: string, info: ActionTemplateInfo): Promise<string[]> {
  if (info.accessTemplateIds.length > 0) return info.accessTemplateIds;
  const fallback = await defaultSecurityTemplateId(trx, orgId);
  return fallback ? [fallback] : [];
}

/** The object's document: what it holds, reshaped to the template, with defaults for attributes left empty. */
function documentFor(t: CompiledTemplate, current: readonly LegacyItem[], filename: string) {
  const base = project(t, current).doc;
  const has = new Set(base.map((i) => i.metadataDefinitionId));
  const defaults = t.defaults.flatMap((d) => {
    const def = t.attributes.find((a) => a.searchField === d.searchField);
    return def && !has.has(def.id) ? [{ name: def.name, value: d.value }] : [];
  });
  // Only the defaults are checked (they were valid when the template took them); required attributes may stay empty.
  const r = validateMetadata(t, defaults, {
    mode: 'patch',
    allowReadonly: true,
    path: 'template.attributesDefaultValue',
  });
  const doc = r.ok ? mergeMetadata(t, base, r.document) : base;
  return withSystemValues(t, doc, { filename }) ?? project(t, doc);
}

async function sync(deps: Deps, orgId: string, job: ActionObjectJob): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const info = await actionTemplateInfo(trx, orgId, job.templateId);
    if (!info) {
      // The template was deleted: its object goes to the recycle bin (still readable, fileState "recycle bin").
      // By template too, not only by the id the delete saw: a job that made the object while the
      // delete was running committed it after the delete had read the template (action_object_id
      // still empty), so only its metadata_template_id names it.
      await trx
        .updateTable('assets')
        .set({ deleted_at: now, updated_at: now })
        .where('org_id', '=', orgId)
        .where((eb) =>
          job.actionObjectId
            ? eb.or([eb('id', '=', job.actionObjectId), eb('metadata_template_id', '=', job.templateId)])
            : eb('metadata_template_id', '=', job.templateId),
        )
        .where('object_type', '=', ACTION_OBJECT_TYPE)
        .where('deleted_at', 'is', null)
        .execute();
      return;
    }
    const t = await loadTemplate(trx, orgId, info.id);
    if (!t) return;
    const security = await securityFor(trx, orgId, info);
    const existing = info.actionObjectId ? await findAsset(trx, orgId, info.actionObjectId) : undefined;
    const actor = info.updatedBy ?? info.createdBy;
    if (existing) {
      const prepared = documentFor(t, fromJson<LegacyItem[]>(existing.metadata, []), info.name);
      await trx
        .updateTable('assets')
        .set({
          filename: info.name,
          metadata_template_id: info.id,
          metadata: toJson(prepared.doc),
          metadata_denormalized: toJson(prepared.denormalized),
          updated_at: now,
          ...(actor ? { updated_by: actor } : {}),
        })
        .where('org_id', '=', orgId)
        .where('id', '=', existing.id)
        .execute();
      await setAssetSecurity(trx, orgId, existing.id, security);
      return;
    }
    const createdBy = info.createdBy ?? info.updatedBy;
    if (!createdBy) throw new Error(`metadata template ${info.id} has no creator to own its Action object`);
    const prepared = documentFor(t, [], info.name);
    const id = newId(now);
    const fileId = newId(now);
    const row = firstVersionRow(
      { id, fileId, orgId, templateId: info.id, userId: createdBy, now },
      {
        object_type: ACTION_OBJECT_TYPE,
        filename: info.name,
        skip_transcode: 1,
        metadata: toJson(prepared.doc),
        metadata_denormalized: toJson(prepared.denormalized),
      },
    );
    await trx.insertInto('assets').values(row).execute();
    await setAssetSecurity(trx, orgId, id, security);
    // Deleted meanwhile (its delete saw no object yet): roll back, nothing to keep.
    if (!(await setActionObjectId(trx, orgId, info.id, id)))
      throw new Error(`metadata template ${info.id} was deleted while its Action object was made`);
  });
}

export function actionObjectJobHandler(deps: Deps): TypedJobHandler<typeof ACTION_OBJECT_JOB> {
  return async (job) => {
    if (!job.orgId) return;
    await sync(deps, job.orgId, job.payload);
  };
}

/** GET /v1/action/{id} for Action objects: by objectId or fileId, View through its security templates. */
export async function readActionObject(
  deps: Deps,
  principal: Principal,
  id: string,
): Promise<Record<string, unknown> | undefined> {
  const asset = await findAsset(deps.db, principal.orgId, id);
  if (!asset || asset.object_type !== ACTION_OBJECT_TYPE) return undefined;
  const security = (await securityOf(deps.db, principal.orgId, [asset.id])).get(asset.id)!;
  if (!callerPermissions(principal, security).has('view')) return undefined;
  const template = await templateOf(deps.db, principal.orgId, asset.metadata_template_id);
  return presentLegacy(deps, asset, security, template, hiddenOf(template, seesSensitiveData(principal)));
}
