// Raw delivery baseline: signed webhook POSTs per second from this process to a node:http receiver
// on loopback, through the production path (webhookHeaders + sendOnce + guarded keep-alive Agent),
// with no database. The end-to-end bench (outbox + durable attempt log) is compared against it.
// Receiver in a child process (its own core) and in this process (sharing our event loop).
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { createGuardedDispatcher } from '../src/core/net/ssrf.ts';
import { generateSecret, sendOnce, sign, webhookHeaders } from '../src/features/webhooks/delivery/index.ts';
import { fmt, percentile, printTable } from './lib.ts';

const N = Number(process.env.BENCH_N ?? 20_000);
const secret = generateSecret();
// A realistic ~2 KB envelope (reference §14.3).
const body = JSON.stringify({
  eventType: 'asset.updated',
  event: {
    id: 'asset-updated-0192f0c4-7d1e-7000-8000-000000000000',
    time: new Date().toISOString(),
    user: { id: '0192f0c4-7d1e-7000-8000-000000000001', firstName: 'Erlich', lastName: 'Bachman' },
  },
  asset: {
    id: '0192f0c4-7d1e-7000-8000-000000000002',
    name: 'campaign-hero.jpg',
    metadata: Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [`field${i}`, `value number ${i} of the asset metadata`]),
    ),
  },
});

const RECEIVER = `
const http = require('node:http');
const server = http.createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('ok'); }); });
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

async function childReceiver(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve) =>
    child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim())),
  );
  return { url: `http://127.0.0.1:${port}/hooks/tessera`, child };
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** One round: N deliveries at `concurrency`; returns deliveries/s, per-delivery latencies and failures. */
async function round(url: string, concurrency: number): Promise<{ rate: number; times: number[]; failures: number }> {
  const dispatcher = createGuardedDispatcher({
    allowPrivate: true,
    connections: concurrency,
    keepAliveTimeoutMs: 30_000,
  });
  const times: number[] = [];
  let failures = 0;
  const deliver = async (i: number) => {
    const headers = webhookHeaders({
      msgId: `msg_${i}`,
      timestamp: Math.floor(Date.now() / 1000),
      body,
      secrets: [secret],
    });
    const result = await sendOnce({ url, body, headers, dispatcher });
    if (!result.ok) failures += 1;
    return result.latencyMs;
  };
  for (let i = 0; i < 500; i++) await deliver(-1 - i); // warm-up: connections, JIT
  failures = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < N) times.push(await deliver(next++));
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await dispatcher.close();
  return { rate: N / seconds, times, failures };
}

/** ROUNDS rounds; reports the median round (the machine is shared, single rounds are noisy). */
async function run(url: string, concurrency: number): Promise<(string | number)[]> {
  const results = [];
  for (let r = 0; r < ROUNDS; r++) results.push(await round(url, concurrency));
  results.sort((a, b) => a.rate - b.rate);
  const median = results[Math.floor(results.length / 2)]!;
  const failures = results.reduce((sum, r) => sum + r.failures, 0);
  return [
    concurrency,
    `${ROUNDS} × ${N}`,
    failures,
    Math.round(median.rate),
    `${Math.round(results[0]!.rate)}–${Math.round(results.at(-1)!.rate)}`,
    fmt(percentile(median.times, 50)),
    fmt(percentile(median.times, 99)),
  ];
}

const rows: (string | number)[][] = [];
const { url: childUrl, child } = await childReceiver();
for (const c of [16, 64]) rows.push(['child process', ...(await run(childUrl, c))]);
child.kill();

const local = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
});
local.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => local.listen(0, '127.0.0.1', resolve));
const localUrl = `http://127.0.0.1:${(local.address() as AddressInfo).port}/hooks/tessera`;
for (const c of [16, 64]) rows.push(['same process', ...(await run(localUrl, c))]);
local.closeAllConnections();
local.close();

printTable(
  `Signed webhook deliveries to a loopback node:http receiver (${Buffer.byteLength(body)} B body, keep-alive, no DB)`,
  [
    'receiver',
    'concurrency',
    'rounds × deliveries',
    'failed',
    'deliveries/s (median round)',
    'range /s',
    'p50 ms',
    'p99 ms',
  ],
  rows,
);

// Signing cost per delivery: node:crypto (what we use) vs the standardwebhooks package (the oracle).
const SIGNS = 20_000;
const lib = new Webhook(secret);
const when = new Date();
const timeIt = (fn: (i: number) => unknown) => {
  for (let i = 0; i < 1000; i++) fn(i);
  const t = performance.now();
  for (let i = 0; i < SIGNS; i++) fn(i);
  return ((performance.now() - t) * 1000) / SIGNS;
};
const ours = timeIt((i) => sign(secret, `msg_${i}`, 1_700_000_000, body));
const theirs = timeIt((i) => lib.sign(`msg_${i}`, when, body));
printTable(
  `Signing one ${Buffer.byteLength(body)} B body (µs/op)`,
  ['implementation', 'µs/op'],
  [
    ['node:crypto HMAC-SHA256 (Tessera)', fmt(ours)],
    ['standardwebhooks npm (pure JS)', fmt(theirs)],
    ['research note [M] (2 KB, Node 20, other machine)', '7.3 / 35.8'],
  ],
);
