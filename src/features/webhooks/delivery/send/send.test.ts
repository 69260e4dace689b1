import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { generateSecret, webhookHeaders } from '../credentials/signing.ts';
import { MAX_RESPONSE_BYTES, parseRetryAfter, sendOnce } from './send.ts';
import { createGuardedDispatcher } from '../../../../core/net/ssrf.ts';

// A self-signed certificate for localhost/127.0.0.1 (test fixture only, valid until 2126).
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgN4M4zRQFcuwmw77q
Zja3vqymu/VhJr6RAWIlsrfrwvqhRANCAAT94ppnCLt/D8Q2g6KOQjL8i//bFatb
PV4P8tnkUIzwGZo3zjdoIPLDUtnkuF71XSpE5ryIopN4easSJNyS1HOS
-----END PRIVATE KEY-----`;
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBnDCCAUGgAwIBAgIUWBBLNO+NWTFMOTClODB+mY1Jsd8wCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTEyMjAyMzEyMFoYDzIxMjYxMDI5
MDIzMTIwWjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAT94ppnCLt/D8Q2g6KOQjL8i//bFatbPV4P8tnkUIzwGZo3zjdoIPLD
UtnkuF71XSpE5ryIopN4easSJNyS1HOSo28wbTAdBgNVHQ4EFgQUHtCJxJNL8K3S
B6a81HLOIwluT58wHwYDVR0jBBgwFoAUHtCJxJNL8K3SB6a81HLOIwluT58wDwYD
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARgglsb2NhbGhvc3SHBH8AAAEwCgYIKoZI
zj0EAwIDSQAwRgIhAO4yW6R6U+nILqiCEiiA4XM0/tEfkSkQ+BWxAOIcl90lAiEA
5DRSAhEPaZrV+V7nZVgfkIjaP1HrOTxhKi/X1SCbEPY=
-----END CERTIFICATE-----`;

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

