import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { JobPayload } from '../../../core/jobs/catalog.ts';
import { fromJson } from '../../../core/db/json.ts';
import type { Deps } from '../../../deps.ts';
import { applyChanges } from '../assets.service.ts';
import { securityOf } from '../assets.repo.ts';
import { readXmpByExifTool, xmpNeedsExifTool } from './xmp-by-exiftool.ts';
import { embeddedPatch, templateOf, withEmbedded, type LegacyItem } from '../metadata-seam/metadata-seam.ts';
import { EMBEDDED_JOB, mayHoldEmbedded, readEmbedded } from './read-embedded.ts';

export { EMBEDDED_JOB };

/**
 * After content arrives (an upload or a new version): the fields embedded in the file become the
 * values of the attributes that declare them, through the same write as a metadata edit
 * (applyChanges: one transaction, `asset.metadata.updated`, and the search index follows the row's
 * updated_at), so they are searchable and facetable as soon as the job commits. Values already set
 * stay unless the upload asked to overwrite them.
 */
export async function runEmbeddedMetadata(deps: Deps, job: JobPayload<typeof EMBEDDED_JOB>): Promise<void> {
  const asset = await deps.db.selectFrom('assets').selectAll().where('id', '=', job.assetId).executeTakeFirst();
  if (
    !asset ||
    asset.content_state !== 'available' ||
    !asset.blob_key ||
    asset.deleted_at !== null ||
    !mayHoldEmbedded(asset.content_type)
  )
    return;
  const template = await templateOf(deps.db, asset.org_id, asset.metadata_template_id);
  if (!template || !template.attributes.some((a) => a.embeddedFields?.length)) return;
  const stream = await deps.blobs.get(asset.blob_key);
  if (!stream) return;
  const dir = await deps.temp.mkdtemp('embedded-');
  try {
    const file = join(dir, 'source');
    await pipeline(stream, createWriteStream(file));
    let values = await readEmbedded(file);
    // HEIC/HEIF: exifr reads their EXIF but not their XMP item; ExifTool reads it (keywords, rights…).
    if (xmpNeedsExifTool(asset.content_type) && !Object.keys(values).some((k) => k.startsWith('XMP-')))
      values = { ...(await readXmpByExifTool(file)), ...values };
    if (Object.keys(values).length === 0) return;
    // Read again: the user may have edited the asset while the file was read.
    const fresh = await deps.db.selectFrom('assets').selectAll().where('id', '=', asset.id).executeTakeFirst();
    if (!fresh || fresh.sha256 !== asset.sha256 || fresh.metadata_template_id !== asset.metadata_template_id) return;
    const current = fromJson<LegacyItem[]>(fresh.metadata, []);
    const patch = embeddedPatch(template, current, values, job.overwrite === true);
    if (patch.length === 0) return;
    const prepared = withEmbedded(template, current, patch);
    const security = (await securityOf(deps.db, fresh.org_id, [fresh.id])).get(fresh.id);
    await applyChanges(deps, fresh.updated_by, fresh, security?.templateIds ?? [], {
      doc: prepared.doc,
      denormalized: prepared.denormalized,
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
