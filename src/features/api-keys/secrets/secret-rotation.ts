import { sql } from 'kysely';
import type { Deps } from '../../../deps.ts';
import { rotateColumns, type RotationReport } from '../../../core/secret-rotation.ts';

/**
 * API keys' part of `tessera rotate-secrets` (decision 0013): keys are stored only as keyed hashes, so
 * nothing is re-encrypted; live keys are counted by key (each moves to the current key when next used).
 */
export function rotateApiKeySecrets(
  deps: Pick<Deps, 'db' | 'keys'>,
  legacyKeyId: string,
  now: number,
): Promise<RotationReport> {
  return rotateColumns(
    deps.db,
    deps.keys,
    {
      hashed: [
        {
          table: 'api_keys',
          column: 'key_hash',
          live: (at) => sql<boolean>`revoked_at is null and (expires_at is null or expires_at > ${at})`,
        },
      ],
    },
    legacyKeyId,
    now,
  );
}
