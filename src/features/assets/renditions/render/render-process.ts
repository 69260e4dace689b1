import { type ChildProcess, fork } from 'node:child_process';
import { availableParallelism, getPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import { RenditionError } from '../rendition-error.ts';
import { visualSummary, type VisualSummary } from '../visual-summary/visual-summary.ts';
import { renderImage, type RenderedImage } from './render-image.ts';

const CHILD = fileURLToPath(new URL('./render-process.child.ts', import.meta.url));

/**
 * Where image renditions are drawn: child processes of each Tessera process (one per lane, below),
 * started with the lane's first rendition; the larger renditions at nice 10, with their libvips pool and its number of images in progress both capped at
 * cores − 1 (at least 1). So renditions never take the server's CPU from it while requests wait
 * (issue 30: 1 MB uploads' p99 was 20× their p50 while earlier uploads rendered on two cores), and
 * they never hold the server's own libuv threads, which its file writes and fsyncs need.
 * Worker threads cannot do this: sharp's work runs on the process-wide libuv and libvips threads,
 * not on the worker's thread, so a worker thread's nice value does not reach it (measured; see
 * docs/decisions/0014-renditions-off-the-request-path.md).
 *
 * Two lanes, each in a process of its own: `first` (thumbnails, what a person waits for) at the
 * server's own priority (its nice value, 0 as a rule), one image at a time, so a new upload's thumbnail neither queues
 * behind a mezzanine nor waits for the CPU the niced renditions get last (measured on a loaded
 * machine: the thumbnail came 166 ms after the upload at nice 10 against the 150 ms target); `rest`
 * (the larger renditions) at TESSERA_RENDER_NICE. A thumbnail is a JPEG shrink-on-load decode at an
 * eighth of each side: its share of the CPU is small and bounded (one image, cores − 1 threads).
 * Outputs are byte-for-byte those of renderImage in-process (the same module, the same sharp).
 */
export type Lane = 'first' | 'rest';

/** What the render process is asked: renditions drawn (renderImage), or a picture's placeholder and hash (visualSummary). */
export type RenderRequest = { args: Parameters<typeof renderImage> } | { summaryOf: Buffer };

interface Task {
  request: RenderRequest;
  resolve: (result: RenderedImage[] | VisualSummary) => void;
  reject: (error: unknown) => void;
}

type Reply =
  | { ready: true }
  | { id: number; images: RenderedImage[] }
  | { id: number; summary: VisualSummary }
  | { id: number; error: string; rendition: boolean };

const slots = Math.max(1, availableParallelism() - 1);
const queues: Record<Lane, Task[]> = { first: [], rest: [] };
const running: Record<Lane, number> = { first: 0, rest: 0 };
const limits: Record<Lane, number> = { first: 1, rest: slots };
const inFlight = new Map<number, { task: Task; lane: Lane; timer: NodeJS.Timeout }>();
const children: Record<Lane, ChildProcess | undefined> = { first: undefined, rest: undefined };
let nextId = 1;
/** Set when no child process can be started here: renders in this process from then on. */
let disabled = false;

/**
 * The render process's nice value: TESSERA_RENDER_NICE (0–19), 10 by default. The test runner sets 0:
 * with several test files sharing two busy cores, niced renditions starve and every test that waits
 * for one waits for the whole machine.
 */
export function renderNice(setting: string | undefined = process.env.TESSERA_RENDER_NICE): number {
  if (setting === undefined || !/^\d{1,2}$/.test(setting.trim())) return 10;
  const value = Number(setting.trim());
  return value <= 19 ? value : 10;
}

/** Each lane's nice value: thumbnails at the server's own, the larger renditions at TESSERA_RENDER_NICE. */
export function laneNice(lane: Lane): number {
  return lane === 'first' ? getPriority() : renderNice();
}

function start(lane: Lane): ChildProcess {
  const proc = fork(CHILD, [JSON.stringify({ nice: laneNice(lane), threads: slots })], {
    serialization: 'advanced',
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  proc.on('message', (reply: Reply) => {
    if ('ready' in reply) return;
    const entry = inFlight.get(reply.id);
    if (!entry) return;
    inFlight.delete(reply.id);
    clearTimeout(entry.timer);
    running[entry.lane] -= 1;
    if ('summary' in reply) entry.task.resolve(reply.summary);
    else if ('images' in reply)
      entry.task.resolve(
        reply.images.map((image) => ({
          ...image,
          data: Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength),
        })),
      );
    else entry.task.reject(reply.rendition ? new RenditionError(reply.error) : new Error(reply.error));
    pump();
  });
  const gone = (why: string) => {
    if (children[lane] !== proc) return;
    children[lane] = undefined;
    // What it was drawing fails (the job retries it); the next rendition starts a new process.
    for (const [id, entry] of inFlight) {
      if (entry.lane !== lane) continue;
      inFlight.delete(id);
      clearTimeout(entry.timer);
      running[entry.lane] -= 1;
      entry.task.reject(new Error(`the render process ${why}`));
    }
    pump();
  };
  proc.on('exit', (code, signal) => gone(`exited (${signal ?? code})`));
  proc.on('error', (error) => {
    // Could not start at all (no fork here): render in this process from now on.
    if (inFlight.size === 0 && !proc.pid) disabled = true;
    gone(`failed: ${error.message}`);
  });
  proc.unref();
  return proc;
}

/** Keeps the event loop alive only while something is being drawn (an idle render process never holds the server open). */
function holdLoop(lane: Lane): void {
  const channel = children[lane]?.channel as { ref(): void; unref(): void } | undefined;
  if (running[lane] > 0) channel?.ref();
  else channel?.unref();
}

function pump(): void {
  for (const lane of ['first', 'rest'] as const) {
    while (running[lane] < limits[lane] && queues[lane].length > 0) {
      const task = queues[lane].shift()!;
      if (disabled) {
        const { request } = task;
        ('args' in request ? renderImage(...request.args) : visualSummary(request.summaryOf)).then(
          task.resolve,
          task.reject,
        );
        continue;
      }
      children[lane] ??= start(lane);
      const id = nextId++;
      running[lane] += 1;
      // sharp's own timeout bounds each step; this bounds a process that stopped answering at all.
      const timeoutSeconds = ('args' in task.request ? task.request.args[4] : undefined) ?? 30;
      const proc = children[lane]!;
      const timer = setTimeout(() => proc.kill('SIGKILL'), (timeoutSeconds * 2 + 30) * 1000);
      timer.unref();
      inFlight.set(id, { task, lane, timer });
      proc.send({ id, ...task.request });
    }
  }
  holdLoop('first');
  holdLoop('rest');
}

/** renderImage, in the render process, in its lane. */
export function renderInRenderProcess(lane: Lane, ...args: Parameters<typeof renderImage>): Promise<RenderedImage[]> {
  return new Promise((resolve, reject) => {
    queues[lane].push({ request: { args }, resolve: resolve as Task['resolve'], reject });
    pump();
  });
}

/**
 * visualSummary (placeholder and perceptual hash) of a small picture, in the render process's
 * lane: sharp's work there, not on the server's own threads, which its requests' file writes need.
 */
export function summaryInRenderProcess(lane: Lane, picture: Buffer): Promise<VisualSummary> {
  return new Promise((resolve, reject) => {
    queues[lane].push({ request: { summaryOf: picture }, resolve: resolve as Task['resolve'], reject });
    pump();
  });
}

/** A lane's render process's pid (undefined when none runs): for its own test. */
export function renderProcessPid(lane: Lane = 'rest'): number | undefined {
  return children[lane]?.pid;
}
