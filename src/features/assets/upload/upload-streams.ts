import { createHash, type Hash } from 'node:crypto';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';

/** How many leading bytes the content-type check looks at. */
export const HEAD_BYTES = 64;

/** Keeps the first HEAD_BYTES of a stream of chunks. */
export class HeadKeeper {
  head = Buffer.alloc(0);

  keep(chunk: Buffer): void {
    if (this.head.length < HEAD_BYTES)
      this.head = Buffer.concat([this.head, chunk.subarray(0, HEAD_BYTES - this.head.length)]);
  }
}

/**
 * Size, SHA-256 and first bytes of a stream, read with one synchronous step per chunk (no
 * transform stage, no async iteration).
 */
export async function measureStream(stream: Readable): Promise<{ size: number; sha256: string; head: Buffer }> {
  const hash = createHash('sha256');
  const head = new HeadKeeper();
  let size = 0;
  stream.on('data', (chunk: Buffer) => {
    hash.update(chunk);
    size += chunk.length;
    head.keep(chunk);
  });
  await finished(stream);
  return { size, sha256: hash.digest('hex'), head: head.head };
}

/**
 * The parts' streams one after another as one Readable, opened in turn. Each part's chunks are
 * hashed as they pass (`hashes` receives each part's SHA-256 when it ends) and the first bytes of
 * the whole are kept. Backpressure pauses the part being read.
 */
export function concatenateParts(
  count: number,
  open: (index: number) => Promise<Readable>,
  hashes: string[],
  head: HeadKeeper,
): Readable {
  let index = 0;
  let current: Readable | null = null;
  let opening = false;
  const next = () => {
    if (index === count) {
      out.push(null);
      return;
    }
    opening = true;
    open(index).then(
      (stream) => {
        opening = false;
        current = stream;
        const hash: Hash = createHash('sha256');
        const part = index;
        stream.on('data', (chunk: Buffer) => {
          hash.update(chunk);
          head.keep(chunk);
          if (!out.push(chunk)) stream.pause();
        });
        stream.once('end', () => {
          hashes[part] = hash.digest('hex');
          current = null;
          index++;
          next();
        });
        stream.once('error', (error) => out.destroy(error));
      },
      (error: Error) => out.destroy(error),
    );
  };
  const out = new Readable({
    highWaterMark: 1 << 20,
    read() {
      if (current) current.resume();
      else if (!opening) next();
    },
    destroy(error, done) {
      current?.destroy();
      done(error);
    },
  });
  return out;
}
