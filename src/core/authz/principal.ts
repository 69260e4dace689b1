import type { Privilege } from './catalog.ts';

/** Who is calling. Built once per request by the credential resolvers; read-only afterwards. */
export interface Principal {
  readonly kind: 'user' | 'api_key';
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
}
