import type { Privilege } from './catalog.ts';

/**
 * How the caller authenticated. Only `password` (a person's own sign-in, first party) may create
 * lasting credentials; the others act within what they were given.
 */
export type CredentialVia = 'password' | 'impersonation' | 'oauth' | 'api_key';

/** Who is calling. Built once per request by the credential resolvers; read-only afterwards. */
export interface Principal {
  readonly kind: 'user' | 'api_key';
  /** The credential behind this request (see CredentialVia). */
  readonly via: CredentialVia;
  readonly orgId: string;
  /** The user, or for an API key its service account. */
  readonly userId: string;
  readonly username: string;
  readonly roleId: string;
  readonly privileges: ReadonlySet<Privilege>;
  readonly groupIds: readonly string[];
  /** Token session (refresh family) the request authenticated with, if any. */
  readonly sessionId?: string;
  /** Set when an administrator acts as this user. */
  readonly impersonatorId?: string;
  readonly apiKeyId?: string;
  /** Scopes granted to a third-party (OAuth) client; absent for first-party credentials, which have no scope limit. */
  readonly scopes?: ReadonlySet<string>;
  /** The OAuth client a third-party token was issued to. */
  readonly clientId?: string;
}
