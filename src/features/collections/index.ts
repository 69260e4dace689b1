export { collectionRoutes } from './collections.routes.ts';
export { getCollectionForViewer, loadVisibleCollection } from './collections.service.ts';
export { collectionAssetsForViewer, type CollectionAssetsOptions } from './collections-search.service.ts';
export type { Collection } from './collections.schemas.ts';
export { collectionJobHandlers } from './collections.jobs.ts';
