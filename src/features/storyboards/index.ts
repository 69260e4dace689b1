export { storyboardRoutes } from './storyboards.routes.ts';
export { storyboardSharedRoutes } from './sharing/shared.routes.ts';
export { content, type AssetCard, type ContentSource } from './view/content.ts';
export { rotateStoryboardSecrets } from './sharing/secret-rotation.ts';
