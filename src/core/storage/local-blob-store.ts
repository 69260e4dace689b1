import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat, access, constants } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertSafeKey, type BlobStore, type PutResult } from './blob-store.ts';

/** Files under one directory; writes go to a temporary file that is renamed into place. */
export function createLocalBlobStore(root: string): BlobStore {
  const pathOf = (key: string) => {
    assertSafeKey(key);
    return join(root, key);
  };
  return {
    kind: 'local',
    async put(key, body): Promise<PutResult> {
      const target = pathOf(key);
      await mkdir(dirname(target), { recursive: true });
      const temp = `${target}.${randomBytes(6).toString('hex')}.partial`;
      const hash = createHash('sha256');
      let size = 0;
      const meter = new Transform({
        transform(chunk: Buffer, _enc, done) {
          hash.update(chunk);
          size += chunk.length;
          done(null, chunk);
        },
      });
      try {
        // flush: the bytes are fsynced before the file is closed, so they are durable before the name is visible.
        await pipeline(Buffer.isBuffer(body) ? Readable.from([body]) : body, meter, createWriteStream(temp, { flags: 'wx', flush: true, highWaterMark: 4 << 20 }));
        await rename(temp, target);
        await syncDir(dirname(target));
      } catch (error) {
        await rm(temp, { force: true });
        throw error;
      }
      return { size, sha256: hash.digest('hex') };
    },
    async get(key, range) {
      const path = pathOf(key);
      try {
        await access(path, constants.R_OK);
      } catch {
        return null;
      }
      return createReadStream(path, range ? { start: range.start, end: range.end } : {});
    },
    async head(key) {
      try {
        const info = await stat(pathOf(key));
        return info.isFile() ? { size: info.size } : null;
      } catch {
        return null;
      }
    },
    async delete(key) {
      await rm(pathOf(key), { force: true });
    },
    async deletePrefix(prefix) {
      await rm(pathOf(prefix), { recursive: true, force: true });
    },
    async move(from, to) {
      const source = pathOf(from);
      const target = pathOf(to);
      await mkdir(dirname(target), { recursive: true });
      await rename(source, target);
      await syncDir(dirname(target));
    },
    async ping() {
      await mkdir(root, { recursive: true });
      await access(root, constants.W_OK);
    },
  };
}

async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some platforms cannot fsync a directory; the rename is still atomic.
  }
}
