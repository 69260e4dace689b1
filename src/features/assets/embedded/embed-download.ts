import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ExifTool, type WriteTags } from 'exiftool-vendored';
import { fromJson } from '../../../core/db/json.ts';
import { AppError, invalidField, notFound } from '../../../core/http/errors.ts';
import type { Deps } from '../../../deps.ts';
import {
  EMBEDDED_FIELDS,
  writableEmbeddedField,
  type CompiledTemplate,
  type EmbeddedField,
} from '../../metadata/index.ts';
import type { AssetWithOrg } from '../assets.repo.ts';
import type { Servable } from '../download/serve.ts';
import { templateOf, type LegacyItem } from '../metadata-seam/metadata-seam.ts';
import { renditionPrefix } from '../renditions/job/renditions.ts';

/** Types ExifTool writes IPTC and XMP into without touching the image data. */
const WRITABLE = /^image\/(jpeg|pjpeg|tiff|png)$/;

export function checkEmbeddable(asset: { content_type: string | null }, field = 'query.embed'): void {
  if (!WRITABLE.test(asset.content_type ?? ''))
    throw invalidField(
      field,
      `metadata can be written into JPEG, TIFF and PNG files, not ${asset.content_type ?? 'this file'}`,
    );
}

/**
 * The asset's current metadata as embedded tags: every attribute with a value writes it to each of
 * its writable embedded fields (lists to list fields, dates as EXIF dates).
 */
export function tagsFor(t: CompiledTemplate, doc: readonly LegacyItem[]): Record<string, string | string[]> {
  const tags: Record<string, string | string[]> = {};
  const values = new Map(doc.map((i) => [i.metadataDefinitionId, i.metadataDefinitionValue]));
  for (const def of t.attributes) {
    const value = values.get(def.id);
    if (
      !def.embeddedFields?.length ||
      value === undefined ||
      (typeof value !== 'string' && !(Array.isArray(value) && value.every((v) => typeof v === 'string')))
    )
      continue;
    const list = [value].flat() as string[];
    for (const name of def.embeddedFields as EmbeddedField[]) {
      if (!writableEmbeddedField(name)) continue;
      const kind = EMBEDDED_FIELDS[name].kind;
      if (kind === 'list') tags[name] = list;
      else if (kind === 'date')
        tags[name] =
          def.type === 'date'
            ? `${list[0]!.replace(/-/g, ':')}${name.startsWith('EXIF') ? ' 00:00:00' : ''}`
            : list[0]!;
      else tags[name] = list.join(', ');
    }
  }
  return tags;
}

/**
 * GET /v1/asset/{id}/content?embed=true: the original with the current metadata written into it
 * by ExifTool (IPTC and XMP; JPEG, TIFF, PNG), the image data untouched. The stored original never
 * changes: the written copy is kept beside the renditions under the hash of what was written, so
 * the next download of the same metadata is served from the store (and purged with the asset).
 */
export async function embeddedServable(deps: Deps, asset: AssetWithOrg): Promise<Servable> {
  if (!asset.blob_key || !asset.sha256 || asset.size === null) throw notFound('Content');
  checkEmbeddable(asset);
  const template = await templateOf(deps.db, asset.org_id, asset.metadata_template_id);
  const tags = template ? tagsFor(template, fromJson<LegacyItem[]>(asset.metadata, [])) : {};
  const digest = createHash('sha256').update(JSON.stringify(tags)).digest('hex').slice(0, 32);
  const ext = /tiff/.test(asset.content_type!) ? 'tif' : /png/.test(asset.content_type!) ? 'png' : 'jpg';
  const key = `${renditionPrefix(asset.org_id, asset.sha256)}/embedded/${digest}.${ext}`;
  let head = await deps.blobs.head(key);
  if (!head) {
    await deps.blobs.put(key, await writeTags(deps, asset.blob_key, tags, ext), { contentType: asset.content_type! });
    head = await deps.blobs.head(key);
    if (!head) throw new AppError('internal', 'the written copy vanished from storage');
  }
  return {
    key,
    size: head.size,
    contentType: asset.content_type!,
    etag: `"${asset.sha256.slice(0, 32)}-${digest.slice(0, 16)}"`,
    lastModified: asset.updated_at,
    cacheControl: 'private, max-age=3600',
    downloadName: asset.filename,
  };
}

async function writeTags(
  deps: Deps,
  blobKey: string,
  tags: Record<string, string | string[]>,
  ext: string,
): Promise<Buffer> {
  const source = await deps.blobs.get(blobKey);
  if (!source) throw notFound('Content');
  const dir = await deps.temp.mkdtemp('embed-');
  const exiftool = new ExifTool({ maxProcs: 1, taskTimeoutMillis: 30_000 });
  try {
    const file = join(dir, `copy.${ext}`);
    await pipeline(source, createWriteStream(file));
    if (Object.keys(tags).length > 0) {
      try {
        await exiftool.write(file, tags as WriteTags, {
          writeArgs: ['-overwrite_original', '-charset', 'iptc=UTF8', '-codedcharacterset=utf8'],
        });
      } catch (error) {
        throw new AppError(
          'unprocessable',
          `the metadata could not be written into the file: ${(error as Error).message.split('\n')[0]}`,
        );
      }
    }
    return await readFile(file);
  } finally {
    await exiftool.end();
    await rm(dir, { recursive: true, force: true });
  }
}
