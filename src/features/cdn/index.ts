export { cdnRoutes } from './cdn.routes.ts';
export { assetOriginFor, deliveringAssetOrigin } from './origin/asset-origin.ts';
