import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../test/helpers/factories.ts';
import { createAsset } from '../../../../test/helpers/assets.ts';

// A large body streamed over real HTTP in uneven chunks, with backpressure: what the 1 GB upload
// bench sends, at a size a test can afford. 72 MB crosses the store's early-writeback step (every
// 32 MB) twice and ends between steps; the chunk sizes do not divide its buffer sizes. One PUT (the
// part size raised above it), as the bench's 1 GB.
const MB = 72;
const CHUNKS = [65_536, 1_048_576, 4_099, 333_333];

/** The i-th chunk: bytes that depend on their position, so a lost, repeated or reordered chunk shows. */
function chunkAt(offset: number, length: number): Buffer {
  const chunk = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) chunk[i] = Math.imul(offset + i, 2654435761) >>> 24;
  return chunk;
}

forEachEngine(
  'assets: a large upload streamed over HTTP',
  (ctx) => {
    let org: TestOrg;
    let base: string;
    before(async () => {
      org = await createTestOrg(ctx());
      await ctx().app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(ctx().app.server.address() as AddressInfo).port}`;
    });
    after(async () => ctx().app.close());

    it('stores every byte in order and records the SHA-256 of what was sent', async () => {
      const size = MB * 1048576;
      const created = await createAsset(ctx(), org, { filename: 'big.bin', filesize: size });
      const url = new URL(created.url!);
      const sent = createHash('sha256');
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(
          `${base}${url.pathname}${url.search}`,
          { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) } },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode!));
          },
        );
        req.on('error', reject);
        let offset = 0;
        let turn = 0;
        const write = () => {
          while (offset < size) {
            const chunk = chunkAt(offset, Math.min(CHUNKS[turn++ % CHUNKS.length]!, size - offset));
            offset += chunk.length;
            sent.update(chunk);
            if (!req.write(chunk)) return void req.once('drain', write);
          }
          req.end();
        };
        write();
      });
      assert.equal(status, 200);
      const sha256 = sent.digest('hex');
      const row = await ctx()
        .deps.db.selectFrom('assets')
        .select(['sha256', 'size', 'blob_key', 'content_state'])
        .where('id', '=', created.objectId)
        .executeTakeFirstOrThrow();
      assert.equal(row.content_state, 'available');
      assert.equal(row.sha256, sha256);
      assert.equal(Number(row.size), size);
      // The stored bytes themselves, read back from the store.
      const stored = createHash('sha256');
      let length = 0;
      for await (const chunk of (await ctx().deps.blobs.get(row.blob_key!))!) {
        stored.update(chunk as Buffer);
        length += (chunk as Buffer).length;
      }
      assert.equal(length, size);
      assert.equal(stored.digest('hex'), sha256);
    });
  },
  { env: { TESSERA_UPLOAD_PART_SIZE: String(128 * 1048576) } },
);
