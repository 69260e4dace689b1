import type { Deps } from '../../deps.ts';
import type { OAuthHooks } from '../auth/index.ts';
import { loginProviders, providerLogout } from './signin.service.ts';

export { ssoRoutes } from './sso.routes.ts';
export { createSsoRuntime, type SsoRuntime } from './runtime.ts';

/** What the OAuth login page and end-session endpoint (features/auth) use of single sign-on; wired in app.ts. */
export function ssoOAuthHooks(deps: Deps): Required<OAuthHooks> {
  return {
    loginProviders: (orgId, request) => loginProviders(deps, orgId, request),
    providerLogout: providerLogout(deps),
  };
}
export { rotateSsoSecrets } from './secret-rotation.ts';
