import type { Deps } from '../../deps.ts';
import { rotateColumns, type RotationReport } from '../../core/secret-rotation.ts';

/**
 * Single sign-on's part of `tessera rotate-secrets` (decision 0013): providers' client secrets, the
 * identities' last id tokens and the sign-ins under way (nonce, PKCE verifier), re-encrypted.
 */
export function rotateSsoSecrets(
  deps: Pick<Deps, 'db' | 'keys'>,
  legacyKeyId: string,
  now: number,
): Promise<RotationReport> {
  return rotateColumns(
    deps.db,
    deps.keys,
    {
      sealed: [
        { table: 'sso_providers', key: ['id'], column: 'client_secret' },
        { table: 'sso_identities', key: ['provider_id', 'subject'], column: 'id_token' },
        { table: 'sso_logins', key: ['state_hash'], column: 'nonce' },
        { table: 'sso_logins', key: ['state_hash'], column: 'code_verifier' },
      ],
    },
    legacyKeyId,
    now,
  );
}
