import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { authRoutes } from './auth.routes.ts';
import { discoveryRoute, jwksRoute } from './oauth/well-known.routes.ts';

export { authJobHandlers } from './auth.jobs.ts';
export { tokenResolver, principalForToken } from './token-resolver.ts';
export { oauthRoutes, type OAuthHooks } from './oauth/oauth.routes.ts';
export {
  checkAuthorizeRequest,
  issueAuthorizationCode,
  type AuthorizeCheck,
  type AuthorizeParams,
} from './oauth/oauth.service.ts';
export type { ProviderLogout } from './oauth/end-session.service.ts';
export type { LoginProvider } from './oauth/login-page/oauth.page.ts';
export { errorPage, noticePage, pageSecurity } from './oauth/login-page/oauth.page.ts';
export { publicJwks } from './keys/signing-keys.ts';
export { checkSecretKey, recordCurrentSecretKey, SECRET_VERIFIER_KEY, verifiedKeyId } from './keys/secret-check.ts';
export { revokeUserSessions } from './sessions/sessions.repo.ts';
export { createAuthRuntime, type AuthRuntime } from './runtime.ts';
export { linkPasswordSucceeded, reserveLinkPasswordAttempt } from './throttle/login-throttle.ts';
export { seedWebAppClients, WEB_APP_CLIENT_ID, WEB_APP_CALLBACK_PATH } from './oauth/clients/web-app-client.ts';

/** /v1/auth/* routes: tokens, impersonation, sessions. */
export function authenticationRoutes(app: App, deps: Deps): void {
  authRoutes(app, deps);
}

/** Public discovery documents at the root (outside /v1): JWKS and OpenID configuration. */
export function wellKnownRoutes(app: App, deps: Deps): void {
  jwksRoute(app, deps);
  discoveryRoute(app, deps);
}
export { rotateAuthSecrets } from './keys/secret-rotation.ts';
