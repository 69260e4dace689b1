import type { Deps } from '../../../deps.ts';
import { rotateColumns, type RotationReport } from '../../../core/secret-rotation.ts';

/** Webhooks' part of `tessera rotate-secrets` (decision 0013): every endpoint's sealed secrets, re-encrypted. */
export function rotateWebhookSecrets(
  deps: Pick<Deps, 'db' | 'keys'>,
  legacyKeyId: string,
  now: number,
): Promise<RotationReport> {
  return rotateColumns(
    deps.db,
    deps.keys,
    {
      sealed: ['secret', 'target_auth_secret', 'oauth_client_secret'].map((column) => ({
        table: 'webhook_endpoints',
        key: ['id'],
        column,
      })),
    },
    legacyKeyId,
    now,
  );
}
