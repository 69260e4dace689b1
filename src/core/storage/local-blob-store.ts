import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, access, constants, link } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { finished, pipeline } from 'node:stream/promises';
import { assertSafeKey, type BlobStore, type PutResult } from './blob-store.ts';
import { HashingFileSink } from './file-sink.ts';

/**
 * Where writes are staged before their rename into place: outside the key space (a key starts
 * with a letter or digit), so a prefix deleted meanwhile cannot take a half-written file with it.
 */
export const STAGING_DIR = '.staging';

/** Files under one directory; writes go to a temporary file that is renamed into place. */
export function createLocalBlobStore(root: string): BlobStore {
  const pathOf = (key: string) => {
    assertSafeKey(key);
    return join(root, key);
  };
  const staging = join(root, STAGING_DIR);
  let swept = false;
  return {
    kind: 'local',
    async put(key, body, options): Promise<PutResult> {
      const target = pathOf(key);
      await mkdir(staging, { recursive: true });
      if (!swept) {
        // What a crashed process was writing stays in the staging folder: cleared once per start.
        swept = true;
        void sweepStaging(root).catch(() => {});
      }
      const temp = join(staging, `${randomBytes(12).toString('hex')}.partial`);
      // One stage: each chunk is hashed, counted and written by the sink, which fsyncs before it
      // finishes, so the bytes are durable before the name is visible.
      const sink = new HashingFileSink(temp, options?.maxBytes);
      try {
        if (Buffer.isBuffer(body)) {
          sink.end(body);
          await finished(sink);
        } else {
          await pipeline(body, sink);
        }
        await renameInto(temp, target);
      } catch (error) {
        // Closed before the temporary file goes (an open still pending would recreate it).
        if (!sink.closed) await new Promise((resolve) => sink.once('close', resolve).destroy());
        await rm(temp, { force: true });
        throw error;
      }
      return { size: sink.size, sha256: sink.hash.digest('hex') };
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
    async pin(key) {
      const source = pathOf(key);
      await mkdir(staging, { recursive: true });
      // A second name for the same file (no bytes copied): a purge or a replacement that removes the
      // object's name meanwhile leaves the bytes readable here until release().
      const path = join(staging, `${randomBytes(12).toString('hex')}.pinned`);
      try {
        await link(source, path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw error;
      }
      return { path, release: () => rm(path, { force: true }) };
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
      // A writer may add a file while the folder is being removed (ENOTEMPTY); rm retries then.
      await rm(pathOf(prefix), { recursive: true, force: true, maxRetries: 10, retryDelay: 20 });
    },
    async move(from, to) {
      await renameInto(pathOf(from), pathOf(to));
    },
    async ping() {
      await mkdir(root, { recursive: true });
      await access(root, constants.W_OK);
    },
  };
}

/** How old a staged file must be to count as left over by a crash (no write takes a day). */
export const STALE_STAGING_MS = 24 * 60 * 60 * 1000;

/** Removes staged files older than `olderThanMs` (a crashed process's half-written uploads). */
export async function sweepStaging(root: string, olderThanMs = STALE_STAGING_MS, now = Date.now()): Promise<number> {
  const dir = join(root, STAGING_DIR);
  let removed = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const path = join(dir, name);
    const info = await stat(path).catch(() => null);
    if (info?.isFile() && now - info.mtimeMs > olderThanMs) {
      await rm(path, { force: true });
      removed += 1;
    }
  }
  return removed;
}

/**
 * Renames a file to its key's path, making the folders on the way. A prefix delete running at
 * the same time can remove a folder between the mkdir and the rename; the rename then fails with
 * ENOENT and is tried again (the source is still there: only the target's folder went).
 */
async function renameInto(source: string, target: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await mkdir(dirname(target), { recursive: true });
      await rename(source, target);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 10) throw error;
      await access(source).catch(() => {
        throw error;
      });
    }
  }
  await syncDir(dirname(target));
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
