import type { Readable } from 'node:stream';
import { invalidField } from '../http/errors.ts';

export interface PutResult {
  size: number;
  sha256: string;
}

/** A body longer than the put's `maxBytes`: nothing was kept. */
export class BlobTooLarge extends Error {
  readonly limit: number;
  readonly received: number;

  constructor(limit: number, received: number) {
    super(`${received} bytes arrived where at most ${limit} were expected`);
    this.name = 'BlobTooLarge';
    this.limit = limit;
    this.received = received;
  }
}

/** Where file bytes live. Keys are slash-separated relative paths chosen by the server. */
export interface PinnedObject {
  readonly path: string;
  release(): Promise<void>;
}

export interface BlobStore {
  readonly kind: 'local' | 's3';
  /**
   * Writes atomically: readers see the old object or the whole new one, never a part. With
   * `maxBytes` (local disk), a body that grows past it is drained without being written and the put
   * fails with BlobTooLarge, keeping nothing.
   */
  put(key: string, body: Readable | Buffer, options?: { contentType?: string; maxBytes?: number }): Promise<PutResult>;
  /** Null when the object does not exist. `end` is inclusive. */
  get(key: string, range?: { start: number; end?: number }): Promise<Readable | null>;
  head(key: string): Promise<{ size: number } | null>;
  delete(key: string): Promise<void>;
  /** Throws when the store cannot be reached (readiness). */
  ping(): Promise<void>;
  /** Deletes every object under `prefix/` (and, on disk, any half-written temporary file there). */
  deletePrefix(prefix: string): Promise<void>;
  /** Moves an object to another key (rename on disk; copy + delete on S3). */
  move(from: string, to: string): Promise<void>;
  /**
   * A file holding an object, for a reader that opens it itself, without a copy (local disk only;
   * undefined on S3): a hard link to the stored file in the store's staging folder, so the bytes stay
   * readable until release() even if the object is purged or replaced meanwhile (objects are renamed
   * into place, never rewritten). Null when the object is missing.
   */
  pin?(key: string): Promise<PinnedObject | null>;
  /** Direct-to-store uploads with presigned URLs; only stores that can sign (S3) have them. */
  readonly presign?: PresignedUploads;
}

/** S3-protocol presigned uploads: the client sends bytes straight to the store. */
export interface PresignedUploads {
  /** A presigned PUT URL for `key`, valid `expiresInSeconds`. */
  put(key: string, expiresInSeconds: number): Promise<string>;
  /** Starts a multipart upload; returns the store's upload id. */
  createMultipart(key: string, contentType?: string): Promise<string>;
  part(key: string, uploadId: string, partNumber: number, expiresInSeconds: number): Promise<string>;
  complete(key: string, uploadId: string, parts: readonly { partNumber: number; etag: string }[]): Promise<void>;
  abort(key: string, uploadId: string): Promise<void>;
}

const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._=-]*(\/[A-Za-z0-9][A-Za-z0-9._=-]*)*$/;

export function assertSafeKey(key: string): void {
  if (!SAFE_KEY.test(key) || key.length > 1024 || key.split('/').some((part) => part === '..' || part === '.')) {
    throw invalidField('key', 'is not a safe storage key');
  }
}
