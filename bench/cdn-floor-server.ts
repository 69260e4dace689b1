// The floor of a cache hit in Node on this machine, for the cdn bench: 2 node:cluster workers sharing a
// port (SO_REUSEPORT, as the edge's), each pinned to its own CPU like EDGE_CPU_AFFINITY=auto, answering
// every request on a keep-alive connection with one prebuilt HTTP/1.1 response (20 KB or 200 KB by the
// path's first digits) in one write — no parsing beyond finding the end of each request's head, no
// routing, no cache lookup, no headers built. What any Node hit path costs at least: the rest is
// Node's socket read and write. Usage: node bench/cdn-floor-server.ts <port>; prints "ready" per worker.
import cluster from 'node:cluster';
import { createServer } from 'node:net';
import { pinThisWorker } from '../src/edge/affinity.ts';

const port = Number(process.argv[2]);
if (cluster.isPrimary) {
  for (let i = 0; i < 2; i++) cluster.fork({ FLOOR_WORKER_INDEX: String(i) });
  cluster.on('message', (_w, m) => process.stdout.write(`${m}\n`));
  process.once('SIGTERM', () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGTERM');
    setTimeout(() => process.exit(0), 200);
  });
} else {
  pinThisWorker(Number(process.env.FLOOR_WORKER_INDEX));
  const answer = (size: number) =>
    Buffer.concat([
      Buffer.from(
        `HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\ncontent-length: ${size}\r\n` +
          `cache-control: public, max-age=3600\r\netag: "x"\r\ndate: ${new Date().toUTCString()}\r\n\r\n`,
        'latin1',
      ),
      Buffer.alloc(size, 120),
    ]);
  const small = answer(20 * 1024);
  const large = answer(200 * 1024);
  const server = createServer({ noDelay: true }, (socket) => {
    let tail = '';
    socket.on('data', (chunk: Buffer) => {
      const text = tail + chunk.toString('latin1');
      let from = 0;
      for (let end = text.indexOf('\r\n\r\n'); end !== -1; end = text.indexOf('\r\n\r\n', from)) {
        socket.write(text.startsWith('GET /200', from) ? large : small);
        from = end + 4;
      }
      tail = text.slice(from);
    });
    socket.on('error', () => {});
  });
  server.listen({ port, host: '127.0.0.1', exclusive: true, reusePort: true }, () => process.send!('ready'));
}
