import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  configHash,
  createTokenProvider,
  sendWithOAuth,
  TokenFetchError,
  type TokenProviderOptions,
  TokenProviderCache,
  withOAuthRetry,
} from './oauth-token.ts';
import { createGuardedDispatcher } from '../../../../core/net/ssrf.ts';

interface TokenRequest {
  headers: IncomingMessage['headers'];
  form: URLSearchParams;
}

async function listen(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const close = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

describe('OAuth client-credentials token provider', () => {
  let tokenServer: Server;
  let receiver: Server;
  let tokenUrl = '';
  let receiverUrl = '';
  let requests: TokenRequest[] = [];
  let reply: (n: number) => { status: number; body: string } = () => ({ status: 200, body: '' });
  let validToken = '';
  let receiverHits = 0;
  let clock = 0;
  const dispatcher = createGuardedDispatcher({ allowPrivate: true });
  const now = () => clock;
  const bearer = (n: number, expiresIn = 3600) => ({
    status: 200,
    body: JSON.stringify({ access_token: `tok-${n}`, token_type: 'Bearer', expires_in: expiresIn }),
  });

  const options = (extra: Partial<TokenProviderOptions> = {}): TokenProviderOptions => ({
    tokenUrl: `${tokenUrl}/oauth/token`,
    clientId: 'tessera-client',
    clientSecret: 's3cr3t',
    authMethod: 'client_secret_basic',
    dispatcher,
    now,
    ...extra,
  });

  before(async () => {
    ({ server: tokenServer, url: tokenUrl } = await listen((req, res, body) => {
      requests.push({ headers: req.headers, form: new URLSearchParams(body) });
      const { status, body: out } = reply(requests.length);
      res.writeHead(status, { 'content-type': 'application/json' }).end(out);
    }));
    ({ server: receiver, url: receiverUrl } = await listen((req, res) => {
      receiverHits += 1;
      res.writeHead(req.headers.authorization === `Bearer ${validToken}` ? 200 : 401).end();
    }));
  });
  after(async () => {
    await dispatcher.close();
    await close(tokenServer);
    await close(receiver);
  });
  beforeEach(() => {
    requests = [];
    reply = (n) => bearer(n);
    clock = 1_700_000_000_000;
    receiverHits = 0;
  });

  it('client_secret_basic: posts the client-credentials form and caches the token (one fetch for many calls)', async () => {
    const provider = createTokenProvider(
      options({
        clientId: 'client id:1',
        scope: ['assets.read', 'hooks'],
        extraParams: { audience: 'https://receiver.example' },
      }),
    );
    for (let i = 0; i < 20; i++) assert.equal(await provider.getToken(), 'tok-1');
    assert.equal(requests.length, 1);
    const { headers, form } = requests[0]!;
    assert.equal(headers['content-type'], 'application/x-www-form-urlencoded');
    assert.equal(headers.authorization, `Basic ${Buffer.from('client+id%3A1:s3cr3t').toString('base64')}`);
    assert.equal(form.get('grant_type'), 'client_credentials');
    assert.equal(form.get('scope'), 'assets.read hooks');
    assert.equal(form.get('audience'), 'https://receiver.example');
    assert.equal(form.get('client_secret'), null);
  });

  it('client_secret_post: credentials in the form, no Authorization header', async () => {
    const provider = createTokenProvider(options({ authMethod: 'client_secret_post', scope: 'a b' }));
    assert.equal(await provider.getToken(), 'tok-1');
    const { headers, form } = requests[0]!;
    assert.equal(headers.authorization, undefined);
    assert.equal(form.get('client_id'), 'tessera-client');
    assert.equal(form.get('client_secret'), 's3cr3t');
    assert.equal(form.get('scope'), 'a b');
  });

  it('extraParams cannot override the grant type or the client credentials', async () => {
    const provider = createTokenProvider(
      options({
        authMethod: 'client_secret_post',
        extraParams: { grant_type: 'password', client_secret: 'x', resource: 'r1' },
      }),
    );
    await provider.getToken();
    const { form } = requests[0]!;
    assert.equal(form.get('grant_type'), 'client_credentials');
    assert.equal(form.get('client_secret'), 's3cr3t');
    assert.equal(form.get('resource'), 'r1');
  });

  it('refreshes 60 s before expiry, and 10 % early for short-lived tokens', async () => {
    const provider = createTokenProvider(options());
    assert.equal(await provider.getToken(), 'tok-1');
    clock += 3539_000;
    assert.equal(await provider.getToken(), 'tok-1');
    clock += 2_000;
    assert.equal(await provider.getToken(), 'tok-2');
    assert.equal(requests.length, 2);

    reply = (n) => bearer(n, 100);
    const short = createTokenProvider(options());
    const first = await short.getToken();
    clock += 89_000;
    assert.equal(await short.getToken(), first);
    clock += 2_000;
    assert.notEqual(await short.getToken(), first);
  });

  it('single-flight: 50 concurrent callers share one token request', async () => {
    const provider = createTokenProvider(options());
    const tokens = await Promise.all(Array.from({ length: 50 }, () => provider.getToken()));
    assert.equal(requests.length, 1);
    assert.ok(tokens.every((t) => t === 'tok-1'));
  });

  it('invalidate(): the next call fetches anew; invalidating a stale token keeps the newer one', async () => {
    const provider = createTokenProvider(options());
    assert.equal(await provider.getToken(), 'tok-1');
    provider.invalidate('tok-1');
    assert.equal(await provider.getToken(), 'tok-2');
    provider.invalidate('tok-1');
    assert.equal(await provider.getToken(), 'tok-2');
    assert.equal(requests.length, 2);
  });

  it('minRefreshIntervalMs: a just-fetched token is not dropped', async () => {
    const provider = createTokenProvider(options({ minRefreshIntervalMs: 1000 }));
    await provider.getToken();
    provider.invalidate('tok-1');
    assert.equal(await provider.getToken(), 'tok-1');
    clock += 1000;
    provider.invalidate('tok-1');
    assert.equal(await provider.getToken(), 'tok-2');
  });

  it('token server errors carry a clear class, and are not retried during the cooldown', async () => {
    reply = () => ({ status: 401, body: JSON.stringify({ error: 'invalid_client', error_description: 'bad secret' }) });
    const provider = createTokenProvider(options());
    await assert.rejects(provider.getToken(), (err: TokenFetchError) => {
      assert.ok(err instanceof TokenFetchError);
      assert.equal(err.kind, 'http_status');
      assert.equal(err.status, 401);
      assert.equal(err.oauthError, 'invalid_client');
      assert.doesNotMatch(err.message, /s3cr3t/);
      return true;
    });
    await assert.rejects(provider.getToken(), TokenFetchError);
    assert.equal(requests.length, 1, 'cooldown: no second request');
    clock += 5_000;
    reply = (n) => bearer(n);
    assert.equal(await provider.getToken(), 'tok-2');
  });

  it('malformed token responses are invalid_response', async () => {
    for (const body of [
      'not json',
      '{}',
      '{"access_token":""}',
      '{"access_token":"t","token_type":"mac"}',
      '[]',
      '{"access_token":"a b"}',
      '{"access_token":"x\\r\\nx-injected: 1"}',
    ]) {
      reply = () => ({ status: 200, body });
      await assert.rejects(
        createTokenProvider(options()).getToken(),
        (err: TokenFetchError) => err.kind === 'invalid_response',
      );
    }
  });

  it('a token without expires_in is cached for the default lifetime', async () => {
    reply = (n) => ({ status: 200, body: JSON.stringify({ access_token: `tok-${n}`, token_type: 'bearer' }) });
    const provider = createTokenProvider(options());
    assert.equal(await provider.getToken(), 'tok-1');
    clock += 200_000;
    assert.equal(await provider.getToken(), 'tok-1');
    clock += 100_000;
    assert.equal(await provider.getToken(), 'tok-2');
  });

  it('an unreachable or internal token URL is a transport error with its class', async () => {
    const dead = await listen(() => {});
    await close(dead.server);
    await assert.rejects(
      createTokenProvider(options({ tokenUrl: `${dead.url}/token` })).getToken(),
      (err: TokenFetchError) => err.kind === 'transport' && err.transportClass === 'connection_refused',
    );
    const strict = createGuardedDispatcher({ allowPrivate: false });
    await assert.rejects(
      createTokenProvider(options({ dispatcher: strict })).getToken(),
      (err: TokenFetchError) => err.transportClass === 'ssrf_blocked',
    );
    await strict.close();
    assert.equal(requests.length, 0);
  });

  it('withOAuthRetry: sends the bearer token; on 401 refreshes once and retries', async () => {
    const provider = createTokenProvider(options());
    validToken = 'tok-1';
    const ok = await sendWithOAuth(provider, {
      url: `${receiverUrl}/hook`,
      body: '{}',
      headers: { 'content-type': 'application/json' },
      dispatcher,
    });
    assert.equal(ok.ok, true);
    assert.equal(ok.oauthRetried, false);
    validToken = 'tok-2'; // the receiver revoked tok-1
    const retried = await sendWithOAuth(provider, { url: `${receiverUrl}/hook`, body: '{}', headers: {}, dispatcher });
    assert.equal(retried.ok, true);
    assert.equal(retried.status, 200);
    assert.equal(retried.oauthRetried, true);
    assert.equal(requests.length, 2);
    assert.equal(receiverHits, 3);
  });

  it('withOAuthRetry: a receiver that always answers 401 costs exactly one refresh and one retry', async () => {
    const provider = createTokenProvider(options());
    validToken = 'never';
    const result = await sendWithOAuth(provider, { url: `${receiverUrl}/hook`, body: '{}', headers: {}, dispatcher });
    assert.equal(result.ok, false);
    assert.equal(result.status, 401);
    assert.equal(result.errorClass, 'http_status');
    assert.equal(result.oauthRetried, true);
    assert.equal(requests.length, 2);
    assert.equal(receiverHits, 2);
  });

  it('withOAuthRetry: no token means nothing is sent and the class is oauth_token', async () => {
    reply = () => ({ status: 500, body: 'down' });
    let sent = 0;
    const result = await withOAuthRetry(createTokenProvider(options()), async () => {
      sent += 1;
      throw new Error('unreachable');
    });
    assert.equal(result.ok, false);
    assert.equal(result.errorClass, 'oauth_token');
    assert.match(result.error!, /HTTP 500/);
    assert.equal(sent, 0);
  });

  it('TokenProviderCache: one provider per endpoint and configuration, LRU-bounded', async () => {
    const cache = new TokenProviderCache({ dispatcher, now, maxEntries: 2 });
    const config = {
      tokenUrl: `${tokenUrl}/oauth/token`,
      clientId: 'c',
      clientSecret: 's',
      scope: ['a', 'b'],
      extraParams: { x: '1', y: '2' },
    };
    const a = cache.get('ep-a', config);
    assert.equal(
      cache.get('ep-a', { ...config, scope: 'a b', extraParams: { y: '2', x: '1' } }),
      a,
      'equivalent config, same provider',
    );
    await a.getToken();
    await cache.get('ep-a', config).getToken();
    assert.equal(requests.length, 1);
    const rotated = cache.get('ep-a', { ...config, clientSecret: 's2' });
    assert.notEqual(rotated, a);
    assert.notEqual(configHash(config), configHash({ ...config, clientSecret: 's2' }));
    cache.get('ep-b', config);
    cache.get('ep-c', config);
    assert.equal(cache.size, 2);
    cache.delete('ep-c');
    assert.equal(cache.size, 1);
  });
});
