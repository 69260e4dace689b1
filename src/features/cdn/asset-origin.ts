import type { AssetOrigin } from './edge/edge.ts';
import type { Deps } from '../../deps.ts';
import type { Principal } from '../../core/authz/principal.ts';

/**
 * Publishing assets to a zone: the caller must be allowed to see every asset. Until the assets
 * feature is part of this build, ids are recorded as given.
 */
export async function checkPublishable(_deps: Deps, _principal: Principal, _assetIds: string[]): Promise<void> {}

/** The edge's origin for asset-store zones, or undefined while the assets feature is not in this build. */
export function assetOriginFor(_deps: Deps): AssetOrigin | undefined {
  return undefined;
}
