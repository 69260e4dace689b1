// Baseline: the cost of one unauthenticated round trip through Tessera (GET /healthz) next to a
// raw node:http server in the same process, over real loopback HTTP.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { fmt, measure, percentile, printTable, startBenchServer } from './lib.ts';

const N = 3000;
const agent = new Agent({ connections: 8 });
const get = async (url: string) => {
  const res = await request(url, { dispatcher: agent });
  await res.body.text();
};

const raw = createServer((_req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end('{"status":"ok"}');
});
await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
const rawUrl = `http://127.0.0.1:${(raw.address() as AddressInfo).port}/healthz`;
const server = await startBenchServer();

const rows: (string | number)[][] = [];
for (const [name, url] of [
  ['raw node:http', rawUrl],
  ['Tessera GET /healthz', `${server.url}/healthz`],
] as const) {
  const times = await measure(N, () => get(url), { concurrency: 8 });
  rows.push([name, N, fmt(percentile(times, 50)), fmt(percentile(times, 99))]);
}
printTable('HTTP round trip on loopback (8 concurrent)', ['server', 'requests', 'p50 ms', 'p99 ms'], rows);
raw.close();
await server.close();
await agent.close();
