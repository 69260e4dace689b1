import { sql } from 'kysely';
import type { Deps } from '../../../deps.ts';
import { rotateColumns, type RotationReport } from '../../../core/secret-rotation.ts';

/**
 * Story boards' part of `tessera rotate-secrets` (decision 0013): share links are stored only as keyed
 * hashes; live links are counted by key (each moves to the current key when next opened).
 */
export function rotateStoryboardSecrets(
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
          table: 'storyboard_links',
          column: 'token_hash',
          live: (at) => sql<boolean>`revoked_at is null and (expires_at is null or expires_at > ${at})`,
        },
      ],
    },
    legacyKeyId,
    now,
  );
}
