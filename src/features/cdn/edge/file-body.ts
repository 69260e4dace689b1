import type { FileHandle } from 'node:fs/promises';
import type { EdgeResponse } from './http1.ts';

/** Bytes read from disk per write: large enough for few syscalls, small enough to keep memory flat. */
const CHUNK = 64 * 1024;
const PACE_MS = 50;

/**
 * Sends bytes `start`..`end` (inclusive) of an open cache file in chunks, waiting for the socket to
 * drain between them, so an object too big for the memory tier never sits in memory whole. With a
 * `rate` (bytes/s), everything past the first `after` bytes is paced like an in-memory throttled
 * body. Ends the response (or destroys it if the file came up short); closes the file; returns the
 * bytes written.
 */
export async function sendFileRange(res: EdgeResponse, file: FileHandle, start: number, end: number, pace: { after: number; rate: number } | null): Promise<number> {
  const total = end - start + 1;
  let offset = 0;
  let closed = false;
  res.once('close', () => { closed = true; });
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
      // A fresh buffer per chunk: a queued write still holds the previous one.
      const chunk = Buffer.allocUnsafe(room);
      const { bytesRead } = await file.read(chunk, 0, room, start + offset);
      if (bytesRead !== room) {
        // The file is shorter than its entry says: the promised length cannot be kept.
        res.destroy();
        return offset;
      }
      offset += room;
      if (!res.write(chunk) && !(await res.drained())) return offset;
    }
    if (!closed) res.end();
    return offset;
  } finally {
    await file.close().catch(() => {});
  }
}
