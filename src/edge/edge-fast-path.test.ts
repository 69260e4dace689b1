import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../test/helpers/factories.ts';
import { makeZone, startEdge, TestOrigin } from '../../test/helpers/cdn.ts';

/** One HTTP/1.1 answer as it came off the wire: header lines in order (lower-case names), body bytes. */
interface Answer {
  status: number;
  headers: [string, string][];
  body: Buffer;
}

/**
 * Parses consecutive answers from `buf`; `methods` says which requests were HEAD (no body whatever
 * Content-Length says). Returns the answers complete so far.
 */
function parseAnswers(buf: Buffer, methods: string[]): Answer[] {
  const out: Answer[] = [];
  let at = 0;
  while (out.length < methods.length) {
    const end = buf.indexOf('\r\n\r\n', at);
    if (end < 0) break;
    const lines = buf.toString('latin1', at, end).split('\r\n');
    const status = Number(lines[0]!.split(' ')[1]);
    const headers = lines.slice(1).map((l): [string, string] => {
      const c = l.indexOf(':');
      return [l.slice(0, c).toLowerCase(), l.slice(c + 1).trim()];
    });
    const length = Number(headers.find(([n]) => n === 'content-length')?.[1] ?? 0);
    const bodyLength = methods[out.length] === 'HEAD' || status === 304 ? 0 : length;
    if (buf.length < end + 4 + bodyLength) break;
    out.push({ status, headers, body: buf.subarray(end + 4, end + 4 + bodyLength) });
    at = end + 4 + bodyLength;
  }
  return out;
}

/**
 * Sends `requests` on one connection — all in one write (a pipelined batch), or split into pieces
 * of `piece` bytes written one by one (partial reads) — and resolves with the answers, in order,
 * once all came or the edge closed the connection.
 */
function exchange(
  port: number,
  requests: string[],
  options: { piece?: number } = {},
): Promise<{ answers: Answer[]; closed: boolean }> {
  const methods = requests.map((r) => r.slice(0, r.indexOf(' ')));
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve({ answers: parseAnswers(received, methods), closed });
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (parseAnswers(received, methods).length === requests.length) finish(false);
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', reject);
    socket.on('connect', async () => {
      const all = Buffer.from(requests.join(''), 'latin1');
      if (options.piece === undefined) return void socket.write(all);
      for (let i = 0; i < all.length && !socket.destroyed; i += options.piece) {
        socket.write(all.subarray(i, i + options.piece));
        await new Promise((r) => setImmediate(r));
      }
    });
  });
}

/** The headers that differ between two answers by nature (the clock), dropped before comparing. */
const comparable = (a: Answer) =>
  a.headers.filter(([n]) => n !== 'date' && n !== 'age').sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
const value = (a: Answer, name: string) => a.headers.find(([n]) => n === name)?.[1];

