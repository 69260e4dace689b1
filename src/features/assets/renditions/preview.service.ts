import type { Deps } from '../../../deps.ts';
import { requireAction } from '../../../core/authz/permissions.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { AppError, invalidField } from '../../../core/http/errors.ts';
import { newId } from '../../../core/ids.ts';
import { loadAssetFor } from '../access.ts';
import type { AssetWithOrg } from '../assets.repo.ts';
import { typeFromFilename } from '../upload/content-types.ts';
import { beginUpload, MAX_UPLOAD_PARTS, planUpload, recordUpload, uploadUrls } from '../upload/uploads.service.ts';

const PREVIEW_TYPES = ['image/gif', 'image/jpeg', 'image/png', 'image/tiff', 'application/pdf'];

/** POST /v1/asset/content/preview: a presigned upload per asset whose bytes replace its preview rendition. */
export async function replacePreview(
  deps: Deps,
  principal: Principal,
  input: { fileIds?: string[]; filename?: string; filesize?: number },
) {
  requireAction(principal, 'asset.replace_preview');
  if (!input.fileIds || input.fileIds.length === 0)
    throw invalidField('body.fileIds', 'The following fields are required, but are missing or incorrect ["fileIds"]');
  if (!input.filename)
    throw invalidField('body.filename', 'The following fields are required, but are missing or incorrect ["filename"]');
  if (input.filesize === undefined)
    throw invalidField('body.filesize', 'The following fields are required, but are missing or incorrect ["filesize"]');
  const type = typeFromFilename(input.filename);
  if (!type || !PREVIEW_TYPES.includes(type))
    throw invalidField('body.filename', 'a preview must be a GIF, JPEG, PNG, TIFF or PDF file');
  // Every asset named gets its own upload URLs: together no more than one upload may have.
  if (planUpload(deps, input.filesize).partCount * input.fileIds.length > MAX_UPLOAD_PARTS) {
    throw invalidField(
      'body.filesize',
      `with ${input.fileIds.length} files, must be at most ${Math.floor(MAX_UPLOAD_PARTS / input.fileIds.length) * deps.config.uploadPartSizeBytes} bytes (${MAX_UPLOAD_PARTS} upload parts in all)`,
    );
  }
  const assets: AssetWithOrg[] = [];
  for (const id of input.fileIds) {
    try {
      const { asset } = await loadAssetFor(deps.db, principal, id, 'asset.replace_preview');
      if (asset.content_state !== 'available' || !asset.blob_key) throw new Error('no content');
      assets.push(asset);
    } catch (error) {
      // Visible but not the caller's to change is a 403; missing or invisible stays "invalid".
      if (error instanceof AppError && error.code === 'forbidden') throw error;
      throw invalidField('body.fileIds', 'Provided fileIds are invalid');
    }
  }
  const uploads = [];
  for (const asset of assets) {
    const now = deps.clock.now();
    const spec = {
      id: newId(now),
      orgId: principal.orgId,
      assetId: asset.id,
      target: 'preview' as const,
      filename: input.filename,
      expectedSize: input.filesize,
      expectedSha256: null,
      contentType: type,
      createdBy: principal.userId,
      plan: planUpload(deps, input.filesize),
    };
    const s3 = await beginUpload(deps, spec);
    const row = await deps.db.transaction().execute((trx) => recordUpload(deps, trx, now, spec, s3));
    uploads.push({ fileId: asset.file_id, objectId: asset.id, ...(await uploadUrls(deps, row)) });
  }
  return {
    status: 'success' as const,
    message: 'Upload the preview to the URL; the preview rendition is replaced when it arrives',
    uploads,
  };
}
