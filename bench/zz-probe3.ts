import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../src/config.ts';
import { createDeps } from '../src/deps.ts';
import { migrateToLatest } from '../src/core/db/migrate.ts';
import { verifyApiKey } from '../src/features/api-keys/index.ts';
import { createApiKey } from '../src/features/api-keys/api-keys.service.ts';
import { createOrganization, loadUserPrincipal } from '../src/features/identity/index.ts';
import { measure, percentile } from './lib.ts';
const dataDir = mkdtempSync(join(tmpdir(), 'probe-'));
const deps = createDeps(parseConfig({ TESSERA_DATA_DIR: dataDir, TESSERA_LOG_LEVEL: 'silent', TESSERA_SECRET_KEY: 'x'.repeat(40) }));
await migrateToLatest(deps.db);
const org = await deps.db.transaction().execute((trx) => createOrganization(trx, Date.now(), { name: 'B', admin: { username: 'b', email: 'b@x', passwordHash: null } }));
const admin = (await loadUserPrincipal(deps.db, org.adminUserId))!;
const { key } = await createApiKey(deps, admin, { name: 'b', roleId: org.roles.editor }, '127.0.0.1');
const show = async (name: string, fn: () => Promise<unknown>) => { const t = await measure(20000, fn, { warmup: 2000 }); console.log(name.padEnd(30), percentile(t, 50).toFixed(4), percentile(t, 90).toFixed(4), percentile(t, 99).toFixed(4)); };
for (let i = 0; i < 2; i++) {
  await show('verify', () => verifyApiKey(deps, key, '127.0.0.1'));
  await show('loadUserPrincipal', () => loadUserPrincipal(deps.db, org.adminUserId));
}
