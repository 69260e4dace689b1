import { firstVersionRow, type AssetRow } from '../src/features/assets/index.ts';
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
 * benches seed and measure bare inserts: the assets feature's first-version row. `fields` sets
 * content fields (filename, type, size, state) or metadata.
 */
export function benchAssetRow(
  a: { id: string; fileId?: string; orgId: string; templateId: string; userId: string; now: number },
  fields: Partial<AssetRow> = {},
): AssetRow {
  return firstVersionRow({ ...a, fileId: a.fileId ?? a.id }, fields);
}
