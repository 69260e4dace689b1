// The render process (render-process.ts): renders images at a lower CPU priority than the server.
// Every thread of this process is niced first: Linux gives each thread its own nice value, and a
// thread inherits its creator's, so the libuv and libvips threads sharp starts later (where the
// pixels are actually decoded and encoded) inherit it too.
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

const { nice, threads } = JSON.parse(process.argv[2] ?? '{}') as { nice: number; threads: number };
try {
  for (const tid of readdirSync('/proc/self/task')) setPriority(Number(tid), nice);
} catch {
  // No /proc (not Linux): the calling thread, which on most systems is the whole process.
  try {
    setPriority(0, nice);
  } catch {
    // Not allowed: renders at the server's priority.
  }
}

const { loadSharp } = await import('../../../../core/sharp.ts');
const { renderImage } = await import('./render-image.ts');
const { RenditionError } = await import('../rendition-error.ts');
const { visualSummary } = await import('../visual-summary/visual-summary.ts');
const sharp = await loadSharp();
sharp.concurrency(threads);

type Request = { id: number } & ({ args: Parameters<typeof renderImage> } | { summaryOf: Uint8Array });

const fail = (id: number) => (error: unknown) =>
  process.send!({
    id,
    error: error instanceof Error ? error.message : String(error),
    rendition: error instanceof RenditionError,
  });

process.on('message', (message: Request) => {
  // Buffers arrive as Uint8Arrays through the advanced serialization.
  const asBuffer = (data: Uint8Array) => Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if ('summaryOf' in message) {
    visualSummary(asBuffer(message.summaryOf)).then(
      (summary) => process.send!({ id: message.id, summary }),
      fail(message.id),
    );
    return;
  }
  const [input, ...rest] = message.args;
  const decoded =
    typeof input === 'string'
      ? input
      : input instanceof Uint8Array
        ? asBuffer(input)
        : { ...input, data: asBuffer(input.data) };
  renderImage(decoded, ...rest).then((images) => process.send!({ id: message.id, images }), fail(message.id));
});
// The server went away: so does its render process.
process.on('disconnect', () => process.exit(0));
process.send!({ ready: true });
