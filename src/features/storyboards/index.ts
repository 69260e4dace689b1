import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { addStoryboardSchemas, storyboardApiRoutes } from './storyboards.routes.ts';
import { storyboardSharedRoutes } from './shared.routes.ts';

export { content, type AssetCard, type ContentSource } from './content.ts';

/** Story boards: the API under /v1 and the public share-link pages under /shared. */
export async function storyboardRoutes(app: App, deps: Deps): Promise<void> {
  addStoryboardSchemas(app);
  await app.register(async (v1: App) => storyboardApiRoutes(v1, deps), { prefix: '/v1' });
  await app.register(async (shared: App) => storyboardSharedRoutes(shared, deps));
}
