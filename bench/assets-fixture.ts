import type { AssetRow } from '../src/features/assets/index.ts';
import { hashPassword, createOrganization, loadUserPrincipal } from '../src/features/identity/index.ts';
import { defaultTemplateId, seedOrganizationMetadata } from '../src/features/metadata/index.ts';
import type { BenchServer } from './lib.ts';

/** An organization with an administrator signed in over HTTP (AccessToken header) for asset benches. */
export async function benchOrg(server: BenchServer) {
  const deps = server.deps;
  const password = 'Bench-password-0123';
  const username = `bench-${Math.random().toString(36).slice(2, 8)}`;
  const org = await deps.db.transaction().execute(async (trx) =>
    createOrganization(
      trx,
      deps.clock.now(),
      {
        name: 'Bench',
        admin: { username, email: `${username}@example.test`, passwordHash: await hashPassword(password) },
      },
      seedOrganizationMetadata,
    ),
  );
  const principal = (await loadUserPrincipal(deps.db, org.adminUserId))!;
  const res = await server.app.inject({ method: 'POST', url: '/v1/auth/token', payload: { username, password } });
  const token = (res.json() as { session: { accessToken: string } }).session.accessToken;
  const templateId = (await defaultTemplateId(deps.db, org.orgId))!;
  return { org, principal, headers: { accesstoken: token, 'content-type': 'application/json' }, templateId };
}

/**
 * An asset row written straight to the database (no upload, no renditions, no event), as the
 * benches seed and measure bare inserts: a first version, its own chain. `overrides` sets content
 * fields (filename, type, size, state) or metadata.
 */
export function benchAssetRow(
  a: { id: string; fileId?: string; orgId: string; templateId: string; userId: string; now: number },
  overrides: Partial<AssetRow> = {},
): AssetRow {
  const fileId = a.fileId ?? a.id;
  return {
    id: a.id,
    org_id: a.orgId,
    file_id: fileId,
    original_file_id: fileId,
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
    ...overrides,
  };
}
