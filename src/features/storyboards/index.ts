export { storyboardRoutes } from './storyboards.routes.ts';
export { storyboardSharedRoutes } from './shared.routes.ts';
export { content, type AssetCard, type ContentSource } from './content.ts';
