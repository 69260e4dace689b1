import type { DbOrTrx } from '../../../core/db/connect.ts';
import type { AssetSecurity } from '../assets.repo.ts';
import { securityOf } from '../assets.repo.ts';

/** An asset version whose stored bytes another feature may hand out (collection share zips). */
export interface ShareSource {
  assetId: string;
  fileId: string;
  filename: string;
  contentType: string | null;
  size: number | null;
  blobKey: string | null;
  metadataTemplateId: string | null;
  deleted: boolean;
  available: boolean;
  updatedAt: number;
  security: AssetSecurity;
}

/** The asset versions with these fileIds (in no particular order) and their security, batched. */
export async function shareSourcesByFileId(
  db: DbOrTrx,
  orgId: string,
  fileIds: readonly string[],
): Promise<ShareSource[]> {
  const out: ShareSource[] = [];
  const unique = [...new Set(fileIds)];
  for (let i = 0; i < unique.length; i += 500) {
    const rows = await db
      .selectFrom('assets')
      .select([
        'id',
        'file_id',
        'filename',
        'content_type',
        'size',
        'blob_key',
        'metadata_template_id',
        'deleted_at',
        'content_state',
        'updated_at',
      ])
      .where('org_id', '=', orgId)
      .where('file_id', 'in', unique.slice(i, i + 500))
      .execute();
    const security = await securityOf(
      db,
      orgId,
      rows.map((r) => r.id),
    );
    for (const r of rows) {
      out.push({
        assetId: r.id,
        fileId: r.file_id,
        filename: r.filename,
        contentType: r.content_type,
        size: r.size === null ? null : Number(r.size),
        blobKey: r.blob_key,
        metadataTemplateId: r.metadata_template_id,
        deleted: r.deleted_at !== null,
        available: r.content_state === 'available' && r.blob_key !== null,
        updatedAt: Number(r.updated_at),
        security: security.get(r.id)!,
      });
    }
  }
  return out;
}
