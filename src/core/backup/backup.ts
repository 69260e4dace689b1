import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import type { Config } from '../../config.ts';
import { copyHashed, digestFile, listBlobKeys, type Digest } from './files.ts';
import {
  BackupError,
  BLOBS_DIR,
  DATABASE_FILE,
  MANIFEST_FILE,
  MANIFEST_FORMAT,
  MANIFEST_VERSION,
  SECRET_FILE,
  type BackupManifest,
} from './manifest.ts';
import { appliedMigrations, openSqlite, sqliteCounts } from './sqlite-file.ts';

type BackupConfig = Pick<Config, 'dataDir' | 'database' | 'storage' | 'secretKey'>;

export interface BackupResult {
  manifest: BackupManifest;
  /** Lines for the operator. */
  text: string;
  /** False when content the snapshot refers to was missing from the store (listed in the text). */
  ok: boolean;
}

/** Why only the embedded installation is backed up by Tessera itself; docs/operations.md has the rest. */
export function unsupportedBackup(config: BackupConfig): string | undefined {
  if (config.database.kind === 'postgres')
    return 'tessera backup copies an embedded installation (SQLite and a local blob folder); with PostgreSQL use pg_dump and the object store\'s own copy, as docs/operations.md › "Backup and restore" › "PostgreSQL and S3" describes';
  if (config.database.file === ':memory:') return 'an in-memory database has nothing to back up';
  if (config.storage.kind === 's3')
    return 'tessera backup copies blobs from a local folder; with TESSERA_STORAGE=s3://… copy the bucket with its own tools, as docs/operations.md › "Backup and restore" › "PostgreSQL and S3" describes';
  return undefined;
}

/**
 * A consistent backup of a running embedded installation into `out` (a new or empty folder):
 *
 * 1. every blob is copied (hashed on the way);
 * 2. the database is snapshotted with `VACUUM INTO`, one read transaction: writers go on meanwhile;
 * 3. blobs written since step 1 are copied. Blobs are written once under their key (renamed into
 *    place), so whatever the snapshot refers to existed at step 2 and was copied in step 1 or 3,
 *    unless it was deleted in between (an asset purged during the backup: reported);
 * 4. the secret key file, then manifest.json (counts per table, every blob's SHA-256) last.
 */
export async function createBackup(config: BackupConfig, out: string): Promise<BackupResult> {
  const refused = unsupportedBackup(config);
  if (refused) throw new BackupError(refused);
  if (config.database.kind !== 'sqlite' || config.storage.kind !== 'local') throw new BackupError(refused!);
  const dbFile = config.database.file;
  if (!existsSync(dbFile)) throw new BackupError(`there is no database at ${dbFile} (TESSERA_DATA_DIR / DATABASE_URL)`);
  const blobDir = resolve(config.storage.dir);
  if (resolve(out) === blobDir || resolve(out).startsWith(`${blobDir}${sep}`))
    throw new BackupError(`--out ${out} is inside the blob folder ${blobDir}; give a folder outside it`);
  const existing = await readdir(out).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw new BackupError(`cannot use ${out}: ${error.message}`);
  });
  if (existing.length > 0) throw new BackupError(`--out ${out} is not empty; give a new or empty folder`);
  await mkdir(join(out, BLOBS_DIR), { recursive: true, mode: 0o700 });

  const blobRoot = config.storage.dir;
  const copied = new Map<string, Digest>();
  const copyNew = async () => {
    for (const key of await listBlobKeys(blobRoot)) {
      if (copied.has(key)) continue;
      const digest = await copyHashed(join(blobRoot, key), join(out, BLOBS_DIR, key));
      if (digest) copied.set(key, digest);
    }
  };
  await copyNew();

  const snapshot = join(out, DATABASE_FILE);
  const live = openSqlite(dbFile);
  try {
    live.prepare('vacuum into ?').run(snapshot);
  } finally {
    live.close();
  }

  await copyNew();

  const db = openSqlite(snapshot);
  let migrations: string[];
  let tables: Record<string, number>;
  let referenced: { id: string; blob_key: string }[];
  try {
    migrations = appliedMigrations(db);
    tables = sqliteCounts(db);
    referenced = db
      .prepare(`select id, blob_key from assets where blob_key is not null and content_state = 'available' order by id`)
      .all() as { id: string; blob_key: string }[];
  } finally {
    db.close();
  }
  // An upload completing during the backup commits its asset, then moves the staged object to the
  // asset's key: a snapshot taken in between refers to a key that appears a moment later.
  const absent = () => referenced.filter((r) => !copied.has(r.blob_key));
  for (let attempt = 0; attempt < 3 && absent().length > 0; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    await copyNew();
  }
  const missing = absent().map((r) => ({ key: r.blob_key, assetId: r.id }));

  let secretKey: BackupManifest['secretKey'] = 'none';
  if (config.secretKey !== undefined) secretKey = 'environment';
  else if (await copyHashed(join(config.dataDir, SECRET_FILE), join(out, SECRET_FILE))) secretKey = 'file';

  const manifest: BackupManifest = {
    format: MANIFEST_FORMAT,
    formatVersion: MANIFEST_VERSION,
    createdAt: new Date().toISOString(),
    engine: 'sqlite',
    migrations,
    database: { file: DATABASE_FILE, ...(await digestFile(snapshot)) },
    secretKey,
    tables,
    blobs: [...copied].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, d]) => ({ key, ...d })),
    missing,
  };
  const temp = join(out, `${MANIFEST_FILE}.partial`);
  await writeFile(temp, `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, join(out, MANIFEST_FILE));
  await rm(temp, { force: true });

  const rows = Object.values(tables).reduce((a, b) => a + b, 0);
  const bytes = manifest.blobs.reduce((a, b) => a + b.size, 0);
  const lines = [
    `Backup written to ${out}`,
    `  database: ${Object.keys(tables).length} tables, ${rows} rows (schema at ${migrations.at(-1) ?? 'no migration'})`,
    `  blobs: ${manifest.blobs.length} files, ${bytes} bytes, each with its SHA-256 in ${MANIFEST_FILE}`,
    secretKey === 'file'
      ? `  secret key: copied (${SECRET_FILE}); keep this backup as private as the server`
      : secretKey === 'environment'
        ? '  secret key: TESSERA_SECRET_KEY (not copied): a restored installation needs the same value'
        : '  secret key: none found',
  ];
  for (const m of missing) lines.push(`MISSING: blob ${m.key} of asset ${m.assetId} was not in the store`);
  return { manifest, text: lines.join('\n'), ok: missing.length === 0 };
}
