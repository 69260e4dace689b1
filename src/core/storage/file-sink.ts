import { createHash } from 'node:crypto';
import { close, fdatasync, fsync, open, writev } from 'node:fs';
import { Writable } from 'node:stream';
import { BlobTooLarge } from './blob-store.ts';

/** The stream's own buffer, in front of the queue below. */
const BUFFER_BYTES = 256 << 10;
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
 * Bytes taken (hashed) but not yet on their way to the disk, plus those being written: up to this
 * much, a chunk is acknowledged as soon as it is hashed, so the next chunks are read and hashed on
 * the event loop while the previous ones are written in the thread pool (the two overlap instead of
 * taking turns). Beyond it the stream waits for the write, and the socket is paused (bounds memory).
 */
const QUEUED_BYTES = 1 << 20;

/**
 * A new file written from a stream: each chunk is hashed, counted and checked against the size
 * limit in one synchronous step as it arrives, and everything taken while a write was in flight goes
 * to disk in the next vectored write (one write at a time, in order, at its own offset). `finish`
 * comes only after every write and the fsync, so the bytes are durable before the caller makes the
 * file visible. Past `maxBytes` nothing more is written; the rest is drained and counted and the
 * stream fails with BlobTooLarge at its end (the caller removes the file).
 */
export class HashingFileSink extends Writable {
  readonly hash = createHash('sha256');
  size = 0;
  private fd = -1;
  /** Where the next write goes (bytes already written or being written). */
  private position = 0;
  private unsynced = 0;
  /** Taken and hashed, waiting for the write in flight to finish. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes of the write in flight (0: none). */
  private writing = 0;
  private syncing = false;
  /** The stream's callback held back while QUEUED_BYTES are queued. */
  private held: Done | null = null;
  private whenIdle: (() => void)[] = [];
  private ioError: Error | null = null;

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
    if (this.ioError) return done(this.ioError);
    this.size += bytes;
    if (this.size > this.maxBytes) return done();
    for (const buffer of buffers) {
      this.hash.update(buffer);
      this.pending.push(buffer);
    }
    this.pendingBytes += bytes;
    pacer = new Array<number>(Math.min(16_384, Math.ceil(bytes / PACE_BYTES))).fill(0);
    if (this.writing === 0) this.writePending();
    if (this.pendingBytes + this.writing < QUEUED_BYTES) done();
    else this.held = done;
  }

  /** Writes everything pending in one vectored write at the next offset. */
  private writePending(): void {
    const buffers = this.pending;
    const bytes = this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    this.writing = bytes;
    const position = this.position;
    this.position += bytes;
    this.writeAt(buffers, bytes, position);
  }

  private writeAt(buffers: Buffer[], bytes: number, position: number): void {
    writev(this.fd, buffers, position, (error, written) => {
      if (error) return this.failed(error);
      if (written < bytes) return this.writeAt(remainder(buffers, written), bytes - written, position + written);
      this.unsynced += this.writing;
      this.writing = 0;
      if (this.unsynced >= WRITEBACK_BYTES && !this.syncing) this.startWriteback();
      if (this.pendingBytes > 0) this.writePending();
      this.release();
      this.settle();
    });
  }

  /** Lets the stream go on once the queue is below its bound again. */
  private release(): void {
    if (this.held && this.pendingBytes + this.writing < QUEUED_BYTES) {
      const done = this.held;
      this.held = null;
      done();
    }
  }

  private failed(error: Error): void {
    this.ioError ??= error;
    this.writing = 0;
    this.pending = [];
    this.pendingBytes = 0;
    const done = this.held;
    this.held = null;
    done?.(error);
    this.settle();
  }

  private startWriteback(): void {
    this.unsynced = 0;
    this.syncing = true;
    fdatasync(this.fd, (error) => {
      if (error) this.ioError ??= error;
      this.syncing = false;
      this.settle();
    });
  }

  private get idle(): boolean {
    return this.writing === 0 && this.pendingBytes === 0 && !this.syncing;
  }

  private settle(): void {
    if (this.idle && this.whenIdle.length > 0) {
      const waiting = this.whenIdle;
      this.whenIdle = [];
      for (const next of waiting) next();
    }
  }

  private afterIo(next: () => void): void {
    if (this.idle) next();
    else this.whenIdle.push(next);
  }

  override _final(done: Done): void {
    if (this.size > this.maxBytes) return done(new BlobTooLarge(this.maxBytes, this.size));
    this.afterIo(() => {
      if (this.ioError) return done(this.ioError);
      this.syncing = true;
      fsync(this.fd, (error) => {
        this.syncing = false;
        this.settle();
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
