import { createHash } from 'node:crypto';
import { close, fdatasync, fsync, open, writev } from 'node:fs';
import { Writable } from 'node:stream';
import { BlobTooLarge } from './blob-store.ts';

/** Bytes buffered while a write is in flight: the socket is paused beyond it (bounds memory). */
const BUFFER_BYTES = 1 << 20;
/**
 * Written bytes after which the disk is asked to start writing them back (fdatasync in the
 * thread pool, not awaited): the disk works while the rest arrives, so the final fsync has little
 * left to do instead of the whole file.
 */
const WRITEBACK_BYTES = 32 << 20;
/**
 * Young-generation garbage per write: an array with one element per 64 bytes written (at most
 * 16,384, i.e. 128 KB per MB of body), dropped at the next write. The socket's
 * body chunks live outside the JS heap and V8 frees them at its next garbage collection; this lean
 * path allocates almost nothing on the JS heap, so without it the next collection is a full one,
 * triggered only after 64 MB of chunks (RSS growth at that threshold, and a full mark of the
 * server's heap each time). With it, a cheap scavenge runs every few MB of body and frees them.
 */
const PACE_BYTES = 64;

// A module variable, so the pacing allocation cannot be optimized away.
// biome-ignore lint/correctness/noUnusedVariables: written and never read on purpose (see above)
let pacer: number[] = [];
type Done = (error?: Error | null) => void;

/**
 * A new file written from a stream in one pass per chunk: the hash update, the byte count and the
 * size limit are one synchronous step, then everything buffered meanwhile goes to disk in one
 * vectored write. `finish` comes only after fsync, so the bytes are durable before the caller
 * makes the file visible. Past `maxBytes` nothing more is written; the rest is drained and counted
 * and the stream fails with BlobTooLarge at its end (the caller removes the file).
 */
export class HashingFileSink extends Writable {
  readonly hash = createHash('sha256');
  size = 0;
  private fd = -1;
  private position = 0;
  private unsynced = 0;
  private inFlight = 0;
  private whenIdle: (() => void)[] = [];
  private writebackError: Error | null = null;

  private readonly path: string;
  private readonly maxBytes: number;

  constructor(path: string, maxBytes = Number.POSITIVE_INFINITY) {
    super({ highWaterMark: BUFFER_BYTES });
    this.path = path;
    this.maxBytes = maxBytes;
  }

  override _construct(done: Done): void {
    open(this.path, 'wx', 0o644, (error, fd) => {
      if (!error) this.fd = fd;
      done(error);
    });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: Done): void {
    this.take([chunk], chunk.length, done);
  }

  override _writev(chunks: { chunk: Buffer }[], done: Done): void {
    const buffers = new Array<Buffer>(chunks.length);
    let bytes = 0;
    for (let i = 0; i < chunks.length; i++) {
      buffers[i] = chunks[i]!.chunk;
      bytes += buffers[i]!.length;
    }
    this.take(buffers, bytes, done);
  }

  private take(buffers: Buffer[], bytes: number, done: Done): void {
    this.size += bytes;
    if (this.size > this.maxBytes) return done();
    for (const buffer of buffers) this.hash.update(buffer);
    pacer = new Array<number>(Math.min(16_384, Math.ceil(bytes / PACE_BYTES))).fill(0);
    this.writeAll(buffers, bytes, done);
  }

  private writeAll(buffers: Buffer[], bytes: number, done: Done): void {
    this.inFlight++;
    writev(this.fd, buffers, this.position, (error, written) => {
      this.settled();
      if (error) return done(error);
      this.position += written;
      if (written < bytes) return this.writeAll(remainder(buffers, written), bytes - written, done);
      this.unsynced += written;
      if (this.unsynced >= WRITEBACK_BYTES && this.inFlight === 0) this.startWriteback();
      done();
    });
  }

  private startWriteback(): void {
    this.unsynced = 0;
    this.inFlight++;
    fdatasync(this.fd, (error) => {
      if (error) this.writebackError ??= error;
      this.settled();
    });
  }

  private settled(): void {
    this.inFlight--;
    if (this.inFlight === 0 && this.whenIdle.length > 0) {
      const waiting = this.whenIdle;
      this.whenIdle = [];
      for (const next of waiting) next();
    }
  }

  private afterIo(next: () => void): void {
    if (this.inFlight === 0) next();
    else this.whenIdle.push(next);
  }

  override _final(done: Done): void {
    if (this.size > this.maxBytes) return done(new BlobTooLarge(this.maxBytes, this.size));
    this.afterIo(() => {
      if (this.writebackError) return done(this.writebackError);
      this.inFlight++;
      fsync(this.fd, (error) => {
        this.settled();
        done(error);
      });
    });
  }

  override _destroy(error: Error | null, done: Done): void {
    this.afterIo(() => {
      if (this.fd < 0) return done(error);
      const fd = this.fd;
      this.fd = -1;
      close(fd, (closeError) => done(error ?? closeError));
    });
  }
}

/** The buffers after the first `skip` bytes (a short write's remainder). */
function remainder(buffers: Buffer[], skip: number): Buffer[] {
  const rest: Buffer[] = [];
  for (const buffer of buffers) {
    if (skip >= buffer.length) {
      skip -= buffer.length;
      continue;
    }
    rest.push(skip > 0 ? buffer.subarray(skip) : buffer);
    skip = 0;
  }
  return rest;
}
