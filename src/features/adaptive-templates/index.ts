import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { adaptiveTemplateApiRoutes, adaptiveTemplateLaunchRoutes } from './adaptive-templates.routes.ts';

/** Adaptive templates: POST /v1/template, /v1/template/launch, registration, and the launch page. */
export async function adaptiveTemplateRoutes(app: App, deps: Deps): Promise<void> {
  await app.register(async (v1: App) => adaptiveTemplateApiRoutes(v1, deps), { prefix: '/v1' });
  await app.register(async (scope: App) => adaptiveTemplateLaunchRoutes(scope, deps));
}
