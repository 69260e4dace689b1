import type { Config } from '../../config.ts';
import type { BlobStore } from './blob-store.ts';
import { createLocalBlobStore } from './local-blob-store.ts';
import { createS3BlobStore } from './s3-blob-store.ts';

export type { BlobStore, PresignedUploads, PutResult } from './blob-store.ts';

export function createBlobStore(config: Config['storage']): BlobStore {
  return config.kind === 's3' ? createS3BlobStore(config) : createLocalBlobStore(config.dir);
}
