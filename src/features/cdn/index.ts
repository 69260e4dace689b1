export { cdnRoutes } from './cdn.routes.ts';
export { assetOriginFor } from './origin/asset-origin.ts';
