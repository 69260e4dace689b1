import type { DbOrTrx } from '../../../core/db/connect.ts';

/**
 * One page (limit + 1 rows, to tell whether more follow) of the organization's deleted assets that
 * the given groups may view: current versions, one indexed join through the asset's
 * templates' grants, newest deletion first, keyset-paged on (deleted_at, id) after `after`.
 */
export async function deletedAssetsVisibleTo(db: DbOrTrx, orgId: string, groupIds: readonly string[], after: [number, string] | null, limit: number) {
  let q = db
    .selectFrom('assets as a')
    .select(['a.id', 'a.file_id', 'a.original_file_id', 'a.filename', 'a.object_type', 'a.version_number', 'a.size', 'a.deleted_at', 'a.deleted_by'])
    .where('a.org_id', '=', orgId)
    .where('a.deleted_at', 'is not', null)
    .where('a.is_current', '=', 1)
    .where(({ exists, selectFrom }) => exists(
      selectFrom('asset_security as s')
        .innerJoin('security_template_permissions as p', 'p.template_id', 's.template_id')
        .select('s.asset_id')
        .whereRef('s.asset_id', '=', 'a.id')
        .where('p.permission', '=', 'view')
        .where('p.group_id', 'in', [...groupIds]),
    ));
  if (after) {
    const [at, id] = after;
    q = q.where((eb) => eb.or([eb('a.deleted_at', '<', at), eb.and([eb('a.deleted_at', '=', at), eb('a.id', '<', id)])]));
  }
  return q.orderBy('a.deleted_at', 'desc').orderBy('a.id', 'desc').limit(limit + 1).execute();
}
