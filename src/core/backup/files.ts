import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** A file's length and SHA-256 (hex). */
export interface Digest {
  size: number;
  sha256: string;
}

/** Where the local blob store stages writes (core/storage/local-blob-store.ts): never a key. */
const STAGING = '.staging';

/**
 * Every blob key under a local blob store's folder, sorted: files only, slash-separated, the
 * staging folder left out (what is in it is a write not finished yet).
 */
export async function listBlobKeys(root: string): Promise<string[]> {
  const keys: string[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      // A folder removed while we walk (a prefix deleted by the server) simply has no keys.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const entry of entries) {
      if (prefix === '' && entry.name === STAGING) continue;
      const key = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      if (entry.isDirectory()) await walk(join(dir, entry.name), key);
      else if (entry.isFile()) keys.push(key);
    }
  };
  await walk(root, '');
  return keys.sort();
}

function hashing(hash: ReturnType<typeof createHash>, counter: { size: number }): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      counter.size += chunk.length;
      callback(null, chunk);
    },
  });
}

/** SHA-256 and length of a file, read as a stream. */
export async function digestFile(path: string): Promise<Digest> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { size, sha256: hash.digest('hex') };
}

/**
 * Copies `source` to `target` through a temporary file renamed into place once written and
 * fsynced, hashing the bytes on the way: the digest is of exactly what was written. Null when the
 * source does not exist (any more).
 */
export async function copyHashed(source: string, target: string): Promise<Digest | null> {
  let input;
  try {
    input = await open(source, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  await mkdir(dirname(target), { recursive: true });
  const temp = `${target}.partial`;
  const hash = createHash('sha256');
  const counter = { size: 0 };
  try {
    await pipeline(input.createReadStream(), hashing(hash, counter), createWriteStream(temp, { mode: 0o600 }));
    const written = await open(temp, 'r+');
    try {
      await written.sync();
    } finally {
      await written.close();
    }
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  } finally {
    await input.close().catch(() => {});
  }
  return { size: counter.size, sha256: hash.digest('hex') };
}
