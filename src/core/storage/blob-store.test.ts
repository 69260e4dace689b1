import assert from 'node:assert/strict';
import { randomBytes, createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { after, before, describe, it } from 'node:test';
import { startS3 } from '../../../test/helpers/s3.ts';
import { BlobTooLarge, type BlobStore } from './blob-store.ts';
import { createLocalBlobStore, STAGING_DIR, STALE_STAGING_MS, sweepStaging } from './local-blob-store.ts';
import { waitFor } from '../../../test/helpers/wait.ts';
import { createS3BlobStore } from './s3-blob-store.ts';

async function bytes(stream: Readable | null): Promise<Buffer> {
  assert.ok(stream);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * `realFolders`: the store has folders a prefix delete can remove under a writer (local disk).
 * s3rver emulates S3 on disk and removes an emptied folder after each delete, so a put landing in
 * that folder at the same moment fails inside the emulator (see test/helpers/s3-server.ts). S3
 * itself has no folders to race: the concurrent case runs on local disk only.
 */
function contract(
  name: string,
  make: () => Promise<{ store: BlobStore; close(): Promise<void> }>,
  realFolders: boolean,
) {
  describe(`blob store: ${name}`, () => {
    let store: BlobStore;
    let close: () => Promise<void>;
    before(async () => ({ store, close } = await make()));
    after(async () => close());

    it('stores a buffer and a stream byte-exactly, with size and SHA-256', async () => {
      const data = randomBytes(300_000);
      const put = await store.put('a/b/buffer.bin', data);
      assert.equal(put.size, data.length);
      assert.equal(put.sha256, createHash('sha256').update(data).digest('hex'));
      assert.ok((await bytes(await store.get('a/b/buffer.bin'))).equals(data));
      const streamed = await store.put(
        'a/b/stream.bin',
        Readable.from([data.subarray(0, 100_000), data.subarray(100_000)]),
      );
      assert.equal(streamed.size, data.length);
      assert.ok((await bytes(await store.get('a/b/stream.bin'))).equals(data));
      assert.deepEqual(await store.head('a/b/stream.bin'), { size: data.length });
    });

    it('reads byte ranges', async () => {
      await store.put('range.txt', Buffer.from('0123456789'));
      assert.equal(await text((await store.get('range.txt', { start: 2, end: 5 }))!), '2345');
    });

    it('answers null for missing objects and deletes idempotently', async () => {
      assert.equal(await store.get('missing/object'), null);
      assert.equal(await store.head('missing/object'), null);
      await store.put('gone.txt', Buffer.from('x'));
      await store.delete('gone.txt');
      await store.delete('gone.txt');
      assert.equal(await store.head('gone.txt'), null);
    });

    it('deletes everything under a prefix, and only that; a missing prefix is no error', async () => {
      await store.put('pre/fix/one.txt', Buffer.from('1'));
      await store.put('pre/fix/deep/two.txt', Buffer.from('2'));
      await store.put('pre/fixed.txt', Buffer.from('3'));
      await store.deletePrefix('pre/fix');
      assert.equal(await store.head('pre/fix/one.txt'), null);
      assert.equal(await store.head('pre/fix/deep/two.txt'), null);
      assert.deepEqual(await store.head('pre/fixed.txt'), { size: 1 });
      await store.deletePrefix('pre/fix');
      await store.deletePrefix('never/there');
    });

    it('deletes a prefix while a writer keeps adding files under it (no ENOTEMPTY)', {
      skip: !realFolders && 'S3 has no folders to race (see contract())',
    }, async () => {
      let writing = true;
      const writer = (async () => {
        for (let i = 0; i < 120; i++) await store.put(`busy/${i % 7}/${i}.txt`, Buffer.from('x'));
      })().finally(() => {
        writing = false;
      });
      while (writing) await store.deletePrefix('busy');
      await writer;
      await store.deletePrefix('busy');
      assert.equal(await store.head('busy/0/119.txt'), null);
    });

    it('refuses unsafe keys', async () => {
      for (const key of ['../etc/passwd', '/abs', 'a/../b', 'a//b', '', 'a/./b']) {
        await assert.rejects(store.put(key, Buffer.from('x')), /not a safe storage key/, key);
      }
    });

    it('is reachable (readiness ping)', async () => {
      await store.ping();
    });
  });
}

contract(
  'local disk',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-blobs-'));
    return { store: createLocalBlobStore(dir), close: async () => rmSync(dir, { recursive: true, force: true }) };
  },
  true,
);

contract(
  'S3 (s3rver)',
  async () => {
    const s3 = await startS3();
    const store = createS3BlobStore({
      kind: 's3',
      bucket: s3.bucket,
      prefix: 'tenant-data',
      endpoint: s3.endpoint,
      region: 'us-east-1',
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
      connectTimeoutMs: 5000,
      requestTimeoutMs: 30_000,
    });
    return { store, close: s3.close };
  },
  false,
);

describe('local blob store: in-place reads', () => {
  it('names the file holding an object (readers open it themselves); unsafe keys refused, S3 has none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-blobs-'));
    try {
      const store = createLocalBlobStore(dir);
      const bytes = randomBytes(4096);
      await store.put('content/o1/ab/abc', bytes);
      const pinned = (await store.pin!('content/o1/ab/abc'))!;
      assert.deepEqual(readFileSync(pinned.path), bytes);
      // The object purged while a reader holds it: the reader still reads every byte, the store no longer has it.
      await store.delete('content/o1/ab/abc');
      assert.equal(await store.head('content/o1/ab/abc'), null);
      assert.deepEqual(readFileSync(pinned.path), bytes);
      await pinned.release();
      assert.equal(existsSync(pinned.path), false);
      assert.equal(await store.pin!('content/o1/ab/abc'), null, 'a missing object cannot be pinned');
      await assert.rejects(store.pin!('../outside'));
      assert.equal(
        createS3BlobStore({
          kind: 's3',
          bucket: 'b',
          prefix: '',
          endpoint: 'http://127.0.0.1:9',
          region: 'us-east-1',
          accessKeyId: 'x',
          secretAccessKey: 'x',
          forcePathStyle: true,
          connectTimeoutMs: 1000,
          requestTimeoutMs: 1000,
        }).pin,
        undefined,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('local blob store atomicity', () => {
  it('clears files a crashed process left half-written in the staging folder (older than a day), on the first write', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-blobs-'));
    try {
      mkdirSync(join(dir, STAGING_DIR));
      const old = join(dir, STAGING_DIR, 'left-by-a-crash.partial');
      const fresh = join(dir, STAGING_DIR, 'being-written.partial');
      writeFileSync(old, 'x');
      writeFileSync(fresh, 'y');
      const twoDaysAgo = new Date(Date.now() - 2 * STALE_STAGING_MS);
      utimesSync(old, twoDaysAgo, twoDaysAgo);
      const store = createLocalBlobStore(dir);
      await store.put('a/b.txt', Buffer.from('z'));
      await waitFor(() => !existsSync(old), 'the stale staged file to go');
      assert.ok(existsSync(fresh), 'a recent one may still be written');
      assert.equal(await sweepStaging(dir), 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('leaves no partial file when the source stream fails', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-blobs-'));
    try {
      const store = createLocalBlobStore(dir);
      const failing = new Readable({
        read() {
          this.push(Buffer.alloc(1024));
          this.destroy(new Error('client went away'));
        },
      });
      await assert.rejects(store.put('x/broken.bin', failing), /client went away/);
      assert.equal(await store.head('x/broken.bin'), null);
      assert.deepEqual(readdirSync(join(dir, STAGING_DIR)), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('local blob store: one pass, limits and writeback', () => {
  it('stores a stream longer than the writeback interval byte-exactly (parts flushed while writing)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-blobs-'));
    try {
      const store = createLocalBlobStore(dir);
      const chunk = randomBytes(1 << 20);
      const count = 40;
      const expected = createHash('sha256');
      for (let i = 0; i < count; i++) expected.update(chunk);
      const put = await store.put(
        'big/file.bin',
        Readable.from(
          (function* () {
            for (let i = 0; i < count; i++) yield chunk;
          })(),
        ),
      );
      assert.deepEqual(put, { size: count << 20, sha256: expected.digest('hex') });
      const stored = await bytes(await store.get('big/file.bin'));
      assert.equal(stored.length, count << 20);
      assert.ok(stored.subarray((count - 1) << 20).equals(chunk));
      assert.deepEqual(readdirSync(join(dir, 'big')), ['file.bin']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps the order of distinct chunks of uneven sizes taken while earlier writes are in flight', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-blobs-'));
    try {
      const store = createLocalBlobStore(dir);
      // 70 MB in chunks of 1 byte to 2 MB, each different: any write at a wrong offset, lost or
      // repeated chunk shows in the bytes and the hash.
      const chunks: Buffer[] = [];
      let total = 0;
      for (let i = 0; total < 70 << 20; i++) {
        const chunk = randomBytes(i % 7 === 0 ? 1 + (i % 13) : ((i * 7919) % (2 << 20)) + 1);
        chunks.push(chunk);
        total += chunk.length;
      }
      const whole = Buffer.concat(chunks);
      const put = await store.put('order/file.bin', Readable.from(chunks));
      assert.deepEqual(put, { size: whole.length, sha256: createHash('sha256').update(whole).digest('hex') });
      assert.ok((await bytes(await store.get('order/file.bin'))).equals(whole));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('drains a body longer than maxBytes without keeping it and fails with BlobTooLarge', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-blobs-'));
    try {
      const store = createLocalBlobStore(dir);
      let read = 0;
      const source = Readable.from(
        (function* () {
          for (let i = 0; i < 10; i++) {
            read++;
            yield Buffer.alloc(1000, i);
          }
        })(),
      );
      await assert.rejects(
        store.put('x/long.bin', source, { maxBytes: 2500 }),
        (error: unknown) => error instanceof BlobTooLarge && error.received === 10_000 && error.limit === 2500,
      );
      assert.equal(read, 10);
      assert.equal(await store.head('x/long.bin'), null);
      assert.deepEqual(readdirSync(join(dir, STAGING_DIR)), []);
      const exact = await store.put('x/exact.bin', Buffer.alloc(2500, 1), { maxBytes: 2500 });
      assert.equal(exact.size, 2500);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('S3 readiness', () => {
  it('ping fails when the bucket does not exist', async () => {
    const s3 = await startS3();
    try {
      const store = createS3BlobStore({
        kind: 's3',
        bucket: 'no-such-bucket',
        prefix: '',
        endpoint: s3.endpoint,
        region: 'us-east-1',
        accessKeyId: 'S3RVER',
        secretAccessKey: 'S3RVER',
        forcePathStyle: true,
        connectTimeoutMs: 5000,
        requestTimeoutMs: 30_000,
      });
      await assert.rejects(store.ping());
    } finally {
      await s3.close();
    }
  });
});
