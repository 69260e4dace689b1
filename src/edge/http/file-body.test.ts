import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sendFileRange } from './file-body.ts';
import { createEdgeHttpServer, type EdgeHttpServer } from './http1.ts';

/** One raw request; the reader stalls `stallMs` before reading so the server has to wait for drains. */
function fetchRaw(
  port: number,
  path: string,
  stallMs: number,
): Promise<{ head: string; body: Buffer; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.pause();
    setTimeout(() => socket.resume(), stallMs);
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      const all = Buffer.concat(chunks);
      const end = all.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = all.toString('latin1', 0, end);
      const length = Number(/content-length: (\d+)/.exec(head)?.[1]);
      if (all.length - end - 4 >= length) {
        socket.destroy();
        resolve({ head, body: all.subarray(end + 4), closed: false });
      }
    });
    socket.on('close', () => {
      const all = Buffer.concat(chunks);
      const end = all.indexOf('\r\n\r\n');
      resolve({
        head: end < 0 ? '' : all.toString('latin1', 0, end),
        body: end < 0 ? Buffer.alloc(0) : all.subarray(end + 4),
        closed: true,
      });
    });
    socket.on('error', reject);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  });
}

describe('sending a cached file in chunks', () => {
  const dir = mkdtempSync(join(tmpdir(), 'edge-file-'));
  const file = join(dir, 'big');
  const data = randomBytes(3 * 1024 * 1024 + 123);
  let server: EdgeHttpServer;
  let port = 0;
  before(async () => {
    writeFileSync(file, data);
    server = createEdgeHttpServer(
      async (req, res) => {
        const [, a, b, claimed] = /^\/(\d+)-(\d+)(?:\/(\d+))?$/.exec(req.url)!;
        const start = Number(a);
        const end = Number(b);
        // `claimed`: the length an entry promises (a file shorter than that must not pass as complete).
        res.writeHead(200, { 'content-length': claimed === undefined ? end - start + 1 : Number(claimed) });
        await sendFileRange(
          res,
          await open(file, 'r'),
          start,
          claimed === undefined ? end : start + Number(claimed) - 1,
          null,
        );
      },
      (_error, res) => res.destroy(),
    );
    await new Promise<void>((r) => server.server.listen(0, '127.0.0.1', r));
    port = (server.server.address() as AddressInfo).port;
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends exactly the bytes asked for, across many chunks and a client that stalls', async () => {
    const whole = await fetchRaw(port, `/0-${data.length - 1}`, 200);
    assert.equal(whole.body.length, data.length);
    assert.ok(whole.body.equals(data));
    const middle = await fetchRaw(port, '/100000-2200000', 100);
    assert.ok(middle.body.equals(data.subarray(100000, 2200001)));
    const tail = await fetchRaw(port, `/${data.length - 5}-${data.length - 1}`, 0);
    assert.ok(tail.body.equals(data.subarray(data.length - 5)));
  });

  it('a file shorter than promised ends the connection instead of passing as complete', async () => {
    const short = await fetchRaw(port, `/${data.length - 1000}-0/5000`, 0);
    assert.equal(short.closed, true);
    assert.ok(short.body.length < 5000);
  });
});
