import type { Dispatcher } from 'undici';
import type { Deps } from '../../deps.ts';
import { fromJson } from '../../core/db/json.ts';
import { sendWithOAuth, TokenProviderCache } from './delivery/oauth-token.ts';
import { sendOnce, type SendResult } from './delivery/send.ts';
import { webhookHeaders } from './delivery/signing.ts';
import type { EndpointRow, HeldMessage } from './delivery-store.ts';
import type { OAuthConfig } from './webhooks.repo.ts';

/**
 * One signed attempt of a message to its endpoint: both signatures during a rotation overlap, the
 * endpoint's bearer token when it has an OAuth client (cached; refreshed once on a 401).
 */
export function createSender(deps: Deps, dispatcherOf: () => Dispatcher): (row: EndpointRow, message: HeldMessage) => Promise<SendResult> {
  const now = () => deps.clock.now();
  let tokenCache: TokenProviderCache | undefined;
  const tokens = () => (tokenCache ??= new TokenProviderCache({ dispatcher: dispatcherOf(), now }));
  const plain = new Map<string, string>();
  const decrypt = (sealed: string) => {
    let value = plain.get(sealed);
    if (value === undefined) {
      if (plain.size > 10_000) plain.clear();
      value = deps.keys.decrypt(sealed);
      plain.set(sealed, value);
    }
    return value;
  };

  return async function send(row: EndpointRow, message: HeldMessage): Promise<SendResult> {
    const at = now();
    const secrets = [decrypt(row.secret)];
    if (row.previous_secret && (row.previous_secret_until ?? 0) > at) secrets.push(decrypt(row.previous_secret));
    const headers: Record<string, string> = webhookHeaders({ msgId: message.id, timestamp: Math.floor(at / 1000), body: message.body, secrets });
    const input = { url: row.url, body: message.body, headers, dispatcher: dispatcherOf(), timeoutMs: row.timeout_ms, now };
    if (row.oauth && row.oauth_client_secret) {
      const config = fromJson<OAuthConfig>(row.oauth, null as never);
      const provider = tokens().get(row.id, { ...config, clientSecret: decrypt(row.oauth_client_secret) });
      return sendWithOAuth(provider, input);
    }
    return sendOnce(input);
  };
}
