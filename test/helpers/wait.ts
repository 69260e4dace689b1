/** Polls `check` every 10 ms until it holds; fails naming `what` after `limitMs`. */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string, limitMs = 30_000): Promise<void> {
  const until = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`gave up waiting for ${what} after ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A promise to await and the function that resolves it: a step of one task that another releases. */
export function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Resolves to true if `promise` settles (either way) within `ms`. */
export const settlesWithin = (promise: Promise<unknown>, ms: number): Promise<boolean> =>
  Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((r) => setTimeout(() => r(false), ms)),
  ]);

/**
 * Polls `probe` every 25 ms until it gives a value (anything but undefined, null or false) and returns
 * that value; fails naming `what` after `limitMs`.
 */
export async function waitForValue<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false>,
  limitMs = 90_000,
): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} after ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
