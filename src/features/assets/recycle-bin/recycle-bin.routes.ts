import { Type } from 'typebox';
import type { Deps } from '../../../deps.ts';
import type { App } from '../../../core/http/app-types.ts';
import { hasPrivilege } from '../../../core/authz/authorize.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { principalOf } from '../../../core/http/authenticate.ts';
import { invalidField } from '../../../core/http/errors.ts';
import { decodeCursor, encodeCursor } from '../../../core/http/pagination.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../../core/http/responses.ts';

export interface RecycleBinQuery {
  cursor?: string;
  limit?: number;
}

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

const RecycleBinItem = Type.Object({
  objectId: Type.String({ description: 'The current version; pass it to POST /v1/asset/purge or to POST /v1/asset/{id}/delete {action: undelete}' }),
  fileId: Type.String(),
  originalFileId: Type.String(),
  filename: Type.String(),
  objectType: Type.String(),
  versionNumber: Type.Integer(),
  fileSizeInBytes: Type.Union([Type.Integer(), Type.Null()]),
  metadataDeletedEpoch: Type.Integer({ description: 'When it went to the recycle bin (epoch ms)' }),
  deletedBy: Nullable(Type.String({ description: 'The user who deleted it (null for assets deleted before this was recorded)' })),
  deletedByName: Nullable(Type.String()),
});

const RecycleBinPage = Type.Object({
  items: Type.Array(RecycleBinItem),
  nextCursor: Nullable(Type.String({ description: 'Pass as cursor for the next page; null on the last' })),
  purge: Type.Object({
    allowed: Type.Boolean({ description: 'Whether the caller holds the Purge privilege' }),
    operation: Type.String({ description: 'How to purge listed assets: POST /v1/asset/purge with {objectIds} (or {all: true})' }),
  }),
});

/**
 * The organization's recycle bin as the caller sees it: current versions of deleted assets the
 * caller may view (one indexed join through the asset's templates' grants), newest deletion first,
 * keyset-paged on (deleted_at, id).
 */
export async function listRecycleBin(deps: Deps, principal: Principal, query: RecycleBinQuery) {
  const limit = query.limit ?? 50;
  const after = query.cursor ? decodeCursor(query.cursor, 'query.cursor', 2) : null;
  if (after && (typeof after[0] !== 'number' || typeof after[1] !== 'string')) throw invalidField('query.cursor', 'is not a cursor this server issued');
  const purge = { allowed: hasPrivilege(principal, 'purge'), operation: 'POST /v1/asset/purge' };
  if (principal.groupIds.length === 0) return { items: [], nextCursor: null, purge };
  let q = deps.db
    .selectFrom('assets as a')
    .leftJoin('users as u', (j) => j.onRef('u.id', '=', 'a.deleted_by').onRef('u.org_id', '=', 'a.org_id'))
    .select(['a.id', 'a.file_id', 'a.original_file_id', 'a.filename', 'a.object_type', 'a.version_number', 'a.size', 'a.deleted_at', 'a.deleted_by', 'u.friendly_name', 'u.username'])
    .where('a.org_id', '=', principal.orgId)
    .where('a.deleted_at', 'is not', null)
    .where('a.is_current', '=', 1)
    .where(({ exists, selectFrom }) => exists(
      selectFrom('asset_security as s')
        .innerJoin('security_template_permissions as p', 'p.template_id', 's.template_id')
        .select('s.asset_id')
        .whereRef('s.asset_id', '=', 'a.id')
        .where('p.permission', '=', 'view')
        .where('p.group_id', 'in', [...principal.groupIds]),
    ));
  if (after) {
    const [at, id] = after as [number, string];
    q = q.where((eb) => eb.or([eb('a.deleted_at', '<', at), eb.and([eb('a.deleted_at', '=', at), eb('a.id', '<', id)])]));
  }
  const rows = await q.orderBy('a.deleted_at', 'desc').orderBy('a.id', 'desc').limit(limit + 1).execute();
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    items: page.map((r) => ({
      objectId: r.id, fileId: r.file_id, originalFileId: r.original_file_id, filename: r.filename, objectType: r.object_type,
      versionNumber: Number(r.version_number), fileSizeInBytes: r.size === null ? null : Number(r.size), metadataDeletedEpoch: Number(r.deleted_at),
      deletedBy: r.deleted_by, deletedByName: r.deleted_by ? (r.friendly_name || r.username || null) : null,
    })),
    nextCursor: rows.length > limit && last ? encodeCursor([Number(last.deleted_at), last.id]) : null,
    purge,
  };
}

export function recycleBinRoutes(app: App, deps: Deps): void {
  app.get('/asset/recycle-bin', {
    schema: {
      operationId: 'ListRecycleBin', tags: ['assets'],
      summary: 'Deleted assets of the organization the caller may view, newest deletion first, with who deleted them and when; purge them with POST /v1/asset/purge',
      querystring: Type.Object({
        cursor: Type.Optional(Type.String({ maxLength: 1000, description: 'nextCursor of the previous page; omit on the first' })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Page size (default 50)' })),
      }),
      response: { 200: RecycleBinPage, ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed') },
    },
  }, async (request) => listRecycleBin(deps, principalOf(request), request.query));
}
