import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Digest } from './files.ts';

/** The files of a backup folder (docs/operations.md › Backup and restore). */
export const MANIFEST_FILE = 'manifest.json';
export const DATABASE_FILE = 'tessera.sqlite';
export const SECRET_FILE = 'secret.key';
export const BLOBS_DIR = 'blobs';

export const MANIFEST_FORMAT = 'tessera-backup';
export const MANIFEST_VERSION = 1;

/** What `tessera backup` writes last: its presence marks a finished backup. */
export interface BackupManifest {
  format: typeof MANIFEST_FORMAT;
  formatVersion: number;
  createdAt: string;
  engine: 'sqlite';
  /** The schema's level: every migration the snapshot had applied, in the order they ran. */
  migrations: string[];
  database: { file: string } & Digest;
  /**
   * Where the secret key (which signs tokens and seals stored secrets) came from: `file` = copied
   * as secret.key, `environment` = TESSERA_SECRET_KEY, which the restored installation must be given.
   */
  secretKey: 'file' | 'environment' | 'none';
  /** Rows per table in the snapshot. */
  tables: Record<string, number>;
  /** Every blob copied, by key, sorted. */
  blobs: ({ key: string } & Digest)[];
  /** Content the snapshot refers to that the store did not have when the backup ran. */
  missing: { key: string; assetId: string }[];
}

export class BackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupError';
  }
}

/** Reads and checks a backup folder's manifest; anything else is a BackupError naming the problem. */
export async function readManifest(dir: string): Promise<BackupManifest> {
  const file = join(dir, MANIFEST_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new BackupError(`${file} is missing: ${dir} is not a finished Tessera backup`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new BackupError(`${file} is not valid JSON`);
  }
  const m = parsed as Partial<BackupManifest> | null;
  if (!m || m.format !== MANIFEST_FORMAT) throw new BackupError(`${file} is not a Tessera backup manifest`);
  if (m.formatVersion !== MANIFEST_VERSION)
    throw new BackupError(
      `${file} has format version ${m.formatVersion}; this Tessera reads version ${MANIFEST_VERSION}`,
    );
  const digest = (d: unknown): d is Digest =>
    !!d &&
    typeof (d as Digest).size === 'number' &&
    typeof (d as Digest).sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test((d as Digest).sha256);
  if (
    !Array.isArray(m.migrations) ||
    !m.migrations.every((n) => typeof n === 'string') ||
    !digest(m.database) ||
    !Array.isArray(m.blobs) ||
    !m.blobs.every((b) => digest(b) && typeof b.key === 'string' && safeKey(b.key)) ||
    !m.tables ||
    typeof m.tables !== 'object'
  ) {
    throw new BackupError(`${file} is incomplete or damaged`);
  }
  return m as BackupManifest;
}

/** A blob key as the stores make them: relative, no `.`/`..` parts (restore writes under the blob folder). */
export function safeKey(key: string): boolean {
  return (
    /^[A-Za-z0-9][A-Za-z0-9._=-]*(\/[A-Za-z0-9][A-Za-z0-9._=-]*)*$/.test(key) &&
    key.split('/').every((part) => part !== '.' && part !== '..')
  );
}
