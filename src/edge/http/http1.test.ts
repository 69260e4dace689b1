import assert from 'node:assert/strict';
import { connect, type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { slowClient } from '../../../test/helpers/net.ts';
import {
  createEdgeHttpServer,
  PreparedHit,
  type EdgeHttpServer,
  type EdgeRequest,
  type EdgeResponse,
} from './http1.ts';

/** Sends raw bytes on one connection and collects everything until the server closes it (or `until` matches). */
function exchange(
  port: number,
  raw: string | Buffer[],
  until?: (text: string) => boolean,
): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closed });
    };
    const timer = setTimeout(() => finish(false), 3000);
    socket.on('data', (d) => {
      text += d.toString('latin1');
      if (until?.(text)) finish(false);
    });
    socket.on('close', () => finish(true));
    socket.on('error', reject);
    socket.on('connect', () => {
      if (typeof raw === 'string') socket.write(raw);
      else for (const part of raw) socket.write(part);
    });
  });
}

const count = (text: string, what: string) => text.split(what).length - 1;

describe('edge HTTP/1.1 server', () => {
  const shared = new PreparedHit('content-type: text/plain\r\ncontent-length: 6\r\n', Buffer.from('shared'));
  let server: EdgeHttpServer;
  let port = 0;
  const errors: unknown[] = [];
  const seen: EdgeRequest[] = [];
  before(async () => {
    server = createEdgeHttpServer(
      (req: EdgeRequest, res: EdgeResponse) => {
        seen.push(req);
        if (req.url === '/throw') throw new Error('boom');
        if (req.url === '/slow') {
          return new Promise<void>((resolve) =>
            setTimeout(() => {
              res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 4 }).end('slow');
              resolve();
            }, 100),
          );
        }
        if (req.url === '/split') {
          res.writeHead(200, { 'x-evil': 'a\r\nset-cookie: x=1', 'content-length': 2 });
          res.end('ok');
          return;
        }
        if (req.url === '/unsized') {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write(Buffer.from('part1-'));
          res.end(Buffer.from('part2'));
          return;
        }
        if (req.url.startsWith('/aged-')) return res.sendHit(shared, Number(req.url.slice(6)));
        res.sendHit(
          new PreparedHit(`content-type: text/plain\r\ncontent-length: ${req.url.length}\r\n`, Buffer.from(req.url)),
          0,
        );
      },
      (error, res) => {
        errors.push(error);
        res.writeHead(502, { 'content-length': 0 }).end();
      },
    );
    await new Promise<void>((r) => server.server.listen(0, '127.0.0.1', r));
    port = (server.server.address() as AddressInfo).port;
  });
  after(() => server.close());

  it('keeps connections alive and answers pipelined requests in order, a slow one included', async () => {
    const raw = ['/slow', '/a', '/bb'].map((p) => `GET ${p} HTTP/1.1\r\nHost: x\r\n\r\n`).join('');
    const { text, closed } = await exchange(port, raw, (t) => t.endsWith('/bb'));
    assert.equal(closed, false);
    assert.equal(count(text, 'HTTP/1.1 200 OK'), 3);
    assert.ok(
      text.indexOf('slow') < text.indexOf('\r\n\r\n/a') && text.indexOf('\r\n\r\n/a') < text.indexOf('\r\n\r\n/bb'),
      text,
    );
    assert.match(text, /date: .+ GMT\r\n/);
  });

  it('parses headers case-insensitively and joins repeated ones', async () => {
    seen.length = 0;
    await exchange(
      port,
      'GET /h?q=1 HTTP/1.1\r\nHOST: Example.test\r\nAccept: a\r\naccept: b\r\nX-Forwarded-For: 1.2.3.4\r\n\r\n',
      (t) => t.endsWith('/h?q=1'),
    );
    assert.equal(seen[0]!.method, 'GET');
    assert.equal(seen[0]!.url, '/h?q=1');
    assert.deepEqual(
      [seen[0]!.headers.host, seen[0]!.headers.accept, seen[0]!.headers['x-forwarded-for']],
      ['Example.test', 'a, b', '1.2.3.4'],
    );
  });

  it('header names that are Object.prototype members are plain headers; whitespace around values is trimmed', async () => {
    seen.length = 0;
    await exchange(
      port,
      'GET /p HTTP/1.1\r\nHost: x\r\nConstructor: c\r\n__proto__: p\r\ntoString: t\r\nX-Pad: \t padded \t\r\nX-Empty:\r\n\r\n',
      (t) => t.endsWith('/p'),
    );
    const h = seen[0]!.headers;
    // On a statement of its own, so the suppression stays on the line it covers however the formatter wraps the assertion.
    // biome-ignore lint/suspicious/noProto: a request header named __proto__ must come out as a plain header
    const proto = h['__proto__'];
    assert.deepEqual([h.constructor, proto, h.tostring, h['x-pad'], h['x-empty']], ['c', 'p', 't', 'padded', '']);
    assert.equal(h.valueOf, undefined);
  });

  it('a pipelined batch of prebuilt hits comes back whole and in order, each with its Date and Age', async () => {
    const paths = Array.from({ length: 20 }, (_, i) => `/batch-${i}`);
    const raw = paths.map((p) => `GET ${p} HTTP/1.1\r\nHost: x\r\n\r\n`).join('');
    const { text } = await exchange(port, raw, (t) => t.endsWith('/batch-19'));
    const bodies = text
      .split('HTTP/1.1 200 OK\r\n')
      .slice(1)
      .map((r) => r.slice(r.indexOf('\r\n\r\n') + 4));
    assert.deepEqual(bodies, paths);
    assert.equal(count(text, '\r\nage: 0\r\n'), 20);
    assert.equal(count(text, '\r\ndate: '), 20);
  });

  it('one prepared hit answered many times: each answer carries its own Age (the prebuilt copy follows Age changes)', async () => {
    const ages = [1, 1, 1, 2, 2, 2, 1, 7, 7];
    const raw = ages.map((a) => `GET /aged-${a} HTTP/1.1\r\nHost: x\r\n\r\n`).join('');
    const { text } = await exchange(port, raw, (t) => count(t, 'shared') === ages.length);
    assert.deepEqual(
      [...text.matchAll(/\r\nage: (\d+)\r\n/g)].map((m) => Number(m[1])),
      ages,
    );
    assert.equal(count(text, '\r\n\r\nshared'), ages.length);
  });

  it('HEAD gets headers without a body; HTTP/1.0 and Connection: close are answered and closed', async () => {
    const head = await exchange(port, 'HEAD /abc HTTP/1.1\r\nHost: x\r\n\r\nGET /z HTTP/1.1\r\nHost: x\r\n\r\n', (t) =>
      t.endsWith('/z'),
    );
    assert.match(head.text, /^HTTP\/1\.1 200 OK\r\n[\s\S]*content-length: 4\r\n[\s\S]*\r\n\r\nHTTP\/1\.1 200 OK/);
    const http10 = await exchange(port, 'GET /old HTTP/1.0\r\n\r\n');
    assert.equal(http10.closed, true);
    assert.match(http10.text, /connection: close\r\n\r\n\/old$/);
    const keep10 = await exchange(port, 'GET /k HTTP/1.0\r\nConnection: keep-alive\r\n\r\n', (t) => t.endsWith('/k'));
    assert.equal(keep10.closed, false);
    assert.match(keep10.text, /connection: keep-alive\r\n/);
    const close = await exchange(
      port,
      'GET /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /never HTTP/1.1\r\nHost: x\r\n\r\n',
    );
    assert.equal(close.closed, true);
    assert.equal(count(close.text, 'HTTP/1.1'), 1);
  });

  it('reads and discards a Content-Length body, then serves the next request', async () => {
    const { text } = await exchange(
      port,
      [
        'GET /b HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n01234',
        '56789GET /next HTTP/1.1\r\nHost: x\r\n\r\n',
      ].map((s) => Buffer.from(s)),
      (t) => t.endsWith('/next'),
    );
    assert.equal(count(text, 'HTTP/1.1 200 OK'), 2);
  });

  it('refuses malformed or ambiguous requests with 400 (431 for huge heads) and closes the connection', async () => {
    const cases: [string, number][] = [
      ['GARBAGE\r\n\r\n', 400],
      ['GET / HTTP/2.0\r\nHost: x\r\n\r\n', 400],
      ['GET / HTTP/1.1\r\n\r\n', 400], // no Host
      ['GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n', 400],
      ['GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400],
      ['GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n', 400],
      ['GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n', 400],
      ['GET / HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n', 400],
      ['GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n', 400],
      ['get / HTTP/1.1\r\nHost: x\r\n\r\n', 400], // methods are upper case
      ['GET  / HTTP/1.1\r\nHost: x\r\n\r\n', 400],
      ['GET / HTTP/1.1 \r\nHost: x\r\n\r\n', 400],
      ['GET /\x7f HTTP/1.1\r\nHost: x\r\n\r\n', 400],
      ['GET / HTTP/1.1\r\nHost: x\r\nX-A: a\nb\r\n\r\n', 400], // bare LF in a value
      ['GET / HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n', 400], // bare CR
      ['GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n', 400],
      ['GET / HTTP/1.1\r\nHost: x\r\n: empty-name\r\n\r\n', 400],
      ['GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n', 400],
      ['GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n', 413],
      [`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17_000)}\r\n\r\n`, 431],
      [`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17_000)}`, 431], // never ends
    ];
    for (const [raw, status] of cases) {
      const { text, closed } = await exchange(port, raw);
      assert.equal(closed, true, raw.slice(0, 60));
      assert.match(text, new RegExp(`^HTTP/1\\.1 ${status} `), raw.slice(0, 60));
      assert.match(text, /connection: close\r\n/);
      assert.ok(text.endsWith('}'), 'a JSON body');
    }
  });

  it('a handler that throws reaches onError; CR/LF in header values cannot split the response; unsized bodies close the connection', async () => {
    const thrown = await exchange(port, 'GET /throw HTTP/1.1\r\nHost: x\r\n\r\n', (t) => t.includes('\r\n\r\n'));
    assert.match(thrown.text, /^HTTP\/1\.1 502 /);
    assert.equal((errors[0] as Error).message, 'boom');
    const split = await exchange(port, 'GET /split HTTP/1.1\r\nHost: x\r\n\r\n', (t) => t.endsWith('ok'));
    assert.doesNotMatch(split.text, /\r\nset-cookie/);
    const unsized = await exchange(port, 'GET /unsized HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.equal(unsized.closed, true);
    assert.match(unsized.text, /connection: close\r\n\r\npart1-part2$/);
  });
});

