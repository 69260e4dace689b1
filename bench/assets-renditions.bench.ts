// Thumbnail + preview of a 12-megapixel JPEG: Tessera's pipeline (one decode, every rendition
// derived from it) against calling sharp directly for each rendition, in the same run.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { inspect, renderImage, RENDITION_SPECS } from '../src/features/assets/renditions/job/renditions.ts';
import { fmt, percentile, printTable } from './lib.ts';

sharp.cache(false);
const RUNS = Number(process.env.ASSETS_BENCH_RUNS ?? 15);
const dir = mkdtempSync(join(tmpdir(), 'tessera-rend-bench-'));
const file = join(dir, 'source.jpg');
writeFileSync(
  file,
  await sharp({
    create: {
      width: 4000,
      height: 3000,
      channels: 3,
      background: { r: 128, g: 128, b: 128 },
      noise: { type: 'gaussian', mean: 128, sigma: 40 },
    },
  })
    .jpeg({ quality: 90 })
    .toBuffer(),
);

const direct = async (sizes: number[]) => {
  await Promise.all(
    sizes.map((size) =>
      sharp(file)
        .autoOrient()
        .resize(size, size, { fit: 'inside', withoutEnlargement: true })
        .jpeg({ quality: 80 })
        .toBuffer(),
    ),
  );
};
const ours = async (names: string[]) => {
  const specs = RENDITION_SPECS.filter((s) => names.includes(s.name));
  const info = await inspect(file, 268_402_689);
  await renderImage(file, specs, info, 268_402_689);
};
async function time(fn: () => Promise<void>): Promise<number[]> {
  await fn();
  const out: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}
const rows: (string | number)[][] = [];
for (const [label, names, sizes] of [
  ['thumbnail + preview', ['imageThumb', 'imagePreview'], [200, 700]],
  ['all four renditions', RENDITION_SPECS.map((s) => s.name), RENDITION_SPECS.map((s) => s.size)],
] as const) {
  // Interleave to share the machine's noise fairly.
  const a = await time(() => direct([...sizes]));
  const b = await time(() => ours([...names]));
  rows.push([`${label}: sharp called directly`, fmt(percentile(a, 50), 1), fmt(percentile(a, 95), 1), '1.00']);
  rows.push([
    `${label}: Tessera pipeline`,
    fmt(percentile(b, 50), 1),
    fmt(percentile(b, 95), 1),
    fmt(percentile(b, 50) / percentile(a, 50)),
  ]);
}
printTable(
  `Renditions of a 12 MP JPEG (4000×3000), ${RUNS} runs, sharp ${sharp.versions.sharp}, vips threads ${sharp.concurrency()}`,
  ['path', 'p50 ms', 'p95 ms', 'ratio (p50)'],
  rows,
);
rmSync(dir, { recursive: true, force: true });
