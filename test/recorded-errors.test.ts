// Errors stored in records a caller can read carry no server paths (issue 23, defect 12: an
// asset's renditionError named the server's temporary file).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { tmpdir } from 'node:os';
import sharp from 'sharp';
import { forEachEngine, json } from './helpers/context.ts';
import { createTestOrg } from './helpers/factories.ts';
import { recordedError, stripPaths } from '../src/core/recorded-error.ts';
import { assetWorker, uploadAsset } from './helpers/assets.ts';

it('recordedError: absolute paths become <file>, the rest of the message stays', () => {
  assert.equal(
    stripPaths(`Input file ${tmpdir()}/tessera-rend-Ab12/source is missing`),
    'Input file <file> is missing',
  );
  assert.equal(
    stripPaths("ENOENT: no such file or directory, open '/var/lib/tessera/blobs/ab/cd'"),
    "ENOENT: no such file or directory, open '<file>'",
  );
  assert.equal(stripPaths('VipsJpeg: Premature end of input file'), 'VipsJpeg: Premature end of input file');
  assert.equal(stripPaths('bad at file:///srv/x/y.js:1'), 'bad at <file>');
  assert.equal(stripPaths('C:\\Users\\svc\\AppData\\Local\\Temp\\x failed'), '<file> failed');
  assert.equal(
    stripPaths('width/height must be 1/2 of a/b'),
    'width/height must be 1/2 of a/b',
    'a slash inside words is no path',
  );
  assert.equal(recordedError(new Error(`x ${tmpdir()}/a`)), 'x <file>');
});

forEachEngine('errors recorded on assets name no server path (issue 23, defect 12)', (ctx) => {
  it('a corrupt image: renditionError says what failed, without the temporary path', async () => {
    const org = await createTestOrg(ctx());
    // A truncated AVIF: libheif names the file it read in every line of its error.
    const avif = await sharp({
      create: {
        width: 600,
        height: 400,
        channels: 3,
        background: '#123456',
        noise: { type: 'gaussian', mean: 128, sigma: 50 },
      },
    })
      .avif()
      .toBuffer();
    const { objectId } = await uploadAsset(ctx(), org, avif.subarray(0, Math.floor(avif.length / 2)), 'broken.avif');
    const worker = assetWorker(ctx());
    try {
      await worker.drain();
    } finally {
      await worker.stop();
    }
    const asset = json(await ctx().inject({ method: 'GET', url: `/v1/asset/${objectId}`, headers: org.admin.headers }));
    const error = asset.technicalMetadata?.renditionError as string | undefined;
    assert.ok(error, `a rendition error is recorded: ${JSON.stringify(asset.technicalMetadata)}`);
    assert.doesNotMatch(error, /tessera-rend|\/tmp\/|\/source\b/, error);
    assert.doesNotMatch(
      JSON.stringify(asset),
      new RegExp(tmpdir().replace(/[/\\]/g, '.')),
      'no temporary path anywhere in the record',
    );
    const job = await ctx()
      .deps.db.selectFrom('jobs')
      .select('last_error')
      .where('last_error', 'is not', null)
      .execute();
    for (const j of job) assert.doesNotMatch(j.last_error!, /tessera-rend/, j.last_error!);
  });
});
