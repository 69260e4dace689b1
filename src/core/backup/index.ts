export { createBackup, unsupportedBackup, type BackupResult } from './backup.ts';
export { restoreBackup, verifyBackup } from './restore.ts';
export { BackupError, readManifest, type BackupManifest } from './manifest.ts';
