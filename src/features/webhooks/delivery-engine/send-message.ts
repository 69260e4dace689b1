import type { Dispatcher } from 'undici';
import type { Deps } from '../../../deps.ts';
import { fromJson } from '../../../core/db/json.ts';
import { sendWithOAuth, TokenProviderCache } from '../delivery/credentials/oauth-token.ts';
import { sendOnce, type SendResult } from '../delivery/send/send.ts';
import { webhookHeaders } from '../delivery/credentials/signing.ts';
import type { EndpointRow, HeldMessage } from './message-store.ts';
import type { OAuthConfig } from '../endpoints/endpoints.repo.ts';
import { customerIdOf } from '../../identity/index.ts';
import { toLegacyEvent } from '../delivery/payloads/legacy-format.ts';
import { targetAuthHeaders, type TargetAuth } from '../endpoints/target-auth.ts';
import { payloadForEndpoint } from '../delivery/payloads/restricted-values.ts';

/**
 * One signed attempt of a message to its endpoint: both signatures during a rotation overlap, the
 * endpoint's bearer token when it has an OAuth client (cached; refreshed once on a 401).
 */
export function createSender(
  deps: Deps,
  dispatcherOf: () => Dispatcher,
): (row: EndpointRow, message: HeldMessage) => Promise<SendResult> {
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

  // An organization's customer id never changes: looked up once per process.
  const customerIds = new Map<string, Promise<string>>();
  const customerId = (orgId: string) => {
    let id = customerIds.get(orgId);
    if (id === undefined) {
      if (customerIds.size > 10_000) customerIds.clear();
      id = customerIdOf(deps.db, orgId);
      id.catch(() => customerIds.delete(orgId));
      customerIds.set(orgId, id);
    }
    return id;
  };

  return async function send(row: EndpointRow, message: HeldMessage): Promise<SendResult> {
    const at = now();
    const secrets = [decrypt(row.secret)];
    if (row.previous_secret && (row.previous_secret_until ?? 0) > at) secrets.push(decrypt(row.previous_secret));
    // The same message gives the same body on every attempt (the signature covers what is sent), unless
    // the endpoint owner's Sensitive Data privilege changed in between (restricted values follow it).
    const event = await payloadForEndpoint(deps, row, message.eventType, message.body);
    const body =
      row.payload_format === 'legacy' ? JSON.stringify(toLegacyEvent(event, await customerId(row.org_id))) : event;
    const headers: Record<string, string> = webhookHeaders({
      msgId: message.id,
      timestamp: Math.floor(at / 1000),
      body,
      secrets,
    });
    if (row.target_auth && row.target_auth_secret)
      Object.assign(
        headers,
        targetAuthHeaders(fromJson<TargetAuth>(row.target_auth, null as never), decrypt(row.target_auth_secret)),
      );
    const input = { url: row.url, body, headers, dispatcher: dispatcherOf(), timeoutMs: row.timeout_ms, now };
    if (row.oauth && row.oauth_client_secret) {
      const config = fromJson<OAuthConfig>(row.oauth, null as never);
      const provider = tokens().get(row.id, { ...config, clientSecret: decrypt(row.oauth_client_secret) });
      return sendWithOAuth(provider, input);
    }
    return sendOnce(input);
  };
}
