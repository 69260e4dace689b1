import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { S3StorageConfig } from '../../config.ts';
import { assertSafeKey, type BlobStore, type PutResult } from './blob-store.ts';

/**
 * Any S3-protocol store. Checksums are sent only when required: with the SDK's default
 * aws-chunked framing some S3-compatible servers store the framing inside the object.
 */
export function createS3BlobStore(config: S3StorageConfig): BlobStore {
  const client = new S3Client({
    region: config.region,
    endpoint: config.endpoint,
    forcePathStyle: config.forcePathStyle,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    credentials: config.accessKeyId && config.secretAccessKey ? { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } : undefined,
  });
  const Bucket = config.bucket;
  const keyOf = (key: string) => {
    assertSafeKey(key);
    return config.prefix ? `${config.prefix.replace(/\/+$/, '')}/${key}` : key;
  };
  const isMissing = (error: unknown) => {
    const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
    return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
  };
  return {
    kind: 's3',
    async put(key, body, options): Promise<PutResult> {
      const Key = keyOf(key);
      if (Buffer.isBuffer(body)) {
        await client.send(new PutObjectCommand({ Bucket, Key, Body: body, ContentLength: body.length, ContentType: options?.contentType }));
        return { size: body.length, sha256: createHash('sha256').update(body).digest('hex') };
      }
      // A stream of unknown length is spooled to disk first so the upload has a known length.
      const spool = join(tmpdir(), `tessera-s3-${randomBytes(8).toString('hex')}`);
      const hash = createHash('sha256');
      let size = 0;
      try {
        await pipeline(
          body,
          new Transform({
            transform(chunk: Buffer, _enc, done) {
              hash.update(chunk);
              size += chunk.length;
              done(null, chunk);
            },
          }),
          createWriteStream(spool),
        );
        await client.send(new PutObjectCommand({ Bucket, Key, Body: createReadStream(spool), ContentLength: size, ContentType: options?.contentType }));
        return { size, sha256: hash.digest('hex') };
      } finally {
        await rm(spool, { force: true });
      }
    },
    async get(key, range) {
      try {
        const out = await client.send(
          new GetObjectCommand({ Bucket, Key: keyOf(key), Range: range ? `bytes=${range.start}-${range.end ?? ''}` : undefined }),
        );
        return out.Body as Readable;
      } catch (error) {
        if (isMissing(error)) return null;
        throw error;
      }
    },
    async head(key) {
      try {
        const out = await client.send(new HeadObjectCommand({ Bucket, Key: keyOf(key) }));
        return { size: out.ContentLength ?? 0 };
      } catch (error) {
        if (isMissing(error)) return null;
        throw error;
      }
    },
    async delete(key) {
      await client.send(new DeleteObjectCommand({ Bucket, Key: keyOf(key) }));
    },
    async ping() {
      await client.send(new HeadBucketCommand({ Bucket }));
    },
  };
}
