// The search benchmarks' corpus database (search.bench.ts, search-cold.bench.ts): a SQLite file in
// the temporary directory holding one organization, a viewer who may view 5 of 50 security
// templates, `n` generated documents (search-corpus.ts) and a secured collection of 10,000 members.
// Generated once per size and reused by later runs.
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { parseConfig } from '../src/config.ts';
import { createDeps, type Deps } from '../src/deps.ts';
import { PERMISSIONS } from '../src/core/authz/catalog.ts';
import { writeTemplatePermissions } from '../src/core/authz/authorize.ts';
import { migrateToLatest } from '../src/core/db/migrate.ts';
import { toJson } from '../src/core/db/json.ts';
import { newId } from '../src/core/ids.ts';
import { createOrganization } from '../src/features/identity/index.ts';
import { seedOrganizationMetadata } from '../src/features/metadata/index.ts';
import { TEMPLATES, VISIBLE_TEMPLATES, generateCorpus } from './search-corpus.ts';
import { insertSecuredCollection } from '../test/helpers/search.ts';

export interface CorpusSetup {
  orgId: string;
  userId: string;
  templateIds: string[];
  collectionId: string;
}

export const CORPUS_SECRET = 'bench-secret-key-0123456789abcdef0123';

/** The corpus file for `n` documents and a way to open it. */
export function corpusDb(n: number): { dir: string; file: string; open: () => Deps } {
  const dir = join(tmpdir(), 'tessera-search-bench');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `corpus-${n}-v3.sqlite`);
  const open = () =>
    createDeps(
      parseConfig({
        TESSERA_DATA_DIR: dir,
        TESSERA_LOG_LEVEL: 'silent',
        TESSERA_SECRET_KEY: CORPUS_SECRET,
        DATABASE_URL: `sqlite:${file}`,
      }),
    );
  return { dir, file, open };
}

export async function ensureCorpus(n: number, log: (s: string) => void): Promise<CorpusSetup> {
  const { file, open } = corpusDb(n);
  const s = await generateOnce(n, file, open, log);
  // Older corpora get what later code reads (idempotent): the indexed_at index, and grants as the
  // permission check reads them (security_template_permissions).
  const deps = open();
  await sql`create index if not exists search_docs_indexed_idx on search_docs (org_id, indexed_at)`.execute(deps.db);
  for (const g of await deps.db
    .selectFrom('security_template_grants')
    .select(['template_id', 'group_id', 'permissions'])
    .where('org_id', '=', s.orgId)
    .execute()) {
    await writeTemplatePermissions(
      deps.db,
      s.orgId,
      g.template_id,
      new Map([[g.group_id, JSON.parse(g.permissions) as string[]]]),
    );
  }
  await deps.close();
  return s;
}

async function generateOnce(n: number, file: string, open: () => Deps, log: (s: string) => void): Promise<CorpusSetup> {
  if (existsSync(file)) {
    const deps = open();
    const row = await deps.db
      .selectFrom('server_state')
      .select('value')
      .where('key', '=', 'search-bench')
      .executeTakeFirst();
    await deps.close();
    if (row) return JSON.parse(row.value) as CorpusSetup;
    throw new Error(`${file} exists but is incomplete: delete it`);
  }
  log(`Generating ${n} assets into ${file} (once; cached for later runs)`);
  let deps = open();
  await migrateToLatest(deps.db);
  const now = Date.now();
  const org = await deps.db.transaction().execute((trx) =>
    createOrganization(
      trx,
      now,
      {
        name: 'Bench',
        admin: { username: `bench-${now}`, email: 'b@example.test', passwordHash: null },
      },
      seedOrganizationMetadata,
    ),
  );
  const viewers = newId();
  const others = newId();
  await deps.db
    .insertInto('groups')
    .values(
      [viewers, others].map((id, i) => ({
        id,
        org_id: org.orgId,
        name: `g${i}`,
        name_key: `g${i}`,
        description: '',
        created_at: now,
        updated_at: now,
      })),
    )
    .execute();
  const templateIds: string[] = [];
  for (let i = 0; i < TEMPLATES; i++) {
    const id = newId();
    templateIds.push(id);
    await deps.db
      .insertInto('security_templates')
      .values({
        id,
        org_id: org.orgId,
        name: `st${i}`,
        name_key: `st${i}`,
        description: '',
        created_at: now,
        updated_at: now,
      })
      .execute();
    await deps.db
      .insertInto('security_template_grants')
      .values({
        org_id: org.orgId,
        template_id: id,
        group_id: i < VISIBLE_TEMPLATES ? viewers : others,
        permissions: toJson([PERMISSIONS.view.id]),
      })
      .execute();
  }
  const userId = newId();
  await deps.db
    .insertInto('users')
    .values({
      id: userId,
      org_id: org.orgId,
      username: 'viewer',
      username_key: `viewer-${now}`,
      email: 'v@example.test',
      first_name: 'V',
      last_name: 'V',
      friendly_name: 'v',
      status: 'enabled',
      account_type: 'local',
      role_id: org.roles.editor,
      password_hash: null,
      phone: null,
      company: null,
      country: null,
      contact: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  await deps.db.insertInto('user_groups').values({ org_id: org.orgId, user_id: userId, group_id: viewers }).execute();
  await deps.close();
  generateCorpus(
    file,
    n,
    { orgId: org.orgId, templateIds, metadataTemplateNames: Array.from({ length: 20 }, (_, i) => `Template ${i}`) },
    log,
  );
  deps = open();
  // A secured collection of 10,000 members (a tenth of them visible to the viewer, like the corpus).
  const collectionId = newId();
  const members = await deps.db.selectFrom('search_docs').select('file_id').where('doc_no', '<=', 10_000).execute();
  await insertSecuredCollection(deps.db, {
    id: collectionId,
    orgId: org.orgId,
    name: 'ten thousand',
    ownerId: org.adminUserId,
    templateId: templateIds[0]!,
    fileIds: members.map((m) => m.file_id!),
    now,
  });
  const s: CorpusSetup = { orgId: org.orgId, userId, templateIds, collectionId };
  await deps.db
    .insertInto('server_state')
    .values({ key: 'search-bench', value: JSON.stringify(s), updated_at: now })
    .execute();
  await deps.close();
  return s;
}