forEachEngine('CDN edge: the fast hit path answers exactly as the general path', (ctx) => {
  const origin = new TestOrigin();
  let edge: Awaited<ReturnType<typeof startEdge>>;
  let port: number;
  let org: TestOrg;
  before(async () => {
    await origin.start();
    edge = await startEdge(ctx());
    port = Number(new URL(edge.url).port);
    org = await createTestOrg(ctx());
  });
  after(async () => {
    await edge.close();
    await origin.close();
  });
  const request = (path: string, extra = '', method = 'GET') =>
    `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${extra}\r\n`;

  it('fresh hits from memory (first answer of a second and the prebuilt Buffer) equal the general path: status, every header but Date/Age, body', async () => {
    // Zones with the header rules the hit path must follow: default, and CORS + browser TTL override + WebP/AVIF vary.
    const plain = await makeZone(ctx(), org, origin);
    const rich = await makeZone(ctx(), org, origin, {
      enableAccessControlOriginHeader: true,
      accessControlOriginHeaderExtensions: [],
      cacheControlPublicMaxAgeOverride: 45,
      enableWebpVary: true,
      enableAvifVary: true,
    });
    origin.set('/eq.txt', 'equal bodies', {
      'cache-control': 'public, max-age=600',
      etag: '"eq1"',
      'last-modified': new Date(86_400_000).toUTCString(),
      'content-language': 'en',
      'x-origin-extra': 'kept',
      'cdn-tag': 'hidden-from-clients',
    });
    origin.set('/eq.html', '<p>active</p>', {
      'content-type': 'text/html',
      'cache-control': 'max-age=600',
      'content-disposition': 'inline; filename="a.html"',
      vary: 'Accept-Encoding',
    });
    const checked: string[] = [];
    for (const zone of [plain, rich])
      for (const file of ['/eq.txt', '/eq.html']) {
        const path = `/${zone.name}${file}`;
        // (The rich zone keeps one copy per Accept class: every request here is of the WebP class.)
        const accept = zone === rich ? 'Accept: image/webp\r\n' : '';
        const warm = await exchange(port, [request(path, accept)]);
        assert.equal(warm.answers[0]?.status, 200);
        // One pipelined batch: hits 1–3 take the fast path (the first builds its head, the later ones
        // share one prebuilt Buffer); a non-matching If-None-Match and a HEAD take the general path.
        const { answers } = await exchange(port, [
          request(path, accept),
          request(path, accept),
          request(path, accept),
          request(path, `${accept}If-None-Match: "not-this"\r\n`),
          request(path, accept, 'HEAD'),
        ]);
        assert.equal(answers.length, 5, path);
        const [fast1, fast2, fast3, general, head] = answers as [Answer, Answer, Answer, Answer, Answer];
        for (const a of answers) assert.equal(a.status, 200, path);
        const trace = `${path}: ${answers.map((a) => value(a, 'cdn-cache')).join(' ')} (origin ${origin.count(file)})`;
        for (const fast of [fast1, fast2, fast3]) {
          assert.deepEqual(comparable(fast), comparable(general), trace);
          assert.ok(fast.body.equals(general.body), path);
          assert.equal(value(fast, 'cdn-cache'), 'HIT');
          assert.match(value(fast, 'age') ?? '', /^\d+$/);
          assert.ok(value(fast, 'date'));
        }
        assert.deepEqual(comparable(head), comparable(general), path);
        assert.equal(head.body.length, 0);
        assert.equal(value(general, 'cdn-tag'), undefined);
        checked.push(`${zone === rich ? 'rich' : 'plain'}${file}`);
      }
    assert.equal(checked.length, 4);
    // The rules really applied (so the equality above compared something).
    const { answers } = await exchange(port, [request(`/${rich.name}/eq.html`, 'Accept: image/webp\r\n')]);
    const a = answers[0]!;
    assert.equal(value(a, 'access-control-allow-origin'), '*');
    assert.equal(value(a, 'cache-control'), 'public, max-age=45');
    assert.equal(value(a, 'vary'), 'Accept-Encoding, Accept');
    assert.equal(value(a, 'content-security-policy'), 'sandbox');
    assert.equal(value(a, 'content-disposition'), 'attachment; filename="a.html"');
    assert.equal(origin.count('/eq.txt'), 2);
    assert.equal(origin.count('/eq.html'), 2);
  });

  it('pipelined mixes of hits, misses, HEAD, ranges and conditionals are answered in order, whole or byte by byte', async () => {
    const zone = await makeZone(ctx(), org, origin);
    origin.set('/p1.txt', 'first object', { 'cache-control': 'max-age=600', etag: '"p1"' });
    origin.set('/p2.txt', 'second object', { 'cache-control': 'max-age=600', etag: '"p2"' });
    const p1 = `/${zone.name}/p1.txt`;
    await exchange(port, [request(p1)]);
    const batch = (miss: string) => [
      request(p1),
      request(`/${zone.name}/${miss}`), // a miss: the origin is asked while later requests wait their turn
      request(p1, '', 'HEAD'),
      request(p1, 'Range: bytes=0-4\r\n'),
      request(p1, 'If-None-Match: "p1"\r\n'),
      request('/no-such-zone/x'),
      request(p1),
    ];
    const expect = (answers: Answer[]) => {
      assert.deepEqual(
        answers.map((a) => a.status),
        [200, 200, 200, 206, 304, 404, 200],
      );
      assert.equal(answers[0]!.body.toString(), 'first object');
      assert.equal(answers[1]!.body.toString(), 'second object');
      assert.equal(answers[2]!.body.length, 0);
      assert.equal(answers[3]!.body.toString(), 'first');
      assert.equal(answers[6]!.body.toString(), 'first object');
    };
    const whole = await exchange(port, batch('p2.txt'));
    expect(whole.answers);
    assert.equal(whole.closed, false);
    origin.set('/p3.txt', 'second object', { 'cache-control': 'max-age=600' });
    // The same batch written one byte at a time, then in 7-byte pieces: every read is partial.
    const bytes = await exchange(port, batch('p3.txt'), { piece: 1 });
    expect(bytes.answers);
    origin.set('/p4.txt', 'second object', { 'cache-control': 'max-age=600' });
    const pieces = await exchange(port, batch('p4.txt'), { piece: 7 });
    expect(pieces.answers);
  });

  it('malformed requests get 400 and the connection is closed, after the good requests before them; the edge keeps serving', async () => {
    const zone = await makeZone(ctx(), org, origin);
    origin.set('/m.txt', 'still here', { 'cache-control': 'max-age=600' });
    const path = `/${zone.name}/m.txt`;
    await exchange(port, [request(path)]);
    const bad = [
      'GET /x HTTP/1.1\r\nHost: a\r\nBad Name: y\r\n\r\n',
      'GET /x HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n',
      'GET /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n',
      'GET /x HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n',
      'GET /x HTTP/1.1\r\n\r\n',
      'GET /x HTTP/9.1\r\nHost: a\r\n\r\n',
      'get /x HTTP/1.1\r\nHost: a\r\n\r\n',
      'GET  HTTP/1.1\r\nHost: a\r\n\r\n',
      '\u0000\u0001\u0002\r\n\r\n',
      'GET /x HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n',
    ];
    for (const raw of bad) {
      const { answers, closed } = await exchange(port, [request(path), raw, request(path)]);
      assert.deepEqual(
        answers.map((a) => a.status),
        [200, 400],
        JSON.stringify(raw),
      );
      assert.equal(answers[0]!.body.toString(), 'still here');
      assert.equal(closed, true, JSON.stringify(raw));
    }
    for (const raw of bad.slice(0, 3)) {
      const { answers } = await exchange(port, [raw], { piece: 3 });
      assert.equal(answers[0]?.status, 400, JSON.stringify(raw));
    }
    const after = await exchange(port, [request(path), request(path)]);
    assert.deepEqual(
      after.answers.map((a) => a.body.toString()),
      ['still here', 'still here'],
    );
  });
});
