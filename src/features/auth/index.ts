import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { authRoutes } from './auth.routes.ts';
import { jwksRoute } from './well-known.routes.ts';

export { tokenResolver, principalForToken } from './resolver.ts';
export { publicJwks } from './signing-keys.ts';

/** /v1/auth/* routes. */
export function authenticationRoutes(app: App, deps: Deps): void {
  authRoutes(app, deps);
}

/** Public discovery documents at the root (outside /v1): JWKS and OpenID configuration. */
export function wellKnownRoutes(app: App, deps: Deps): void {
  jwksRoute(app, deps);
}
