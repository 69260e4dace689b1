// A real S3-protocol server (s3rver) in its own process, as S3 is to Tessera: started by
// test/helpers/s3.ts, it prints its port on stdout and serves until its parent goes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';

// s3rver emulates S3 on disk and removes a folder a delete emptied; a put landing in that folder
// at the same moment fails inside s3rver on a write stream it does not listen to. The request then
// fails (the client retries it); the emulator must not die of it, as S3 would not.
process.on('uncaughtException', (error) => console.error(`s3rver: ${error.message}`));

const bucket = process.argv[2] ?? 'tessera-test';
const directory = mkdtempSync(join(tmpdir(), 'tessera-s3-'));
const server = new S3rver({
  port: 0,
  address: '127.0.0.1',
  silent: true,
  directory,
  configureBuckets: [{ name: bucket }],
});
const address = (await server.run()) as { port: number };
const stop = () => {
  rmSync(directory, { recursive: true, force: true });
  process.exit(0);
};
process.on('SIGTERM', stop);
process.stdin.on('end', stop).resume();
console.log(String(address.port));
