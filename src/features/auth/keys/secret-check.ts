import { timingSafeEqual } from 'node:crypto';
import type { Deps } from '../../../deps.ts';

/** server_state key holding a verifier of the secret the database was initialised with (never the secret). */
export const SECRET_VERIFIER_KEY = 'auth.secret_verifier';
const LABEL = 'tessera secret key verifier v1';

export type SecretCheck = { ok: true; written: boolean } | { ok: false };

/**
 * Every process sharing a database must hold the same TESSERA_SECRET_KEY (sealed signing keys,
 * hashed API keys and refresh tokens are all keyed by it). The database keeps an HMAC of a fixed
 * label under the key; a process whose key gives another verifier must not start. A database
 * without a verifier (made before this check, or new) gets this process's, once across racing starts.
 */
export async function checkSecretKey(deps: Pick<Deps, 'db' | 'keys' | 'clock'>): Promise<SecretCheck> {
  const mine = `v1:${deps.keys.hash('secret-verifier', LABEL)}`;
  const read = async () =>
    (await deps.db.selectFrom('server_state').select('value').where('key', '=', SECRET_VERIFIER_KEY).executeTakeFirst())
      ?.value;
  let stored = await read();
  let written = false;
  if (stored === undefined) {
    const inserted = await deps.db
      .insertInto('server_state')
      .values({ key: SECRET_VERIFIER_KEY, value: mine, updated_at: deps.clock.now() })
      .onConflict((oc) => oc.column('key').doNothing())
      .executeTakeFirst();
    written = Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
    stored = await read();
  }
  const a = Buffer.from(stored ?? '');
  const b = Buffer.from(mine);
  return a.length === b.length && timingSafeEqual(a, b) ? { ok: true, written } : { ok: false };
}
