import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';

/** A real S3-protocol server on loopback (s3rver), with one bucket. */
export async function startS3(bucket = 'tessera-test'): Promise<{ endpoint: string; bucket: string; close(): Promise<void> }> {
  const directory = mkdtempSync(join(tmpdir(), 'tessera-s3-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: bucket }] });
  const address = (await server.run()) as { port: number };
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    bucket,
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