describe('sendOnce', () => {
  let server: Server;
  let base = '';
  const routes = new Map<string, Handler>();
  const received: { path: string; headers: IncomingMessage['headers']; body: string }[] = [];
  const dispatcher = createGuardedDispatcher({ allowPrivate: true });

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        received.push({ path: req.url ?? '', headers: req.headers, body });
        const handler = routes.get(req.url ?? '');
        if (handler) handler(req, res, body);
        else res.writeHead(404).end('no route');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await dispatcher.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const signed = (body: string, secret = generateSecret()) => ({
    secret,
    headers: webhookHeaders({ msgId: 'msg_send_1', timestamp: Math.floor(Date.now() / 1000), body, secrets: [secret] }),
  });

  it('200: ok, with a signature the receiver verifies, and the response logged', async () => {
    routes.set('/ok', (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks'));
    const body = JSON.stringify({ eventType: 'asset.created', asset: { id: 'a1' } });
    const { secret, headers } = signed(body);
    const result = await sendOnce({ url: `${base}/ok`, body, headers, dispatcher });
    assert.equal(result.ok, true);
    assert.equal(result.status, 200);
    assert.equal(result.responseBody, 'thanks');
    assert.equal(result.responseHeaders['content-type'], 'text/plain');
    assert.equal(result.errorClass, undefined);
    assert.ok(result.latencyMs >= 0);
    const delivered = received.findLast((r) => r.path === '/ok')!;
    assert.equal(delivered.body, body);
    assert.equal(delivered.headers['content-type'], 'application/json');
    assert.equal(delivered.headers['user-agent'], 'Tessera-Webhooks/1.0');
    assert.deepEqual(
      new Webhook(secret).verify(delivered.body, delivered.headers as Record<string, string>),
      JSON.parse(body),
    );
  });

  it('any 2xx is success (204)', async () => {
    routes.set('/no-content', (_req, res) => res.writeHead(204).end());
    const result = await sendOnce({ url: `${base}/no-content`, body: '{}', headers: signed('{}').headers, dispatcher });
    assert.equal(result.ok, true);
    assert.equal(result.status, 204);
    assert.equal(result.responseBody, '');
  });

  it('500: failure of class http_status with the response body kept', async () => {
    routes.set('/boom', (_req, res) =>
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"db down"}'),
    );
    const result = await sendOnce({ url: `${base}/boom`, body: '{}', headers: signed('{}').headers, dispatcher });
    assert.equal(result.ok, false);
    assert.equal(result.status, 500);
    assert.equal(result.errorClass, 'http_status');
    assert.equal(result.error, 'HTTP 500');
    assert.equal(result.responseBody, '{"error":"db down"}');
  });

  it('301: a failure, and the redirect is not followed', async () => {
    routes.set('/moved', (_req, res) => res.writeHead(301, { location: `${base}/target` }).end());
    routes.set('/target', (_req, res) => res.writeHead(200).end('should not be reached'));
    const result = await sendOnce({ url: `${base}/moved`, body: '{}', headers: signed('{}').headers, dispatcher });
    assert.equal(result.ok, false);
    assert.equal(result.status, 301);
    assert.equal(result.errorClass, 'http_status');
    assert.equal(result.responseHeaders.location, `${base}/target`);
    assert.equal(received.filter((r) => r.path === '/target').length, 0);
  });

  it('a server that does not answer in time: timeout', async () => {
    routes.set('/slow', () => {
      /* never answers */
    });
    const result = await sendOnce({
      url: `${base}/slow`,
      body: '{}',
      headers: signed('{}').headers,
      dispatcher,
      timeoutMs: 150,
    });
    assert.equal(result.ok, false);
    assert.equal(result.status, undefined);
    assert.equal(result.errorClass, 'timeout');
    assert.match(result.error!, /timeout/);
  });

  it('a 2xx whose body breaks off is still a success (the status decided it)', async () => {
    routes.set('/broken-body', (req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial', () => req.socket.destroy());
    });
    const result = await sendOnce({
      url: `${base}/broken-body`,
      body: '{}',
      headers: signed('{}').headers,
      dispatcher,
    });
    assert.equal(result.ok, true);
    assert.equal(result.status, 200);
    assert.equal(result.errorClass, undefined);
  });

  it('a closed port: connection_refused', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const result = await sendOnce({
      url: `http://127.0.0.1:${port}/`,
      body: '{}',
      headers: signed('{}').headers,
      dispatcher,
    });
    assert.equal(result.ok, false);
    assert.equal(result.errorClass, 'connection_refused');
  });

  it('a connection dropped mid-request: reset', async () => {
    routes.set('/drop', (req) => req.socket.destroy());
    const result = await sendOnce({ url: `${base}/drop`, body: '{}', headers: signed('{}').headers, dispatcher });
    assert.equal(result.ok, false);
    assert.equal(result.errorClass, 'reset');
  });

  it('an internal target through a strict dispatcher: ssrf_blocked, never throws', async () => {
    const strict = createGuardedDispatcher({ allowPrivate: false });
    const before = received.length;
    const result = await sendOnce({ url: `${base}/ok`, body: '{}', headers: signed('{}').headers, dispatcher: strict });
    assert.equal(result.ok, false);
    assert.equal(result.errorClass, 'ssrf_blocked');
    assert.equal(received.length, before);
    await strict.close();
  });

  it('an unresolvable host: dns', async () => {
    const noDns = createGuardedDispatcher({
      allowPrivate: true,
      resolver: async (h) =>
        Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${h}`), { code: 'ENOTFOUND' })),
    });
    const result = await sendOnce({
      url: 'http://receiver.invalid/',
      body: '{}',
      headers: signed('{}').headers,
      dispatcher: noDns,
    });
    assert.equal(result.errorClass, 'dns');
    await noDns.close();
  });

  it('HTTPS: an untrusted certificate is a tls failure; trusting its CA delivers', async () => {
    const tls = createTlsServer({ key: TEST_KEY, cert: TEST_CERT }, (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200).end('secure'));
    });
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    const url = `https://localhost:${(tls.address() as AddressInfo).port}/hook`;
    try {
      const untrusted = await sendOnce({ url, body: '{}', headers: signed('{}').headers, dispatcher });
      assert.equal(untrusted.ok, false);
      assert.equal(untrusted.errorClass, 'tls');
      const trusting = createGuardedDispatcher({
        allowPrivate: true,
        ca: TEST_CERT,
        resolver: async () => [{ address: '127.0.0.1', family: 4 }],
      });
      const trusted = await sendOnce({ url, body: '{}', headers: signed('{}').headers, dispatcher: trusting });
      assert.equal(trusted.ok, true);
      assert.equal(trusted.responseBody, 'secure');
      await trusting.close();
      const strict = createGuardedDispatcher({ allowPrivate: false, ca: TEST_CERT });
      assert.equal(
        (await sendOnce({ url, body: '{}', headers: signed('{}').headers, dispatcher: strict })).errorClass,
        'ssrf_blocked',
      );
      await strict.close();
    } finally {
      tls.closeAllConnections();
      await new Promise<void>((resolve) => tls.close(() => resolve()));
    }
  });

  it('an invalid URL: other, never throws', async () => {
    const result = await sendOnce({ url: 'not a url', body: '{}', headers: {}, dispatcher });
    assert.equal(result.ok, false);
    assert.equal(result.errorClass, 'other');
  });

  it('keeps only the first 2 KiB of a large response body', async () => {
    routes.set('/big', (_req, res) => res.writeHead(500).end('é'.repeat(50_000)));
    const result = await sendOnce({ url: `${base}/big`, body: '{}', headers: signed('{}').headers, dispatcher });
    assert.equal(result.status, 500);
    assert.ok(Buffer.byteLength(result.responseBody) <= MAX_RESPONSE_BYTES);
    assert.ok(result.responseBody.startsWith('éé'));
    // The connection pool is still usable after the truncated read.
    assert.equal(
      (await sendOnce({ url: `${base}/ok`, body: '{}', headers: signed('{}').headers, dispatcher })).ok,
      true,
    );
  });

  it('reads Retry-After in seconds from a 429', async () => {
    routes.set('/busy', (_req, res) => res.writeHead(429, { 'retry-after': '120' }).end());
    const result = await sendOnce({ url: `${base}/busy`, body: '{}', headers: signed('{}').headers, dispatcher });
    assert.equal(result.status, 429);
    assert.equal(result.retryAfterSeconds, 120);
    assert.equal(result.responseHeaders['retry-after'], '120');
  });

  it('reads Retry-After as an HTTP-date relative to the injected clock', async () => {
    routes.set('/maintenance', (_req, res) =>
      res.writeHead(503, { 'retry-after': 'Sun, 22 Nov 2026 03:02:00 GMT' }).end(),
    );
    const now = () => Date.parse('2026-11-22T03:00:00Z');
    const result = await sendOnce({
      url: `${base}/maintenance`,
      body: '{}',
      headers: signed('{}').headers,
      dispatcher,
      now,
    });
    assert.equal(result.retryAfterSeconds, 120);
  });

  it('parseRetryAfter handles seconds, dates, past dates and garbage', () => {
    const now = Date.parse('2026-11-22T03:00:00Z');
    assert.equal(parseRetryAfter('0', now), 0);
    assert.equal(parseRetryAfter(' 30 ', now), 30);
    assert.equal(parseRetryAfter('Sun, 22 Nov 2026 03:00:10 GMT', now), 10);
    assert.equal(parseRetryAfter('Sun, 22 Nov 2026 02:00:00 GMT', now), 0);
    assert.equal(parseRetryAfter(undefined, now), undefined);
    assert.equal(parseRetryAfter('-5', now), undefined);
    assert.equal(parseRetryAfter('1.5', now), undefined);
    assert.equal(parseRetryAfter('soon', now), undefined);
  });
});
