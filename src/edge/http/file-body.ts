import type { FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { EdgeResponse } from './http1.ts';

/** Bytes per write: large enough for few syscalls, small enough to keep memory flat. */
const CHUNK = 64 * 1024;
const PACE_MS = 50;

/** Where a body's bytes come from: null when fewer than `length` bytes are there. */
export interface BodySource {
  read(position: number, length: number): Buffer | null | Promise<Buffer | null>;
  close(): void | Promise<void>;
}

/** An in-memory body (its chunks are views, not copies). */
export const bufferSource = (body: Buffer): BodySource => ({
  read: (position, length) => (position + length <= body.length ? body.subarray(position, position + length) : null),
  close: () => {},
});

/** An open cache file, read chunk by chunk and closed at the end. */
export const fileSource = (file: FileHandle): BodySource => ({
  async read(position, length) {
    // A fresh buffer per chunk: a queued write still holds the previous one.
    const chunk = Buffer.allocUnsafe(length);
    const { bytesRead } = await file.read(chunk, 0, length, position);
    return bytesRead === length ? chunk : null;
  },
  close: () => file.close().catch(() => {}),
});

/**
 * Sends bytes `start`..`end` (inclusive) of `source` in chunks, waiting for the socket to drain
 * between them, so an object too big for the memory tier never sits in memory whole. With a
 * `pace` (bytes/s), everything past the first `after` bytes is sent at that rate (the zone's
 * limitRateAfter and limitRatePerSecond). Ends the response (or destroys it if the source came up
 * short); closes the source; returns the bytes written.
 */
export async function sendRange(
  res: EdgeResponse,
  source: BodySource,
  start: number,
  end: number,
  pace: { after: number; rate: number } | null,
): Promise<number> {
  const total = end - start + 1;
  let offset = 0;
  let closed = false;
  res.once('close', () => {
    closed = true;
  });
  const began = performance.now();
  try {
    while (offset < total && !closed) {
      let room = Math.min(CHUNK, total - offset);
      if (pace !== null && offset >= pace.after) {
        const allowed = pace.after + Math.floor(((performance.now() - began) / 1000) * pace.rate);
        if (allowed <= offset) {
          await new Promise((r) => setTimeout(r, PACE_MS));
          continue;
        }
        room = Math.min(room, allowed - offset);
      }
      const chunk = await source.read(start + offset, room);
      if (chunk === null) {
        // The source is shorter than its entry says: the promised length cannot be kept.
        res.destroy();
        return offset;
      }
      offset += room;
      if (!res.write(chunk) && !(await res.drained())) return offset;
    }
    if (!closed) res.end();
    return offset;
  } finally {
    await source.close();
  }
}

/** sendRange from an open cache file. */
export const sendFileRange = (
  res: EdgeResponse,
  file: FileHandle,
  start: number,
  end: number,
  pace: { after: number; rate: number } | null,
): Promise<number> => sendRange(res, fileSource(file), start, end, pace);

/**
 * Sends `length` bytes read from `stream` (an origin object passed through uncached), waiting for the
 * socket to drain between chunks so it never sits in memory whole; paced like sendRange. Ends the
 * response, or destroys it when the stream fails or brings another length; returns the bytes written.
 */
export async function sendStream(
  res: EdgeResponse,
  stream: Readable,
  length: number,
  pace: { after: number; rate: number } | null,
): Promise<number> {
  let offset = 0;
  let closed = false;
  res.once('close', () => {
    closed = true;
  });
  const began = performance.now();
  try {
    for await (const data of stream) {
      const chunk = data as Buffer;
      if (closed) return offset;
      if (offset + chunk.length > length) {
        res.destroy();
        return offset;
      }
      if (pace !== null && offset + chunk.length > pace.after) {
        while (!closed && pace.after + ((performance.now() - began) / 1000) * pace.rate < offset + chunk.length)
          await new Promise((r) => setTimeout(r, PACE_MS));
      }
      offset += chunk.length;
      if (!res.write(chunk) && !(await res.drained())) return offset;
    }
    if (offset !== length) res.destroy();
    else if (!closed) res.end();
    return offset;
  } catch {
    res.destroy();
    return offset;
  } finally {
    stream.destroy();
  }
}
