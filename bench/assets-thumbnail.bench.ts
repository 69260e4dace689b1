// Uploads and the first thumbnail (issue 30, item 4), over loopback HTTP against a server process
// with its job workers on (bench/assets-thumbnail-server.ts), SQLite and local disk:
// 1. first thumbnail: a 12 MP JPEG is created (POST /v1/asset) and PUT; from the PUT's answer the
//    client asks for its thumbnail every 5 ms until it is served (target ≤ 150 ms). Each upload
//    waits for the previous one's renditions to finish (every upload starts from an idle queue).
// 2. small uploads while renditions run: 1 MB JPEGs, one after another, right after six 12 MP
//    JPEGs were uploaded (their renditions, and the earlier small ones', run meanwhile); the same
//    with non-image bytes and no renditions running beside them, as the reference. Target: p99 ≤ 3× p50.
// 3. 1 MB JPEGs, 4 at a time: MB/s, against writing the same files straight to disk (write, fsync,
//    rename, 4 at a time) in this process.
// Directus 12.4.0 (bench/directus-peer.ts: installed outside the repository, started here fresh on
// SQLite and local disk) runs the same three in the same run, its rounds alternated with Tessera's;
// Directus does not fsync an upload before answering, Tessera does. Absent, a row says how to install it.
// ASSETS_THUMB_RUNS (default 10) sets the first-thumbnail uploads, ASSETS_SMALL_N (50) the small ones.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import sharp from 'sharp';
import { DIRECTUS_INSTALL, DIRECTUS_VERSION, type DirectusPeer, findDirectus, startDirectus } from './directus-peer.ts';
import { fmt, percentile, printTable } from './lib.ts';

const THUMB_RUNS = Number(process.env.ASSETS_THUMB_RUNS ?? 10);
const SMALL_N = Number(process.env.ASSETS_SMALL_N ?? 50);
const CONCURRENT_N = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');

async function noiseJpeg(width: number, height: number, sigma: number, quality: number): Promise<Buffer> {
  return sharp({
    create: {
      width,
      height,
      channels: 3,
      background: { r: 120, g: 130, b: 140 },
      noise: { type: 'gaussian', mean: 128, sigma },
    },
  })
    .jpeg({ quality })
    .toBuffer();
}
/** The same picture with a random JPEG comment after SOI: new bytes (content-addressed storage would otherwise reuse renditions). */
function variant(jpeg: Buffer): Buffer {
  const comment = Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0x12]), randomBytes(16)]);
  return Buffer.concat([jpeg.subarray(0, 2), comment, jpeg.subarray(2)]);
}

const big = await noiseJpeg(4000, 3000, 12, 85);
const small = await noiseJpeg(1250, 1250, 40, 90);

function startServer() {
  const script = (
    JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }
  ).scripts.start.split(/\s+/);
  const flags = script.slice(1).filter((arg) => arg.startsWith('--'));
  const child = spawn(process.execPath, [...flags, 'bench/assets-thumbnail-server.ts'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const info = new Promise<{ url: string; token: string; templateId: string; securityTemplateId: string }>(
    (resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', (line) => resolve(JSON.parse(line)));
      child.once('exit', (code) => reject(new Error(`the server exited (${code})`)));
    },
  );
  return { child, info };
}

const server = startServer();
const { url, token, templateId, securityTemplateId } = await server.info;
const found = findDirectus();
let absent = 'missing' in found ? `${found.missing}; install: ${DIRECTUS_INSTALL}` : '';
const directus: DirectusPeer | undefined =
  'cli' in found
    ? await startDirectus(found.cli).catch((error: Error) => {
        absent = `installed but did not start: ${error.message.split('\n').find((l) => /Error/.test(l)) ?? error.message.slice(0, 300)}`;
        return undefined;
      })
    : undefined;
const DIRECTUS = `Directus ${DIRECTUS_VERSION} (does not fsync before answering)`;
/** Directus: POST /files, then its thumbnail asked for until served (drawn at the first request). */
async function directusThumb(bytes: Buffer, i: number): Promise<{ ms: number; thumb: number }> {
  const start = performance.now();
  const id = await directus!.upload(bytes, `photo-${i}.jpg`, 'image/jpeg');
  const answered = performance.now();
  const status = await directus!.thumbnail(id);
  if (status !== 200) throw new Error(`Directus thumbnail: ${status}`);
  return { ms: answered - start, thumb: performance.now() - answered };
}
async function directusUpload(bytes: Buffer, name: string, type: string): Promise<number> {
  const start = performance.now();
  await directus!.upload(bytes, name, type);
  return performance.now() - start;
}
const auth = { accesstoken: token };

/** POST /v1/asset then PUT the bytes: returns the asset id and when the PUT was answered. */
async function upload(
  bytes: Buffer,
  filename: string,
  type: string,
): Promise<{ id: string; ms: number; answered: number }> {
  const start = performance.now();
  const created = await fetch(`${url}/v1/asset`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ filename, metadataTemplateId: templateId, securityTemplateIds: [securityTemplateId] }),
  });
  const body = (await created.json()) as { objectId: string; url: string };
  if (created.status !== 200) throw new Error(`create: ${created.status} ${JSON.stringify(body)}`);
  const put = await fetch(body.url.replace(/^https?:\/\/[^/]+/, url), {
    method: 'PUT',
    headers: { 'content-type': type },
    body: bytes,
  });
  const answered = performance.now();
  if (put.status !== 200) throw new Error(`PUT: ${put.status} ${await put.text()}`);
  await put.arrayBuffer();
  return { id: body.objectId, ms: answered - start, answered };
}

