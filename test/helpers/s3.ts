import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { stopProcess } from './processes.ts';

const serverScript = fileURLToPath(new URL('./s3-server.ts', import.meta.url));

/**
 * A real S3-protocol server (s3rver) on loopback with one bucket, in a child process: a fault of
 * the emulator cannot take the test process with it, and the store is reached over the network
 * only, as S3 is. The child goes when `close` is called or when this process ends (its stdin closes).
 */
export async function startS3(
  bucket = 'tessera-test',
): Promise<{ endpoint: string; bucket: string; close(): Promise<void> }> {
  const child = spawn(process.execPath, [serverScript, bucket], { stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdout.setEncoding('utf8');
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`s3rver exited with ${code} before listening`)));
    child.stdout.on('data', (chunk: string) => {
      output += chunk;
      const line = output.split('\n')[0]!;
      if (output.includes('\n')) resolve(Number(line));
    });
  });
  child.unref();
  for (const stream of [child.stdin, child.stdout]) (stream as unknown as { unref?: () => void }).unref?.();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    close: () => stopProcess(child),
  };
}