describe('edge HTTP/1.1 server idle sweep', () => {
  it('closes a connection on which nothing is read or written for idleMs, and keeps a busy one', async () => {
    const server = createEdgeHttpServer(
      (_req, res) => res.sendHit(new PreparedHit('content-length: 2\r\n', Buffer.from('ok')), 0),
      (_e, res) => res.destroy(),
      { idleMs: 400 },
    );
    await new Promise<void>((r) => server.server.listen(0, '127.0.0.1', r));
    const port = (server.server.address() as AddressInfo).port;
    try {
      const idle = await exchange(port, []);
      assert.equal(idle.closed, true);
      // A client asking every 50 ms is never idle for 400 ms: all its answers arrive on one connection.
      const busy = await new Promise<{ answers: number; closed: boolean }>((resolve) => {
        const socket = connect(port, '127.0.0.1');
        let answers = 0;
        let closed = false;
        socket.on('data', (d) => {
          answers += count(d.toString('latin1'), 'HTTP/1.1 200');
        });
        socket.on('close', () => {
          closed = true;
        });
        let sent = 0;
        const timer = setInterval(() => {
          if (sent++ === 16) {
            clearInterval(timer);
            setTimeout(() => {
              socket.destroy();
              resolve({ answers, closed });
            }, 50);
            return;
          }
          socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
        }, 50);
      });
      assert.deepEqual(busy, { answers: 16, closed: false });
    } finally {
      await server.close();
    }
  });
});

