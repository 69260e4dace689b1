import type { Deps } from '../../../deps.ts';
import { hasPrivilege } from '../../../core/authz/authorize.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { invalidField } from '../../../core/http/errors.ts';
import { decodeCursor, encodeCursor } from '../../../core/http/pagination.ts';
import { userNames } from '../../identity/index.ts';
import { mayPerform, permitted } from '../../../core/authz/permissions.ts';
import { callerPermissions } from '../access.ts';
import { securityOf } from '../assets.repo.ts';
import { deletedAssetsVisibleTo } from './recycle-bin.repo.ts';

export interface RecycleBinQuery {
  cursor?: string;
  limit?: number;
}

/**
 * The organization's recycle bin as the caller sees it: current versions of deleted assets the
 * caller may view, newest deletion first, keyset-paged on (deleted_at, id), with who deleted them
 * and whether the caller may purge them.
 */
export async function listRecycleBin(deps: Deps, principal: Principal, query: RecycleBinQuery) {
  const limit = query.limit ?? 50;
  const after = query.cursor ? decodeCursor(query.cursor, 'query.cursor', 2) : null;
  if (after && (typeof after[0] !== 'number' || typeof after[1] !== 'string'))
    throw invalidField('query.cursor', 'is not a cursor this server issued');
  const purge = { allowed: hasPrivilege(principal, 'purge'), operation: 'POST /v1/asset/purge' };
  if (principal.groupIds.length === 0) return { items: [], nextCursor: null, purge };
  const rows = await deletedAssetsVisibleTo(deps.db, principal, after as [number, string] | null, limit);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const deleters = await userNames(
    deps.db,
    principal.orgId,
    page.flatMap((r) => (r.deleted_by ? [r.deleted_by] : [])),
  );
  // What the caller may do with each item, so a client shows it before the click (the API still checks).
  const security = await securityOf(
    deps.db,
    principal.orgId,
    page.map((r) => r.id),
  );
  const may = (id: string, action: 'asset.delete' | 'asset.purge') => {
    const held = security.get(id);
    return mayPerform(principal, action) && held !== undefined && permitted(callerPermissions(principal, held), action);
  };
  return {
    items: page.map((r) => ({
      objectId: r.id,
      fileId: r.file_id,
      originalFileId: r.original_file_id,
      filename: r.filename,
      objectType: r.object_type,
      versionNumber: Number(r.version_number),
      fileSizeInBytes: r.size === null ? null : Number(r.size),
      metadataDeletedEpoch: Number(r.deleted_at),
      deletedBy: r.deleted_by,
      deletedByName: r.deleted_by
        ? deleters.get(r.deleted_by)?.friendlyName || deleters.get(r.deleted_by)?.username || null
        : null,
      mayRestore: may(r.id, 'asset.delete'),
      mayPurge: may(r.id, 'asset.purge'),
    })),
    nextCursor: rows.length > limit && last ? encodeCursor([Number(last.deleted_at), last.id]) : null,
    purge,
  };
}