/** Asks for a rendition every 5 ms until it is served: when it was. */
async function whenServed(id: string, name: string): Promise<number> {
  const deadline = performance.now() + 120_000;
  for (;;) {
    const res = await fetch(`${url}/v1/asset/${id}/rendition/${name}`, { headers: auth });
    await res.arrayBuffer();
    if (res.status === 200) return performance.now();
    if (res.status !== 404) throw new Error(`rendition ${name}: ${res.status}`);
    if (performance.now() > deadline) throw new Error(`rendition ${name} of ${id} never came`);
    await sleep(5);
  }
}

// Warm-up (the first upload loads sharp and whatever the renditions start).
for (let i = 0; i < 2; i++) {
  const u = await upload(variant(big), 'warm.jpg', 'image/jpeg');
  await whenServed(u.id, 'mezzaninePreview');
  if (directus) await directusThumb(variant(big), -1 - i);
}

// 1. First thumbnail of a 12 MP JPEG after the upload's answer.
const firstThumb: number[] = [];
const allRenditions: number[] = [];
const bigUpload: number[] = [];
const directusBig: number[] = [];
const directusFirst: number[] = [];
for (let i = 0; i < THUMB_RUNS; i++) {
  const u = await upload(variant(big), `photo-${i}.jpg`, 'image/jpeg');
  bigUpload.push(u.ms);
  firstThumb.push((await whenServed(u.id, 'imageThumb')) - u.answered);
  allRenditions.push((await whenServed(u.id, 'mezzaninePreview')) - u.answered);
  if (directus) {
    const d = await directusThumb(variant(big), i);
    directusBig.push(d.ms);
    directusFirst.push(d.thumb);
  }
}
const peerRow = (metric: string, values: number[]) =>
  directus
    ? [`${DIRECTUS}: ${metric}`, fmt(percentile(values, 50), 1), fmt(percentile(values, 95), 1), '—']
    : [`${DIRECTUS}: ${absent}`, '—', '—', '—'];
printTable(
  `First thumbnail of a 12 MP JPEG (4000×3000, ${(big.length / 1048576).toFixed(1)} MB), ${THUMB_RUNS} uploads, each from an idle queue; ${cpus().length} cores; load average ${load()}`,
  ['metric', 'p50 ms', 'p95 ms', 'target'],
  [
    [
      'upload (POST /v1/asset + PUT, fsynced)',
      fmt(percentile(bigUpload, 50), 1),
      fmt(percentile(bigUpload, 95), 1),
      '—',
    ],
    [
      "first thumbnail served, after the PUT's answer",
      fmt(percentile(firstThumb, 50), 1),
      fmt(percentile(firstThumb, 95), 1),
      '≤ 150',
    ],
    [
      "every rendition served (mezzanine 3000 px), after the PUT's answer",
      fmt(percentile(allRenditions, 50), 1),
      fmt(percentile(allRenditions, 95), 1),
      '—',
    ],
    peerRow('upload (POST /files, not fsynced)', directusBig),
    ...(directus
      ? [peerRow("200-pixel thumbnail served (GET /assets/{id}), after the upload's answer", directusFirst)]
      : []),
  ],
);

// 2. Small uploads, one after another: alone (non-image bytes) and while renditions run.
const alone: number[] = [];
for (let i = 0; i < SMALL_N; i++)
  alone.push((await upload(randomBytes(small.length), `blob-${i}.bin`, 'application/octet-stream')).ms);