describe('edge HTTP/1.1 server timeouts (issue 23, defect 14)', () => {
  let server: EdgeHttpServer;
  let port = 0;
  before(async () => {
    server = createEdgeHttpServer(
      (_req, res) => res.sendHit(new PreparedHit('content-length: 2\r\n', Buffer.from('ok')), 0),
      (_e, res) => res.destroy(),
      { headersMs: 300, requestMs: 600, idleMs: 60_000 },
    );
    await new Promise<void>((r) => server.server.listen(0, '127.0.0.1', r));
    port = (server.server.address() as AddressInfo).port;
  });
  after(() => server.close());

  it('cuts off a client trickling its headers with 408 (it is never idle, so only the headers timeout ends it)', async () => {
    const slow = await slowClient(port, 'GET / HTTP/1.1\r\nHost: x\r\n', 'x');
    assert.equal(slow.closed, true);
    assert.match(slow.text, /^HTTP\/1\.1 408 /);
  });

  it('cuts off a client trickling a request body with 408', async () => {
    const slow = await slowClient(port, 'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n', 'x');
    assert.equal(slow.closed, true);
    assert.match(slow.text, /HTTP\/1\.1 408 /);
  });

  it('keeps serving prompt clients on kept-alive connections', async () => {
    const fast = await exchange(
      port,
      'GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n',
      (t) => count(t, 'HTTP/1.1 200') === 2,
    );
    assert.equal(count(fast.text, 'HTTP/1.1 200'), 2);
    assert.equal(fast.closed, false);
  });
});
