import type { Config } from '../../config.ts';
import type { BlobStore, PresignedUploads } from './blob-store.ts';
import { createLocalBlobStore } from './local-blob-store.ts';

export type { BlobStore, PresignedUploads, PutResult } from './blob-store.ts';
export { BlobTooLarge } from './blob-store.ts';

/** `spoolDir`: a private temporary folder for the S3 store's spool files (see core/temp.ts). */
export function createBlobStore(config: Config['storage'], spoolDir?: () => Promise<string>): BlobStore {
  return config.kind === 's3' ? lazyS3BlobStore(config, spoolDir) : createLocalBlobStore(config.dir);
}

/**
 * The AWS SDK costs several MiB of memory and tens of milliseconds to load, so it is imported on
 * the first storage call rather than at start (issue 14: lean start).
 */
function lazyS3BlobStore(
  config: Extract<Config['storage'], { kind: 's3' }>,
  spoolDir?: () => Promise<string>,
): BlobStore {
  let store: Promise<BlobStore> | undefined;
  const load = () =>
    (store ??= import('./s3-blob-store.ts')
      .then((m) => m.createS3BlobStore(config, spoolDir))
      .catch((error) => {
        store = undefined;
        throw error;
      }));
  const presigner = async (): Promise<PresignedUploads> => {
    const loaded = await load();
    if (!loaded.presign) throw new Error('the S3 store cannot presign');
    return loaded.presign;
  };
  return {
    kind: 's3',
    put: async (key, body, options) => (await load()).put(key, body, options),
    get: async (key, range) => (await load()).get(key, range),
    head: async (key) => (await load()).head(key),
    delete: async (key) => (await load()).delete(key),
    ping: async () => (await load()).ping(),
    deletePrefix: async (prefix) => (await load()).deletePrefix(prefix),
    move: async (from, to) => (await load()).move(from, to),
    // S3 stores always sign; the object is there from the start so callers can test for it.
    presign: {
      put: async (key, ttl) => (await presigner()).put(key, ttl),
      createMultipart: async (key, contentType) => (await presigner()).createMultipart(key, contentType),
      part: async (key, uploadId, n, ttl) => (await presigner()).part(key, uploadId, n, ttl),
      complete: async (key, uploadId, parts) => (await presigner()).complete(key, uploadId, parts),
      abort: async (key, uploadId) => (await presigner()).abort(key, uploadId),
    },
  };
}
