import { sql } from 'kysely';
import type { Deps } from '../../../deps.ts';
import { rotateColumns, type RotationReport } from '../../../core/secret-rotation.ts';

/**
 * Auth's part of `tessera rotate-secrets` (decision 0013): the sealed JWT signing keys are re-encrypted
 * under the current secret; refresh tokens and OAuth client secrets, stored only as keyed hashes, are
 * counted by key (they move to the current key when next used).
 */
export function rotateAuthSecrets(
  deps: Pick<Deps, 'db' | 'keys'>,
  legacyKeyId: string,
  now: number,
): Promise<RotationReport> {
  return rotateColumns(
    deps.db,
    deps.keys,
    {
      sealed: [{ table: 'auth_signing_keys', key: ['kid'], column: 'private_jwk_sealed' }],
      hashed: [
        {
          table: 'auth_refresh_tokens',
          column: 'token_hash',
          live: (at) =>
            sql<boolean>`used_at is null and session_id in (select id from auth_sessions where revoked_at is null and expires_at > ${at})`,
        },
        { table: 'oauth_clients', column: 'secret_hash', live: () => sql<boolean>`revoked_at is null` },
      ],
    },
    legacyKeyId,
    now,
  );
}
