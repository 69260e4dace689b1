/**
 * The contract between the CDN API (`features/cdn`) and the edge program (`src/edge/`): the control
 * channel (control.ts), the zone model (zone-model.ts) and the origin types. Both sides import it;
 * `src/edge/` reaches into features only through this module and `features/cdn/index.ts`, and
 * `features/cdn` never imports `src/edge/` (the arrow points from the edge to the API, never back).
 */
import type { Readable } from 'node:stream';
import type { ZoneConfig } from './zone-model.ts';

export {
  checkControlAuth,
  CONTROL_AUTH_HEADER,
  EDGE_LIVENESS_MS,
  type ControlMessage,
  type PurgeMessage,
} from './control.ts';
export {
  ipMatcher,
  REGION_GEO_ZONE,
  referrerMatches,
  signToken,
  verifyToken,
  zoneConfigFromRow,
  type IpMatcher,
  type ZoneConfig,
  type ZoneSettings,
} from './zone-model.ts';

/**
 * The query parameters of an asset-store zone's URL that ask for an image rendition on request
 * (a delivery preset or its parameters; features/assets' delivery reads the same names). They are
 * kept, sorted, in the cache key even when the zone ignores query strings.
 */
export const DELIVERY_QUERY_KEYS: ReadonlySet<string> = new Set([
  'preset',
  'width',
  'height',
  'fit',
  'format',
  'quality',
]);

/** An origin's answer as the edge caches it. */
export interface OriginResponse {
  status: number;
  /** Lower-case header names, multi-values joined. */
  headers: Record<string, string>;
  body: Buffer;
  ms: number;
  /**
   * Set for an object too big to hold whole (issue 23, defect 8): `body` is empty and the bytes
   * come from this stream, `size` of them. The edge streams it to disk or straight to the client.
   */
  stream?: Readable;
  size?: number;
}

/** The origin of asset-store zones (published assets only), implemented by the API side (`assetOriginFor`). */
export interface AssetOrigin {
  /** Objects of more than `inlineMaxBytes` come back as a stream (never read whole); smaller ones as a body. */
  fetch(
    zone: ZoneConfig,
    path: string,
    headers: Record<string, string>,
    /**
     * `query`: the request's query string as the edge keys its cache (sorted, token parameters
     * removed); a preset or delivery parameters in it ask for an image rendition on request.
     */
    options?: { inlineMaxBytes: number; query?: string },
  ): Promise<OriginResponse>;
}
