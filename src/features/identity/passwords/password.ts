// Loaded on the first hash or verify, not at start (issue 14: lean start).
let argon2: Promise<typeof import('@node-rs/argon2')> | undefined;
const lib = () => (argon2 ??= import('@node-rs/argon2'));
const hash = async (password: string, options: typeof OPTIONS) => (await lib()).hash(password, options);
const verify = async (stored: string, password: string) => (await lib()).verify(stored, password);

/** argon2id, m = 19 MiB, t = 2, p = 1 (OWASP's first recommended setting). */
const OPTIONS = { algorithm: 2 /* Argon2id */, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/**
 * Hashing is deliberately slow, so it runs a few at a time: a flood of logins queues here
 * instead of occupying every thread the rest of the server needs.
 */
const MAX_CONCURRENT = 2;
let running = 0;
const waiting: (() => void)[] = [];

async function bounded<T>(work: () => Promise<T>): Promise<T> {
  if (running >= MAX_CONCURRENT) await new Promise<void>((resolve) => waiting.push(resolve));
  running += 1;
  try {
    return await work();
  } finally {
    running -= 1;
    waiting.shift()?.();
  }
}

/** How many hash jobs are queued behind the running ones (for back-pressure decisions). */
export function passwordQueueDepth(): number {
  return waiting.length;
}

export function hashPassword(password: string): Promise<string> {
  return bounded(() => hash(password, OPTIONS));
}

export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  return bounded(async () => {
    try {
      return await verify(stored, password);
    } catch {
      return false;
    }
  });
}

/** A valid hash of a random password: verifying against it costs the same as a real account. */
let dummyHash: Promise<string> | undefined;
export function dummyPasswordHash(): Promise<string> {
  dummyHash ??= hash(`dummy-${Math.random()}`, OPTIONS);
  return dummyHash;
}
