// Upload throughput of one large file through PUT /v1/uploads/{id} (stream → SHA-256 → fsync →
// rename) against writing the same bytes straight to disk with fsync, in the same run.
// ASSETS_BENCH_UPLOAD_MB sets the size (default 1024).
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createAsset } from '../src/features/assets/index.ts';
import { benchOrg } from './assets-fixture.ts';
import { fmt, printTable, startBenchServer } from './lib.ts';

const MB = Number(process.env.ASSETS_BENCH_UPLOAD_MB ?? 1024);
const CHUNK = Buffer.alloc(1 << 20, 7);
const source = () => Readable.from((function* () { for (let i = 0; i < MB; i++) yield CHUNK; })());

let peakRss = 0;
const sampler = setInterval(() => { peakRss = Math.max(peakRss, process.memoryUsage().rss); }, 20);

const dir = mkdtempSync(join(tmpdir(), 'tessera-raw-'));
const t0 = performance.now();
await pipeline(source(), createWriteStream(join(dir, 'raw.bin'), { flush: true }));
const rawMs = performance.now() - t0;
rmSync(dir, { recursive: true, force: true });

const server = await startBenchServer({ TESSERA_UPLOAD_PART_SIZE: String(5 * 1024 * 1024 * 1024) });
const { principal, templateId, org } = await benchOrg(server);
const created = await createAsset(server.deps, principal, { filename: 'big.bin', metadataTemplateId: templateId, securityTemplateIds: [org.defaultTemplateId], filesize: MB << 20 }, 'legacy');
const url = (created.upload as { url: string }).url.replace(server.deps.config.publicUrl, server.url);
const rssBefore = process.memoryUsage().rss;
peakRss = rssBefore;
const t1 = performance.now();
const res = await fetch(url, { method: 'PUT', body: Readable.toWeb(source()) as ReadableStream, duplex: 'half', headers: { 'content-type': 'application/octet-stream' } } as RequestInit);
const ourMs = performance.now() - t1;
if (res.status !== 200) throw new Error(`upload failed: ${res.status} ${await res.text()}`);
clearInterval(sampler);
await server.close();

const raw = MB / (rawMs / 1000);
const ours = MB / (ourMs / 1000);
printTable(`Upload of ${MB} MB (local disk, loopback HTTP)`, ['path', 'MB/s', 'time (s)', 'vs raw'], [
  ['raw disk write (fs stream + fsync)', fmt(raw, 0), fmt(rawMs / 1000), '1.00'],
  ['Tessera PUT /v1/uploads/{id} (SHA-256, fsync, rename)', fmt(ours, 0), fmt(ourMs / 1000), fmt(ours / raw)],
]);
printTable('Memory during the upload', ['measure', 'MB'], [['RSS growth (peak − before)', fmt((peakRss - rssBefore) / 1048576, 1)], ['target', '≤ 64']]);
