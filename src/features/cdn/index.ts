export { cdnRoutes } from './cdn.routes.ts';
export { assetOriginFor } from './asset-origin.ts';
