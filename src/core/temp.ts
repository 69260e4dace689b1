import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

/**
 * Every temporary file Tessera makes (form uploads being received, transformations, renditions,
 * PDF pages, embedded metadata, S3 spools) lives under one root, `<data dir>/tmp`, in a folder of
 * its process named `<host>.<pid>.<random>`. A crashed process leaves its folder behind; the next
 * start removes it (sweepTemp), without touching the folders of processes still running.
 */
export interface TempFiles {
  /** This process's folder (made on first use). */
  readonly dir: string;
  /** A new private folder under this process's folder; the caller removes it when done. */
  mkdtemp(prefix: string): Promise<string>;
  /** Removes this process's folder (on a clean stop). */
  close(): Promise<void>;
}

export const TEMP_DIR = 'tmp';
/** Folders of another host, or with a name we do not know, go only when older than this. */
export const STALE_TEMP_MS = 24 * 60 * 60 * 1000;

export function tempRoot(dataDir: string): string {
  return join(dataDir, TEMP_DIR);
}

export function createTempFiles(dataDir: string): TempFiles {
  const dir = join(tempRoot(dataDir), `${safeHost()}.${process.pid}.${randomBytes(4).toString('hex')}`);
  let made: Promise<unknown> | undefined;
  return {
    dir,
    async mkdtemp(prefix) {
      made ??= mkdir(dir, { recursive: true, mode: 0o700 });
      try {
        await made;
        return await mkdtemp(join(dir, prefix));
      } catch (error) {
        // The folder was removed under us (a sweep by hand, a close racing): make it again once.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        made = mkdir(dir, { recursive: true, mode: 0o700 });
        await made;
        return mkdtemp(join(dir, prefix));
      }
    },
    async close() {
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Removes what crashed processes left under `<data dir>/tmp`: a folder of this host whose process
 * is gone at once; anything else (another host sharing the directory, an unknown name) only once
 * older than STALE_TEMP_MS. A live process's folder, however old, is kept. Returns what was removed.
 */
export async function sweepTemp(dataDir: string, now = Date.now()): Promise<string[]> {
  const root = tempRoot(dataDir);
  let names: string[];
  try {
    names = await readdir(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const removed: string[] = [];
  const host = safeHost();
  for (const name of names) {
    const owner = /^(.+)\.(\d+)\.[0-9a-f]+$/.exec(name);
    const pid = owner ? Number(owner[2]) : undefined;
    let remove: boolean;
    if (owner && owner[1] === host && pid !== undefined) {
      remove = pid !== process.pid && !alive(pid);
    } else {
      const info = await stat(join(root, name)).catch(() => undefined);
      remove = info !== undefined && now - info.mtimeMs > STALE_TEMP_MS;
    }
    if (!remove) continue;
    await rm(join(root, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function safeHost(): string {
  return hostname().replace(/[^A-Za-z0-9-]/g, '_') || 'host';
}
