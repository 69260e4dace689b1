import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { RenditionError } from '../rendition-error.ts';
import { renderImage, type RenditionSpec } from './render-image.ts';
import { visualSummary } from '../visual-summary/visual-summary.ts';
import { renderInRenderProcess, renderNice, renderProcessPid, summaryInRenderProcess } from './render-process.ts';

// Production's priority (the test runner sets TESSERA_RENDER_NICE=0 for the other files; this one checks 10).
process.env.TESSERA_RENDER_NICE = '10';

const SPECS: RenditionSpec[] = [
  { name: 'imageThumb', size: 200 },
  { name: 'imagePreview', size: 700 },
  { name: 'mezzaninePreview', size: 3000 },
];

const noise = (channels: 3 | 4) =>
  sharp({
    create: {
      width: 1600,
      height: 900,
      channels,
      background: { r: 90, g: 140, b: 200, alpha: 0.6 },
      noise: { type: 'gaussian', mean: 120, sigma: 30 },
    },
  });

describe('the render process (renditions at a lower priority, off the server process)', () => {
  it('draws byte for byte what renderImage draws in-process: JPEG, PNG with alpha, raw pixels', async () => {
    const jpeg = await noise(3).jpeg({ quality: 90 }).toBuffer();
    const png = await noise(4).png().toBuffer();
    const raw = await noise(3).raw().toBuffer({ resolveWithObject: true });
    const pixels = { data: raw.data, width: raw.info.width, height: raw.info.height, channels: 3 as const };
    for (const [input, hasAlpha] of [
      [jpeg, false],
      [png, true],
      [pixels, false],
    ] as const) {
      for (const lane of ['first', 'rest'] as const) {
        const there = await renderInRenderProcess(lane, input, SPECS, { hasAlpha }, 100_000_000, 30);
        const here = await renderImage(input, SPECS, { hasAlpha }, 100_000_000, 30);
        assert.deepEqual(
          there.map((r) => [r.name, r.width, r.height, r.contentType]),
          here.map((r) => [r.name, r.width, r.height, r.contentType]),
        );
        for (const [i, r] of there.entries()) {
          assert.ok(Buffer.isBuffer(r.data));
          assert.ok(r.data.equals(here[i]!.data), `${r.name} (${lane}) is the same bytes`);
        }
      }
    }
  });

  it('reports an unreadable image as a RenditionError, and keeps working after it', async () => {
    await assert.rejects(
      renderInRenderProcess('rest', Buffer.from('not an image at all'), SPECS, { hasAlpha: false }, 1_000_000, 30),
      (error: unknown) => error instanceof RenditionError && /could not be decoded/.test(error.message),
    );
    const [thumb] = await renderInRenderProcess(
      'first',
      await noise(3).jpeg().toBuffer(),
      SPECS.slice(0, 1),
      { hasAlpha: false },
      100_000_000,
    );
    assert.equal(thumb!.width, 200);
  });

  it("computes a thumbnail's placeholder and hash in the render process, as visualSummary does in-process", async () => {
    const [thumb] = await renderInRenderProcess(
      'first',
      await noise(4).png().toBuffer(),
      SPECS.slice(0, 1),
      { hasAlpha: true },
      100_000_000,
    );
    assert.deepEqual(await summaryInRenderProcess('first', thumb!.data), await visualSummary(thumb!.data));
    await assert.rejects(summaryInRenderProcess('rest', Buffer.from('not a picture')));
    // The lane keeps working after a failure.
    assert.deepEqual(await summaryInRenderProcess('rest', thumb!.data), await visualSummary(thumb!.data));
  });

  it('reads TESSERA_RENDER_NICE (0–19), 10 when unset or malformed', () => {
    assert.equal(renderNice(undefined), 10);
    assert.equal(renderNice('0'), 0);
    assert.equal(renderNice('19'), 19);
    for (const bad of ['20', '-1', 'x', '', '3.5']) assert.equal(renderNice(bad), 10, bad);
  });

  it('runs every one of its threads (libuv and libvips included) at nice 10 on Linux', {
    skip: process.platform !== 'linux',
  }, async () => {
    await renderInRenderProcess('rest', await noise(3).jpeg().toBuffer(), SPECS, { hasAlpha: false }, 100_000_000);
    const pid = renderProcessPid('rest');
    assert.ok(pid, 'the render process runs');
    const threads = readdirSync(`/proc/${pid}/task`).map((tid) => {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const nice = Number(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);
      return { name, nice };
    });
    assert.ok(
      threads.some((t) => /libvips|vips/.test(t.name)),
      JSON.stringify(threads),
    );
    for (const t of threads) assert.ok(t.nice >= 10, `${t.name} runs at nice ${t.nice}`);
  });

  it("draws thumbnails in a process of their own at the server's priority, apart from the larger renditions", {
    skip: process.platform !== 'linux',
  }, async () => {
    const jpeg = await noise(3).jpeg().toBuffer();
    await renderInRenderProcess('first', jpeg, SPECS.slice(0, 1), { hasAlpha: false }, 100_000_000);
    await renderInRenderProcess('rest', jpeg, SPECS.slice(1), { hasAlpha: false }, 100_000_000);
    const first = renderProcessPid('first');
    const rest = renderProcessPid('rest');
    assert.ok(first && rest, 'both lanes run');
    assert.notEqual(first, rest, 'one process per lane');
    const nices = readdirSync(`/proc/${first}/task`).map((tid) =>
      Number(readFileSync(`/proc/${first}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]),
    );
    assert.ok(
      nices.every((n) => n === getPriority()),
      `thumbnail threads at ${nices.join(', ')}`,
    );
  });
});
