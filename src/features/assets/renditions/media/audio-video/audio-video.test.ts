import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import sharp from 'sharp';
import { forEachEngine } from '../../../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../../../test/helpers/factories.ts';
import type { Worker } from '../../../../../core/jobs/worker.ts';
import { parseConfig } from '../../../../../config.ts';
import { assetWorker, pathOf, uploadAsset } from '../../../../../../test/helpers/assets.ts';
import { audioClip, videoClip } from '../media.fixtures.ts';
import { ConversionAborted, ffmpegPath, runTool } from '../run-tool.ts';
import { RenditionError } from '../../rendition-error.ts';

forEachEngine('assets: video and audio through ffmpeg', (ctx) => {
  let org: TestOrg;
  let worker: Worker;
  before(async () => {
    org = await createTestOrg(ctx());
    worker = assetWorker(ctx());
  });
  after(async () => worker.stop());
  const get = (id: string) =>
    ctx()
      .inject({ method: 'GET', url: `/v1/asset/${id}`, headers: org.admin.headers })
      .then((r) => r.json());
  const fetch = (url: string, headers: Record<string, string> = {}) =>
    ctx().inject({ method: 'GET', url: pathOf(url), headers: { ...org.admin.headers, ...headers } });

  it('makes a poster (the image renditions), an H.264/AAC proxy and an animated preview, records duration, codecs, frame rate, bitrate and size, and streams the proxy with Range', async () => {
    const created = await uploadAsset(ctx(), org, await videoClip(), 'clip.mp4');
    await worker.drain();
    const asset = await get(created.objectId);
    assert.equal(asset.renditionsState, 'ready', JSON.stringify(asset.technicalMetadata));
    const v = asset.technicalMetadata.video_metadata;
    assert.equal(v.videoCodec, 'h264');
    assert.equal(v.audioCodec, 'aac');
    assert.equal(v.width, 320);
    assert.equal(v.height, 240);
    assert.equal(v.frameRate, 25);
    assert.ok(Math.abs(v.durationSeconds - 2) < 0.2, String(v.durationSeconds));
    assert.ok(v.bitRate > 0);
    assert.deepEqual([asset.renditions.width, asset.renditions.height], [320, 240]);
    const thumb = await fetch(asset.renditions.imageThumb);
    assert.equal(thumb.headers['content-type'], 'image/jpeg');
    assert.deepEqual(
      await sharp(thumb.rawPayload)
        .metadata()
        .then((m) => [m.width, m.height]),
      [200, 150],
    );
    // The proxy: an MP4 the shipped ffprobe reads as H.264 + AAC; served with Range for playback.
    const proxy = await fetch(asset.renditions.videoProxy);
    assert.equal(proxy.statusCode, 200);
    assert.equal(proxy.headers['content-type'], 'video/mp4');
    assert.equal(proxy.headers['accept-ranges'], 'bytes');
    assert.equal(proxy.rawPayload.subarray(4, 8).toString('latin1'), 'ftyp');
    const part = await fetch(asset.renditions.videoProxy, { range: 'bytes=100-199' });
    assert.equal(part.statusCode, 206);
    assert.ok(part.rawPayload.equals(proxy.rawPayload.subarray(100, 200)));
    const preview = await fetch(asset.renditions.videoPreview);
    assert.equal(preview.headers['content-type'], 'image/webp');
    const pm = await sharp(preview.rawPayload, { animated: true }).metadata();
    assert.ok((pm.pages ?? 1) > 1, 'the preview is animated');
    assert.equal(pm.width, 320);
  });

  it('makes a waveform (the image renditions) and an AAC proxy for audio, with duration, codec, sample rate and channels', async () => {
    const created = await uploadAsset(ctx(), org, await audioClip(), 'tone.wav');
    await worker.drain();
    const asset = await get(created.objectId);
    assert.equal(asset.renditionsState, 'ready', JSON.stringify(asset.technicalMetadata));
    const a = asset.technicalMetadata.audio_metadata;
    assert.equal(a.audioCodec, 'pcm_s16le');
    assert.equal(a.sampleRate, 44100);
    assert.equal(a.audioChannels, 1);
    assert.ok(Math.abs(a.durationSeconds - 2) < 0.1);
    const wave = await fetch(asset.renditions.imagePreview);
    assert.equal(wave.statusCode, 200);
    assert.equal((await sharp(wave.rawPayload).metadata()).width, 700);
    const proxy = await fetch(asset.renditions.audioProxy);
    assert.equal(proxy.headers['content-type'], 'audio/mp4');
    assert.equal(proxy.rawPayload.subarray(4, 8).toString('latin1'), 'ftyp');
  });

  it('fails a corrupt video cleanly with the reason recorded', async () => {
    const clip = await videoClip();
    const corrupt = Buffer.concat([clip.subarray(0, 64), Buffer.alloc(4000, 0x37)]);
    const created = await uploadAsset(ctx(), org, corrupt, 'broken.mp4');
    await worker.drain();
    const asset = await get(created.objectId);
    assert.equal(asset.renditionsState, 'failed');
    assert.match(asset.technicalMetadata.renditionError, /ffprobe|ffmpeg|stream/);
    const job = await ctx()
      .deps.db.selectFrom('jobs')
      .select(['status'])
      .where('payload', 'like', `%${created.objectId}%`)
      .where('type', '=', 'assets.renditions')
      .executeTakeFirst();
    assert.equal(job?.status, 'dead');
  });

  it('kills ffmpeg on timeout and on cancel (the signal), and refuses to start when already cancelled', async () => {
    const media = { ...parseConfig({}).media, timeoutSeconds: 1 };
    const endless = [
      '-nostdin',
      '-v',
      'error',
      '-re',
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=64x64:rate=5',
      '-f',
      'null',
      '-',
    ];
    await assert.rejects(
      runTool(media, ffmpegPath(media), endless),
      (e: Error) => e instanceof RenditionError && /TESSERA_MEDIA_TIMEOUT_SECONDS/.test(e.message),
    );
    const controller = new AbortController();
    const run = runTool({ ...media, timeoutSeconds: 60 }, ffmpegPath(media), endless, controller.signal);
    setTimeout(() => controller.abort(new Error('asset purged')), 200);
    await assert.rejects(run, (e: Error) => e instanceof ConversionAborted && /asset purged/.test(e.message));
    await assert.rejects(runTool(media, ffmpegPath(media), endless, controller.signal), ConversionAborted);
  });
});
