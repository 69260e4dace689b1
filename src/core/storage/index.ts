import type { Config } from '../../config.ts';
import type { BlobStore } from './blob-store.ts';
import { createLocalBlobStore } from './local-blob-store.ts';

export type { BlobStore, PutResult } from './blob-store.ts';

export function createBlobStore(config: Config['storage']): BlobStore {
  return config.kind === 's3' ? lazyS3BlobStore(config) : createLocalBlobStore(config.dir);
}

/**
 * The AWS SDK costs several MiB of memory and tens of milliseconds to load, so it is imported on
 * the first storage call rather than at start (issue 14: lean start).
 */
function lazyS3BlobStore(config: Extract<Config['storage'], { kind: 's3' }>): BlobStore {
  let store: Promise<BlobStore> | undefined;
  const load = () => (store ??= import('./s3-blob-store.ts').then((m) => m.createS3BlobStore(config)).catch((error) => {
    store = undefined;
    throw error;
  }));
  return {
    kind: 's3',
    put: async (key, body, options) => (await load()).put(key, body, options),
    get: async (key, range) => (await load()).get(key, range),
    head: async (key) => (await load()).head(key),
    delete: async (key) => (await load()).delete(key),
    ping: async () => (await load()).ping(),
  };
}
