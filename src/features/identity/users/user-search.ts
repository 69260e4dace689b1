import { sql } from 'kysely';
import { Type, type Static } from 'typebox';
import type { Deps } from '../../../deps.ts';
import { requirePrivileges } from '../../../core/authz/authorize.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { groupIdsJson } from '../identity.repo.ts';
import type { User } from '../identity.schemas.ts';
import { toUser } from './users.service.ts';

/** GET /v1/user/search/{searchText} (reference §12.7): people search by any profile field, group or role name. */
export const UserSearchParamsSchema = Type.Object({
  searchText: Type.String({
    minLength: 1,
    maxLength: 200,
    description: 'Case-insensitive text matched anywhere in a profile field, group or role name; * matches everyone',
  }),
});
export const UserSearchQuerySchema = Type.Object({
  from: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 100_000,
      default: 0,
      description: 'Offset of the first user (0-based); page with from += limit',
    }),
  ),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, default: 100, description: 'Users per page (at most 100)' }),
  ),
});
export const UserSearchResultSchema = Type.Object({
  status: Type.Literal('success'),
  count: Type.Integer({ description: 'How many users match in all' }),
  data: Type.Array(Type.Ref('User')),
});

const TEXT_COLUMNS = [
  'username',
  'email',
  'first_name',
  'last_name',
  'friendly_name',
  'phone',
  'company',
  'contact',
  'country',
  'status',
] as const;

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export async function searchUsers(
  deps: Deps,
  principal: Principal,
  searchText: string,
  query: Static<typeof UserSearchQuerySchema>,
): Promise<{ status: 'success'; count: number; data: User[] }> {
  requirePrivileges(principal, 'user_management');
  const text = searchText.trim();
  const everyone = text === '*' || text === '';
  // The reference asks clients not to quote the term; strip quotes that are sent anyway.
  const pattern = `%${escapeLike(text.replace(/^"(.*)"$/, '$1').toLowerCase())}%`;
  const like = (expr: ReturnType<typeof sql>) => sql<boolean>`lower(${expr}) like ${pattern} escape '\\'`;
  const base = deps.db
    .selectFrom('users')
    .innerJoin('organizations', 'organizations.id', 'users.org_id')
    .where('users.org_id', '=', principal.orgId)
    .where('users.account_type', '!=', 'service')
    .$if(!everyone, (q) =>
      q.where((eb) =>
        eb.or([
          ...TEXT_COLUMNS.map((c) => like(sql.ref(`users.${c}`))),
          eb.exists(
            eb
              .selectFrom('user_groups as ug')
              .innerJoin('groups as g', 'g.id', 'ug.group_id')
              .select('ug.group_id')
              .whereRef('ug.user_id', '=', 'users.id')
              .where('ug.org_id', '=', principal.orgId)
              .where(like(sql.ref('g.name'))),
          ),
          eb.exists(
            eb
              .selectFrom('roles as r')
              .select('r.id')
              .whereRef('r.id', '=', 'users.role_id')
              .where('r.org_id', '=', principal.orgId)
              .where(like(sql.ref('r.name'))),
          ),
        ]),
      ),
    );
  const [rows, total] = await Promise.all([
    base
      .selectAll('users')
      .select('organizations.customer_id')
      .select(groupIdsJson(deps.db).as('group_ids'))
      .orderBy('users.username_key')
      .orderBy('users.id')
      .offset(query.from ?? 0)
      .limit(query.limit ?? 100)
      .execute(),
    base.select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { status: 'success', count: Number(total.n), data: rows.map(toUser) };
}
