import type { DbOrTrx, Trx } from '../../../core/db/connect.ts';
import type { AuthSessionsTable } from '../../../core/db/schema.ts';
import type { Engine } from '../../../core/db/connect.ts';
import { groupIdsJson } from '../../identity/index.ts';
import { prepared } from '../../../core/db/prepared.ts';

/** Sessions (refresh families) and their refresh tokens. Tokens are stored only as keyed hashes. */
export type SessionRow = AuthSessionsTable;

export function insertSession(db: DbOrTrx, row: SessionRow): Promise<unknown> {
  return db.insertInto('auth_sessions').values(row).execute();
}

/**
 * The session and its user (with role privileges and group ids) in one round trip: the credential
 * check runs on every request, and on PostgreSQL each round trip is most of its cost.
 */
export const sessionWithUserQuery = prepared<{ id: string }>()((db, p) =>
  db
    .selectFrom('auth_sessions')
    .innerJoin('users', 'users.id', 'auth_sessions.user_id')
    .innerJoin('roles', 'roles.id', 'users.role_id')
    .select([
      'auth_sessions.org_id as session_org_id',
      'auth_sessions.user_id as session_user_id',
      'auth_sessions.revoked_at',
      'auth_sessions.impersonator_id',
      'auth_sessions.kind',
      'auth_sessions.scope',
      'auth_sessions.client_id',
      'users.id',
      'users.org_id',
      'users.username',
      'users.status',
      'users.role_id',
      'roles.privileges',
    ])
    .select(groupIdsJson(db).as('group_ids'))
    .where('auth_sessions.id', '=', p.id),
);

/** Compiled once (core/db/prepared.ts): it runs on every miss of the principal cache. */
export async function findSessionWithUser(db: DbOrTrx, id: string) {
  return (await sessionWithUserQuery.execute(db, { id }))[0];
}

export function findSession(db: DbOrTrx, id: string): Promise<SessionRow | undefined> {
  return db.selectFrom('auth_sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Reads a refresh token's row and, on PostgreSQL, locks it until the transaction ends (SQLite transactions are serialized anyway). */
export function lockRefreshToken(trx: Trx, engine: Engine, tokenHashes: readonly string[]) {
  return trx
    .selectFrom('auth_refresh_tokens')
    .selectAll()
    .where('token_hash', 'in', tokenHashes)
    .$if(engine === 'postgres', (q) => q.forUpdate())
    .executeTakeFirst();
}

export async function revokeSession(db: DbOrTrx, id: string, now: number, reason: string): Promise<boolean> {
  const result = await db
    .updateTable('auth_sessions')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function revokeUserSessions(
  db: DbOrTrx,
  orgId: string,
  userId: string,
  now: number,
  reason: string,
): Promise<number> {
  const result = await db
    .updateTable('auth_sessions')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('org_id', '=', orgId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export function listActiveSessions(db: DbOrTrx, orgId: string, userId: string, now: number): Promise<SessionRow[]> {
  return db
    .selectFrom('auth_sessions')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .limit(500)
    .execute();
}

export function insertRefreshToken(
  db: DbOrTrx,
  row: {
    token_hash: string;
    hash_key_id: string;
    session_id: string;
    org_id: string;
    generation: number;
    created_at: number;
  },
): Promise<unknown> {
  return db
    .insertInto('auth_refresh_tokens')
    .values({ ...row, used_at: null, successor_hash: null })
    .execute();
}

/**
 * A refresh token's row by its hash under any held key (`keys.hashes`, current first: a token stored
 * under a previous key during a secret rotation is still found).
 */
export function findRefreshToken(db: DbOrTrx, tokenHashes: readonly string[]) {
  return db.selectFrom('auth_refresh_tokens').selectAll().where('token_hash', 'in', tokenHashes).executeTakeFirst();
}

/** Re-keys a token found by a previous key's hash to the current key's (it then outlives the previous key). */
export function rehashRefreshToken(db: DbOrTrx, oldHash: string, newHash: string, keyId: string): Promise<unknown> {
  return db
    .updateTable('auth_refresh_tokens')
    .set({ token_hash: newHash, hash_key_id: keyId })
    .where('token_hash', '=', oldHash)
    .execute();
}

export function markRefreshTokenUsed(
  db: DbOrTrx,
  tokenHash: string,
  now: number,
  successorHash: string,
): Promise<unknown> {
  return db
    .updateTable('auth_refresh_tokens')
    .set({ used_at: now, successor_hash: successorHash })
    .where('token_hash', '=', tokenHash)
    .execute();
}

export function touchSession(db: DbOrTrx, id: string, now: number): Promise<unknown> {
  return db.updateTable('auth_sessions').set({ last_used_at: now }).where('id', '=', id).execute();
}

/** What a token response needs to know about the user and their organization (identity reads it). */
export { findTokenSubject } from '../../identity/index.ts';
