import { createHash } from 'node:crypto';
import type { DbOrTrx } from '../../../../core/db/connect.ts';
import type { OAuthClientsTable } from '../../../../core/db/schema.ts';

/**
 * The web app at /app is Tessera's own public OAuth client (code flow + PKCE). It serves every
 * organization from one URL, so before sign-in it cannot know which organization's client to name:
 * it uses this fixed client id, and the sign-in resolves it to the signed-in user's organization's
 * "Tessera web app" client row (one per organization, a deterministic id, created at start-up or
 * on first use). An administrator who deletes that row turns the web app off for the organization
 * (its sessions end, as for any deleted client); start-up never brings a deleted row back.
 */
export const WEB_APP_CLIENT_ID = 'tessera-web';
export const WEB_APP_CLIENT_NAME = 'Tessera web app';
/** The app's redirect path (on the public URL's origin). */
export const WEB_APP_CALLBACK_PATH = '/app/callback';

/** The organization's web-app client row id: a name-based UUID (version 8) of the organization id. */
export function webAppClientRowId(orgId: string): string {
  const hex = createHash('sha256').update(`tessera-web-app\n${orgId}`).digest('hex');
  const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The client as seen before sign-in: no organization yet, public, no stored redirect URIs. */
export function webAppClient(): OAuthClientsTable {
  return {
    id: WEB_APP_CLIENT_ID,
    org_id: '',
    name: WEB_APP_CLIENT_NAME,
    redirect_uris: '[]',
    secret_hash: null,
    hash_key_id: null,
    created_by: null,
    created_at: 0,
    revoked_at: null,
  };
}

export function isWebAppClient(client: { id: string }): boolean {
  return client.id === WEB_APP_CLIENT_ID;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * The app's callback on the public URL's origin. When the public URL is a loopback address, the
 * same port on any loopback name is the same machine (a person opens localhost, the default public
 * URL says 127.0.0.1), so those are accepted too.
 */
export function webAppRedirectAllowed(publicUrl: string, redirectUri: string): boolean {
  let target: URL;
  let base: URL;
  try {
    target = new URL(redirectUri);
    base = new URL(publicUrl);
  } catch {
    return false;
  }
  if (target.search !== '' || target.hash !== '' || target.username !== '' || target.password !== '') return false;
  const basePath = base.pathname.replace(/\/+$/, '');
  if (target.pathname !== `${basePath}${WEB_APP_CALLBACK_PATH}`) return false;
  if (target.origin === base.origin) return true;
  return (
    target.protocol === 'http:' &&
    base.protocol === 'http:' &&
    LOOPBACK.has(base.hostname) &&
    LOOPBACK.has(target.hostname) &&
    target.port === base.port
  );
}

/** Does a code or session issued to `clientId` in `orgId` belong to `client` (the web app's alias included)? */
export function sameClient(client: { id: string }, clientId: string | null, orgId: string): boolean {
  if (isWebAppClient(client)) return clientId === webAppClientRowId(orgId);
  return clientId === client.id;
}

/** The organization's web-app client row, created when missing; undefined when an administrator deleted it. */
export async function ensureWebAppClient(
  db: DbOrTrx,
  orgId: string,
  now: number,
): Promise<OAuthClientsTable | undefined> {
  const id = webAppClientRowId(orgId);
  let row = await db.selectFrom('oauth_clients').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) {
    await db
      .insertInto('oauth_clients')
      .values({
        id,
        org_id: orgId,
        name: WEB_APP_CLIENT_NAME,
        redirect_uris: '[]',
        secret_hash: null,
        created_by: null,
        created_at: now,
        revoked_at: null,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    row = await db.selectFrom('oauth_clients').selectAll().where('id', '=', id).executeTakeFirst();
  }
  return row && row.revoked_at === null ? row : undefined;
}

/** Start-up: every organization (`orgIds`, from identity) gets its web-app client row (a deleted one is left deleted). */
export async function seedWebAppClients(db: DbOrTrx, now: number, orgIds: readonly string[]): Promise<number> {
  let created = 0;
  for (const orgId of orgIds) {
    const id = webAppClientRowId(orgId);
    const result = await db
      .insertInto('oauth_clients')
      .values({
        id,
        org_id: orgId,
        name: WEB_APP_CLIENT_NAME,
        redirect_uris: '[]',
        secret_hash: null,
        created_by: null,
        created_at: now,
        revoked_at: null,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    created += Number(result.numInsertedOrUpdatedRows ?? 0);
  }
  return created;
}