const loadBefore = load();
const earlier = [];
for (let i = 0; i < 6; i++) earlier.push(await upload(variant(big), `earlier-${i}.jpg`, 'image/jpeg'));
const busy: number[] = [];
const directusBusy: number[] = [];
// Alternated one for one: whatever else the machine does falls on both alike.
for (let i = 0; i < SMALL_N; i++) {
  busy.push((await upload(variant(small), `small-${i}.jpg`, 'image/jpeg')).ms);
  if (directus) directusBusy.push(await directusUpload(variant(small), `small-${i}.jpg`, 'image/jpeg'));
}
const stillRendering = await fetch(`${url}/v1/asset/${earlier.at(-1)!.id}/rendition/mezzaninePreview`, {
  headers: auth,
});
await stillRendering.arrayBuffer();
const ratio = percentile(busy, 99) / percentile(busy, 50);
printTable(
  `${SMALL_N} uploads of ${(small.length / 1048576).toFixed(2)} MB one after another (POST /v1/asset + PUT, fsynced); load average ${loadBefore} before, ${load()} after`,
  ['metric', 'p50 ms', 'p99 ms', 'p99 / p50', 'target'],
  [
    [
      'non-image bytes, no renditions running',
      fmt(percentile(alone, 50), 1),
      fmt(percentile(alone, 99), 1),
      fmt(percentile(alone, 99) / percentile(alone, 50)),
      '—',
    ],
    [
      `1 MB JPEGs right after six 12 MP JPEGs (renditions running${stillRendering.status === 404 ? ', the last 12 MP one still rendering at the end' : ''})`,
      fmt(percentile(busy, 50), 1),
      fmt(percentile(busy, 99), 1),
      fmt(ratio),
      '≤ 3.00',
    ],
    directus
      ? [
          `${DIRECTUS}: the same JPEGs, alternated with the row above`,
          fmt(percentile(directusBusy, 50), 1),
          fmt(percentile(directusBusy, 99), 1),
          fmt(percentile(directusBusy, 99) / percentile(directusBusy, 50)),
          '—',
        ]
      : [`${DIRECTUS}: ${absent}`, '—', '—', '—', '—'],
  ],
  {
    'p99 / p50':
      '99th percentile divided by the median of the same row: how far the slow requests fall behind (target ≤ 3 while renditions run)',
  },
);

// 3. 4 at a time: Tessera against the raw disk floor (write, fsync, rename).
const dir = mkdtempSync(join(tmpdir(), 'tessera-thumb-raw-'));
const rawFile = async (i: number) => {
  const bytes = variant(small);
  const path = join(dir, `f-${i}`);
  const handle = await open(`${path}.tmp`, 'wx');
  await handle.write(bytes);
  await handle.sync();
  await handle.close();
  await rename(`${path}.tmp`, path);
};
// Rounds alternated (Tessera, Directus, Tessera, Directus), each CONCURRENT_N / ROUNDS uploads.
const ROUNDS = 2;
async function fourAtATime(count: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < count) await fn(next++);
    }),
  );
  return performance.now() - start;
}
const rawMs = await fourAtATime(CONCURRENT_N, rawFile);
let oursMs = 0;
let directusMs = 0;
for (let round = 0; round < ROUNDS; round++) {
  const n = CONCURRENT_N / ROUNDS;
  oursMs += await fourAtATime(n, (i) => upload(variant(small), `four-${round}-${i}.jpg`, 'image/jpeg'));
  if (directus)
    directusMs += await fourAtATime(n, (i) => directusUpload(variant(small), `four-${round}-${i}.jpg`, 'image/jpeg'));
}
rmSync(dir, { recursive: true, force: true });
const mb = (CONCURRENT_N * small.length) / 1048576;
printTable(
  `${CONCURRENT_N} uploads of ${(small.length / 1048576).toFixed(2)} MB JPEGs, 4 at a time${directus ? `, in ${ROUNDS} rounds each alternated with Directus'` : ''}; load average ${load()}`,
  ['path', 'MB/s', 'vs raw', 'vs Directus', 'target'],
  [
    ['raw disk: write + fsync + rename, 4 at a time (this process)', fmt(mb / (rawMs / 1000), 1), '1.00', '—', '—'],
    [
      'Tessera POST /v1/asset + PUT (fsynced before the answer)',
      fmt(mb / (oursMs / 1000), 1),
      fmt(rawMs / oursMs),
      directus ? fmt(directusMs / oursMs) : '—',
      '≥ 1.00 vs Directus',
    ],
    directus
      ? [`${DIRECTUS}: POST /files`, fmt(mb / (directusMs / 1000), 1), fmt(rawMs / directusMs), '1.00', '—']
      : [`${DIRECTUS}: ${absent}`, '—', '—', '—', '—'],
  ],
  {
    'vs raw': "the raw disk's time divided by this row's for the same bytes (1: as fast as the disk)",
    'vs Directus': "Directus' time divided by this row's for the same uploads (≥ 1: at least as fast)",
  },
);
await directus?.stop();
server.child.stdin!.end();
await new Promise((r) => server.child.once('exit', r));
process.exit(0);
