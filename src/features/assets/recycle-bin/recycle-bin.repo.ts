import { templatesGranting } from '../../../core/authz/authorize.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import type { DbOrTrx } from '../../../core/db/connect.ts';

/**
 * One page (limit + 1 rows, to tell whether more follow) of the organization's deleted assets that
 * the caller's groups may view (through the templates granting View, core/authz): current versions,
 * newest deletion first, keyset-paged on (deleted_at, id) after `after`.
 */
export async function deletedAssetsVisibleTo(
  db: DbOrTrx,
  principal: Principal,
  after: [number, string] | null,
  limit: number,
) {
  let q = db
    .selectFrom('assets as a')
    .select([
      'a.id',
      'a.file_id',
      'a.original_file_id',
      'a.filename',
      'a.object_type',
      'a.version_number',
      'a.size',
      'a.deleted_at',
      'a.deleted_by',
    ])
    .where('a.org_id', '=', principal.orgId)
    .where('a.deleted_at', 'is not', null)
    .where('a.is_current', '=', 1)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('asset_security as s')
          .select('s.asset_id')
          .whereRef('s.asset_id', '=', 'a.id')
          .where('s.template_id', 'in', templatesGranting(db, principal, 'view')),
      ),
    );
  if (after) {
    const [at, id] = after;
    q = q.where((eb) =>
      eb.or([eb('a.deleted_at', '<', at), eb.and([eb('a.deleted_at', '=', at), eb('a.id', '<', id)])]),
    );
  }
  return q
    .orderBy('a.deleted_at', 'desc')
    .orderBy('a.id', 'desc')
    .limit(limit + 1)
    .execute();
}
