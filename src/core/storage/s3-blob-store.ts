import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import type { S3StorageConfig } from '../../config.ts';
import { DependencyUnavailable, isStorageOutage } from '../outage.ts';
import { assertSafeKey, type BlobStore, type PresignedUploads, type PutResult } from './blob-store.ts';

/**
 * Any S3-protocol store. Checksums are sent only when required: with the SDK's default
 * aws-chunked framing some S3-compatible servers store the framing inside the object.
 */
/** `spoolDir` makes a private folder for a spool file (Tessera's temporary root, core/temp.ts); the system's by default. */
export function createS3BlobStore(
  config: S3StorageConfig,
  spoolDir: () => Promise<string> = () => mkdtemp(join(tmpdir(), 'tessera-s3-')),
): BlobStore {
  const client = new S3Client({
    // A store that does not answer fails the call (503 to an API caller, a retry for a job) rather
    // than holding it for the whole outage: connecting, and each silence of the socket, are bounded.
    requestHandler: {
      connectionTimeout: config.connectTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      throwOnRequestTimeout: true,
    },
    region: config.region,
    endpoint: config.endpoint,
    forcePathStyle: config.forcePathStyle,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    credentials:
      config.accessKeyId && config.secretAccessKey
        ? { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey }
        : undefined,
  });
  guardOutages(client);
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
        await client.send(
          new PutObjectCommand({
            Bucket,
            Key,
            Body: body,
            ContentLength: body.length,
            ContentType: options?.contentType,
          }),
        );
        return { size: body.length, sha256: createHash('sha256').update(body).digest('hex') };
      }
      // A stream of unknown length is spooled to disk first so the upload has a known length.
      const spoolFolder = await spoolDir();
      const spool = join(spoolFolder, 'spool');
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
        await client.send(
          new PutObjectCommand({
            Bucket,
            Key,
            Body: createReadStream(spool),
            ContentLength: size,
            ContentType: options?.contentType,
          }),
        );
        return { size, sha256: hash.digest('hex') };
      } finally {
        await rm(spoolFolder, { recursive: true, force: true });
      }
    },
    async get(key, range) {
      try {
        const out = await client.send(
          new GetObjectCommand({
            Bucket,
            Key: keyOf(key),
            Range: range ? `bytes=${range.start}-${range.end ?? ''}` : undefined,
          }),
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
    async deletePrefix(prefix) {
      const Prefix = `${keyOf(prefix)}/`;
      let ContinuationToken: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket, Prefix, ContinuationToken }));
        for (const item of page.Contents ?? [])
          if (item.Key) await client.send(new DeleteObjectCommand({ Bucket, Key: item.Key }));
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
    },
    async move(from, to) {
      await client.send(new CopyObjectCommand({ Bucket, Key: keyOf(to), CopySource: `${Bucket}/${keyOf(from)}` }));
      await client.send(new DeleteObjectCommand({ Bucket, Key: keyOf(from) }));
    },
    presign: presignedUploads(config, client, keyOf),
  };
}

/** Every call of the client that fails because the store cannot answer rejects with DependencyUnavailable. */
function guardOutages(client: S3Client): void {
  const send = client.send.bind(client) as (command: unknown) => Promise<unknown>;
  (client as unknown as { send: (command: unknown) => Promise<unknown> }).send = (command) =>
    send(command).catch((error: unknown) => {
      if (error instanceof DependencyUnavailable || !isStorageOutage(error)) throw error;
      throw new DependencyUnavailable(
        'storage',
        `The blob storage is not answering: ${(error as Error).message || (error as Error).name}`,
        { cause: error },
      );
    });
}

/** SHA-256 (or HMAC-SHA-256) in the shape the SigV4 signer wants. */
class NodeSha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: string | Uint8Array) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', secret);
  }
  update(data: string | Uint8Array): void {
    this.hash.update(data);
  }
  async digest(): Promise<Uint8Array> {
    return this.hash.digest();
  }
  reset(): void {}
}

function presignedUploads(config: S3StorageConfig, client: S3Client, keyOf: (key: string) => string): PresignedUploads {
  const Bucket = config.bucket;
  const signer = new SignatureV4({
    service: 's3',
    region: config.region,
    sha256: NodeSha256 as unknown as ConstructorParameters<typeof SignatureV4>[0]['sha256'],
    uriEscapePath: false,
    credentials: async () => {
      const credentials = await client.config.credentials();
      return credentials;
    },
  });
  const presign = async (
    method: string,
    key: string,
    query: Record<string, string>,
    expiresIn: number,
  ): Promise<string> => {
    const base = new URL(config.endpoint ?? `https://s3.${config.region}.amazonaws.com`);
    const path = config.forcePathStyle || config.endpoint ? `/${Bucket}/${keyOf(key)}` : `/${keyOf(key)}`;
    const hostname = config.forcePathStyle || config.endpoint ? base.hostname : `${Bucket}.${base.hostname}`;
    const host = base.port ? `${hostname}:${base.port}` : hostname;
    const signed = await signer.presign(
      {
        method,
        protocol: base.protocol,
        hostname,
        port: base.port ? Number(base.port) : undefined,
        path,
        query,
        headers: { host },
      },
      { expiresIn },
    );
    const url = new URL(`${base.protocol}//${host}${path}`);
    for (const [name, value] of Object.entries(signed.query ?? {})) {
      if (typeof value === 'string') url.searchParams.set(name, value);
    }
    return url.toString();
  };
  return {
    put: (key, expiresIn) => presign('PUT', key, {}, expiresIn),
    async createMultipart(key, contentType) {
      const out = await client.send(
        new CreateMultipartUploadCommand({ Bucket, Key: keyOf(key), ContentType: contentType }),
      );
      if (!out.UploadId) throw new Error('S3 returned no UploadId');
      return out.UploadId;
    },
    part: (key, uploadId, partNumber, expiresIn) =>
      presign('PUT', key, { partNumber: String(partNumber), uploadId }, expiresIn),
    async complete(key, uploadId, parts) {
      await client.send(
        new CompleteMultipartUploadCommand({
          Bucket,
          Key: keyOf(key),
          UploadId: uploadId,
          MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.partNumber, ETag: p.etag })) },
        }),
      );
    },
    async abort(key, uploadId) {
      await client.send(new AbortMultipartUploadCommand({ Bucket, Key: keyOf(key), UploadId: uploadId }));
    },
  };
}
