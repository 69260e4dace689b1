/**
 * SQLite write turns between the thread that answers requests and the background thread (decision
 * 0028). Both hold a connection to the same file, and SQLite lets one of them write at a time. A
 * connection that finds the write lock taken waits in SQLite's busy handler, which sleeps
 * synchronously in steps of 1, 2, 5, 10 … 100 ms: on the main thread that sleep blocks every
 * request of the process, and it overshoots the holder's commit by up to a step.
 *
 * The two threads therefore take turns through a few words of shared memory, before SQLite:
 * - the main thread announces each write (a transaction from `begin` to `commit`/`rollback`, or a
 *   single write statement outside one) and has priority: the background thread does not start a
 *   write while the main thread announces one, and backs off when both announce at once;
 * - when the background thread is already writing, the main thread waits on the shared word
 *   (Atomics.wait), woken by that write's end, not by a sleep, and then takes the lock at once.
 * Waits are bounded by `waitMs`; past it SQLite's own busy handling applies, as without turns.
 * Other processes on the same file are not part of this: against them busy_timeout still applies.
 */
export type WriteSide = 'main' | 'background';

/** Words of the shared buffer. */
const MAIN = 0;
const BACKGROUND = 1;
/** Times the background thread let a write of the main thread go first (a count, for tests and traces). */
const BACKGROUND_DEFERRED = 2;
/** Times the main thread found the background thread writing and waited for its end. */
const MAIN_WAITED = 3;
const WORDS = 4;

export function createWriteTurnsBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(WORDS * Int32Array.BYTES_PER_ELEMENT);
}

export interface WriteTurnCounts {
  /** Writes of the background thread that waited for the main thread's write to end first. */
  backgroundDeferred: number;
  /** Writes of the main thread that waited for the background thread's write to end. */
  mainWaited: number;
}

export function writeTurnCounts(buffer: SharedArrayBuffer): WriteTurnCounts {
  const view = new Int32Array(buffer);
  return { backgroundDeferred: Atomics.load(view, BACKGROUND_DEFERRED), mainWaited: Atomics.load(view, MAIN_WAITED) };
}

export interface WriteTurns {
  /** Before a write (a `begin`, or a write statement outside a transaction). */
  take(): void;
  /** After it ended (commit, rollback, the statement's return or failure). */
  release(): void;
}

export function writeTurns(buffer: SharedArrayBuffer, side: WriteSide, waitMs: number): WriteTurns {
  const view = new Int32Array(buffer);
  const mine = side === 'main' ? MAIN : BACKGROUND;
  const release = () => {
    Atomics.store(view, mine, 0);
    Atomics.notify(view, mine);
  };
  if (side === 'main')
    return {
      take() {
        // Announce first, then look (both sequentially consistent): a background write that has not
        // seen this announcement has announced itself already, and is waited for here.
        Atomics.store(view, MAIN, 1);
        if (Atomics.load(view, BACKGROUND) === 0) return;
        Atomics.add(view, MAIN_WAITED, 1);
        Atomics.wait(view, BACKGROUND, 1, waitMs);
      },
      release,
    };
  return {
    take() {
      const deadline = performance.now() + waitMs;
      let deferred = false;
      for (;;) {
        Atomics.store(view, BACKGROUND, 1);
        if (Atomics.load(view, MAIN) === 0) return;
        // The main thread writes or is about to: step back and wait for its write to end.
        release();
        if (!deferred) Atomics.add(view, BACKGROUND_DEFERRED, 1);
        deferred = true;
        const left = deadline - performance.now();
        if (left <= 0) {
          // Waited long enough: SQLite's busy handling decides, as without turns.
          Atomics.store(view, BACKGROUND, 1);
          return;
        }
        Atomics.wait(view, MAIN, 1, left);
      }
    },
    release,
  };
}
