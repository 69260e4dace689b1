import type { AssetRow } from './assets.repo.ts';

/**
 * The row of a first version with every column at its starting value: no content, no renditions,
 * not deleted, its own chain (original_file_id = file_id), its created event counted as sent.
 * What differs (content state, filename, type, metadata, object type) is given in `fields`. New
 * assets (newAssetRow), Action objects and the benches' bare inserts build their rows from it.
 */
export function firstVersionRow(
  a: { id: string; fileId: string; orgId: string; templateId: string | null; userId: string; now: number },
  fields: Partial<AssetRow> = {},
): AssetRow {
  return {
    id: a.id,
    org_id: a.orgId,
    file_id: a.fileId,
    original_file_id: a.fileId,
    version_number: 1,
    is_current: 1,
    object_type: 'Asset',
    filename: 'metadata-only',
    content_type: null,
    content_state: 'none',
    size: null,
    sha256: null,
    md5: null,
    blob_key: null,
    federated: 0,
    content_path: null,
    skip_transcode: 0,
    metadata_template_id: a.templateId,
    metadata: '[]',
    metadata_denormalized: '{}',
    technical_metadata: '{}',
    renditions: '{}',
    renditions_state: 'none',
    width: null,
    height: null,
    placeholder: null,
    deleted_at: null,
    deleted_by: null,
    created_event_sent: 1,
    created_by: a.userId,
    updated_by: a.userId,
    created_at: a.now,
    updated_at: a.now,
    ...fields,
  };
}
