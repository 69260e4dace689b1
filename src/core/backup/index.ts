export { createBackup, unsupportedBackup, type BackupResult } from './backup.ts';
export { restoreBackup, verifyBackup } from './restore.ts';
export { BackupError, readManifest, type BackupManifest } from './manifest.ts';
export { migrateToPostgres, DERIVED_TABLES, type MigrationReport } from './migrate-to-postgres.ts';
