import { existsSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../../config.ts';
import { migrations as knownMigrations } from '../db/migrations/index.ts';
import { copyHashed, digestFile, listBlobKeys, type Digest } from './files.ts';
import { BackupError, BLOBS_DIR, readManifest, SECRET_FILE, type BackupManifest } from './manifest.ts';
import { openSqlite, sqliteCounts } from './sqlite-file.ts';

type RestoreConfig = Pick<Config, 'dataDir' | 'database' | 'storage' | 'secretKey'>;

const describe = (d: Digest) => `${d.size} bytes, SHA-256 ${d.sha256}`;

/** Checks that a backup folder is whole: the database file and every blob match the manifest. */
export async function verifyBackup(from: string): Promise<BackupManifest> {
  const manifest = await readManifest(from);
  const dbFile = join(from, manifest.database.file);
  const db = await digestFile(dbFile).catch(() => null);
  if (!db) throw new BackupError(`the backup's database file ${dbFile} is missing`);
  if (db.sha256 !== manifest.database.sha256 || db.size !== manifest.database.size)
    throw new BackupError(
      `the backup's database file ${dbFile} is damaged: ${describe(db)}, the manifest says ${describe(manifest.database)}`,
    );
  const damaged: string[] = [];
  for (const blob of manifest.blobs) {
    const found = await digestFile(join(from, BLOBS_DIR, blob.key)).catch(() => null);
    if (!found) damaged.push(`blob ${blob.key} is missing from the backup`);
    else if (found.sha256 !== blob.sha256 || found.size !== blob.size)
      damaged.push(`blob ${blob.key} is damaged: ${describe(found)}, the manifest says ${describe(blob)}`);
  }
  if (damaged.length > 0)
    throw new BackupError(`the backup in ${from} is not intact, nothing was restored:\n  ${damaged.join('\n  ')}`);
  return manifest;
}

/**
 * Restores a backup made by `tessera backup` into this configuration's data folder (database file,
 * blob folder, secret key). The backup is verified whole before anything is written; a folder
 * already holding an installation is refused unless `force` (then its database, blobs and secret
 * key are replaced). Every file is hashed again as it is written, and the rows per table of the
 * restored database are compared with the manifest.
 */
export async function restoreBackup(config: RestoreConfig, from: string, options: { force?: boolean } = {}) {
  if (config.database.kind === 'postgres')
    throw new BackupError(
      'tessera restore restores an embedded installation (SQLite and a local blob folder); unset DATABASE_URL, or restore PostgreSQL with pg_restore as docs/operations.md › "Backup and restore" describes',
    );
  if (config.database.file === ':memory:') throw new BackupError('cannot restore into an in-memory database');
  if (config.storage.kind === 's3')
    throw new BackupError(
      'tessera restore writes blobs into a local folder; unset TESSERA_STORAGE (or give file:/dir), then move to S3 with tessera migrate-to-postgres',
    );
  const dbFile = config.database.file;
  const blobRoot = config.storage.dir;

  const manifest = await verifyBackup(from);
  const known = new Set(Object.keys(knownMigrations));
  const unknown = manifest.migrations.filter((name) => !known.has(name));
  if (unknown.length > 0)
    throw new BackupError(
      `the backup was made by a newer Tessera (its schema has migration ${unknown.join(', ')}, which this version does not know); restore it with that version or a later one`,
    );

  const occupied: string[] = [];
  const dataEntries = await readdir(config.dataDir).catch(() => [] as string[]);
  if (dataEntries.length > 0) occupied.push(`${config.dataDir} holds ${dataEntries.slice(0, 5).join(', ')}`);
  if (existsSync(dbFile)) occupied.push(`${dbFile} exists`);
  if ((await listBlobKeys(blobRoot)).length > 0) occupied.push(`${blobRoot} holds blobs`);
  if (occupied.length > 0 && !options.force)
    throw new BackupError(
      `the target is not empty (${occupied.join('; ')}); restore into an empty TESSERA_DATA_DIR, or give --force to replace its database, blobs and secret key (stop every Tessera process using it first)`,
    );
  if (options.force) {
    for (const suffix of ['', '-wal', '-shm', '-journal']) await rm(`${dbFile}${suffix}`, { force: true });
    await rm(blobRoot, { recursive: true, force: true });
    await rm(join(config.dataDir, SECRET_FILE), { force: true });
  }
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  await mkdir(blobRoot, { recursive: true, mode: 0o700 });

  const expect = (what: string, got: Digest | null, want: Digest) => {
    if (!got || got.sha256 !== want.sha256 || got.size !== want.size)
      throw new BackupError(
        `${what} changed while being restored (${got ? describe(got) : 'gone'}, expected ${describe(want)}); run the restore again with --force`,
      );
  };
  for (const blob of manifest.blobs) {
    expect(`blob ${blob.key}`, await copyHashed(join(from, BLOBS_DIR, blob.key), join(blobRoot, blob.key)), blob);
  }
  let secret = 'none in the backup';
  if (existsSync(join(from, SECRET_FILE))) {
    await copyHashed(join(from, SECRET_FILE), join(config.dataDir, SECRET_FILE));
    secret =
      config.secretKey === undefined ? 'restored' : 'restored (TESSERA_SECRET_KEY, which is set, takes precedence)';
  } else if (manifest.secretKey === 'environment') {
    secret = 'not in the backup: give the restored installation the same TESSERA_SECRET_KEY as the original';
  }
  // The database last: a restore that stopped half-way leaves no database to start on.
  expect('the database file', await copyHashed(join(from, manifest.database.file), dbFile), manifest.database);

  const restored = openSqlite(dbFile);
  let counts: Record<string, number>;
  try {
    counts = sqliteCounts(restored);
  } finally {
    restored.close();
  }
  const differ = Object.entries(manifest.tables).filter(([table, n]) => counts[table] !== n);
  if (differ.length > 0)
    throw new BackupError(
      `the restored database does not match the manifest: ${differ.map(([t, n]) => `${t} has ${counts[t] ?? 'no table'}, expected ${n}`).join('; ')}`,
    );
  const rows = Object.values(counts).reduce((a, b) => a + b, 0);
  const bytes = manifest.blobs.reduce((a, b) => a + b.size, 0);
  return {
    manifest,
    text: [
      `Restored the backup of ${manifest.createdAt} into ${config.dataDir}`,
      `  database: ${dbFile}, ${Object.keys(counts).length} tables, ${rows} rows, each table's count as in the manifest`,
      `  blobs: ${manifest.blobs.length} files, ${bytes} bytes into ${blobRoot}, every SHA-256 verified`,
      `  secret key: ${secret}`,
      '  start Tessera on it (tessera serve) to bring the schema up to date and serve',
    ].join('\n'),
  };
}
