import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import sharp from 'sharp';
import { forEachEngine } from '../../../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../../../test/helpers/factories.ts';
import type { Worker } from '../../../../../core/jobs/worker.ts';
import { assetWorker, pathOf, uploadAsset } from '../../../../../../test/helpers/assets.ts';
import { makeDocx, makePdf } from '../media.fixtures.ts';

// LibreOffice is not installed here: a stand-in `soffice` on PATH does what the real one does for
// `--convert-to pdf --outdir DIR FILE` — writes DIR/<name>.pdf — with a real PDF this test made
// (landscape, so the preview's shape shows it came from that PDF). A document over 8 KB makes it
// fail the way LibreOffice does (a message, exit code 1).
const bin = mkdtempSync(join(tmpdir(), 'tessera-soffice-stub-'));
const made = join(bin, 'made.pdf');
writeFileSync(made, makePdf(['Rendered by the stand-in LibreOffice'], {}, [842, 595]));
writeFileSync(
  join(bin, 'soffice'),
  `#!/bin/sh
out=""; src=""
while [ $# -gt 0 ]; do
  case "$1" in
    --outdir) out="$2"; shift 2 ;;
    --*|-env:*) shift ;;
    *) src="$1"; shift ;;
  esac
done
if [ "$(wc -c < "$src")" -gt 8000 ]; then echo "Error: source file could not be loaded" >&2; exit 1; fi
name=$(basename "$src"); name="\${name%.*}"
cp "${made}" "$out/$name.pdf"
`,
);
chmodSync(join(bin, 'soffice'), 0o755);

forEachEngine(
  'assets: office page previews through LibreOffice (a stand-in soffice on PATH)',
  (ctx) => {
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

    it('renders page 1 of the PDF LibreOffice wrote as the four image renditions, with the text still from the document XML', async () => {
      assert.equal(ctx().deps.config.media.sofficePath, join(bin, 'soffice'), 'found on PATH');
      const created = await uploadAsset(ctx(), org, makeDocx(['Quarterly figures in a memo']), 'memo.docx');
      await worker.drain();
      const asset = await get(created.objectId);
      assert.equal(asset.renditionsState, 'ready', JSON.stringify(asset.technicalMetadata));
      const doc = asset.technicalMetadata.document_metadata;
      assert.equal(doc.previewBy, 'LibreOffice (to PDF), then MuPDF');
      assert.equal(doc.renderedPageCount, 1);
      assert.equal(asset.technicalMetadata.previewNote, undefined);
      const thumb = await ctx().inject({
        method: 'GET',
        url: pathOf(asset.renditions.imageThumb),
        headers: org.admin.headers,
      });
      const meta = await sharp(thumb.rawPayload).metadata();
      assert.equal(meta.width, 200, 'landscape: the width is the long side');
      assert.equal(meta.height, Math.round((200 * 595) / 842));
      assert.ok(asset.placeholder, 'a picture of its own: a placeholder too');
    });

    it('a document LibreOffice cannot convert fails its job with LibreOffice’s reason in the record', async () => {
      const created = await uploadAsset(ctx(), org, makeDocx([randomBytes(12_000).toString('base64')]), 'broken.docx');
      await worker.drain();
      const asset = await get(created.objectId);
      assert.equal(asset.renditionsState, 'failed');
      assert.match(
        asset.technicalMetadata.renditionError,
        /LibreOffice failed: Error: source file could not be loaded/,
      );
    });
  },
  { env: { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}` } },
);
