import { timingSafeEqual } from 'node:crypto';
import type { Deps } from '../../../deps.ts';
import type { Keyring } from '../../../core/keyring.ts';

/** server_state key holding a verifier of the secret the database was initialised with (never the secret). */
export const SECRET_VERIFIER_KEY = 'auth.secret_verifier';
const LABEL = 'tessera secret key verifier v1';

/**
 * `keyId`: the held key the database's verifier names (the current key, or during a rotation a
 * previous one, until `tessera rotate-secrets` moves the verifier to the current key).
 */
export type SecretCheck = { ok: true; written: boolean; keyId: string } | { ok: false };

const verifierOf = (keys: Keyring, keyId: string) => `v1:${keys.hashWith(keyId, 'secret-verifier', LABEL)}`;

const readVerifier = async (deps: Pick<Deps, 'db'>) =>
  (await deps.db.selectFrom('server_state').select('value').where('key', '=', SECRET_VERIFIER_KEY).executeTakeFirst())
    ?.value;

/** The held key a stored verifier names, if any. */
function matchingKey(keys: Keyring, stored: string): string | undefined {
  const a = Buffer.from(stored);
  let found: string | undefined;
  for (const keyId of keys.keyIds) {
    const b = Buffer.from(verifierOf(keys, keyId));
    if (a.length === b.length && timingSafeEqual(a, b) && found === undefined) found = keyId;
  }
  return found;
}

/**
 * Every process sharing a database must hold the same TESSERA_SECRET_KEY (sealed signing keys,
 * hashed API keys and refresh tokens are all keyed by it). The database keeps an HMAC of a fixed
 * label under the key; a process none of whose keys (current, or TESSERA_SECRET_KEY_PREVIOUS during a
 * rotation) gives that verifier must not start. A database without a verifier (made before this
 * check, or new) gets this process's current key's, once across racing starts.
 */
export async function checkSecretKey(deps: Pick<Deps, 'db' | 'keys' | 'clock'>): Promise<SecretCheck> {
  let stored = await readVerifier(deps);
  let written = false;
  if (stored === undefined) {
    const inserted = await deps.db
      .insertInto('server_state')
      .values({ key: SECRET_VERIFIER_KEY, value: verifierOf(deps.keys, deps.keys.keyId), updated_at: deps.clock.now() })
      .onConflict((oc) => oc.column('key').doNothing())
      .executeTakeFirst();
    written = Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
    stored = await readVerifier(deps);
  }
  const keyId = matchingKey(deps.keys, stored ?? '');
  return keyId === undefined ? { ok: false } : { ok: true, written, keyId };
}

/**
 * Moves the database's verifier to the current key (the last step of `tessera rotate-secrets`, once
 * nothing sealed needs a previous key): from then on a process must hold the current key.
 * Returns false when the stored verifier names no key this process holds (nothing is changed).
 */
export async function recordCurrentSecretKey(deps: Pick<Deps, 'db' | 'keys' | 'clock'>): Promise<boolean> {
  const stored = await readVerifier(deps);
  if (stored !== undefined && matchingKey(deps.keys, stored) === undefined) return false;
  const value = verifierOf(deps.keys, deps.keys.keyId);
  await deps.db
    .insertInto('server_state')
    .values({ key: SECRET_VERIFIER_KEY, value, updated_at: deps.clock.now() })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value, updated_at: deps.clock.now() }))
    .execute();
  return true;
}

/** The id of the key the database's verifier names, when this process holds it. */
export async function verifiedKeyId(deps: Pick<Deps, 'db' | 'keys'>): Promise<string | undefined> {
  const stored = await readVerifier(deps);
  return stored === undefined ? undefined : matchingKey(deps.keys, stored);
}
