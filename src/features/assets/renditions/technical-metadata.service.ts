import type { Deps } from '../../../deps.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { fromJson, toJson } from '../../../core/db/json.ts';
import { AppError, invalidField } from '../../../core/http/errors.ts';
import { loadAssetFor } from '../access.ts';

/** POST /v1/asset/{id}/technical-metadata: federated assets only (Edit Metadata). */
export async function setTechnicalMetadata(
  deps: Deps,
  principal: Principal,
  id: string,
  body: Record<string, unknown>,
): Promise<void> {
  const { asset } = await loadAssetFor(deps.db, principal, id, 'asset.edit_metadata');
  if (asset.federated !== 1) throw new AppError('bad_request', 'Asset is not federated');
  const merged = { ...fromJson<Record<string, unknown>>(asset.technical_metadata, {}), ...body };
  if (toJson(merged).length > 1_000_000) throw invalidField('body', 'technical metadata may be at most 1 MB of JSON');
  await deps.db
    .updateTable('assets')
    .set({ technical_metadata: toJson(merged), updated_at: deps.clock.now(), updated_by: principal.userId })
    .where('id', '=', asset.id)
    .execute();
}
