import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import { forEachEngine, type TestContext } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser } from '../../../../test/helpers/factories.ts';
import {
  createGroup,
  createTemplate,
  docInput,
  indexDocs,
  insertSecuredCollection,
} from '../../../../test/helpers/search.ts';
import { loadMemoryIndex, memoryIndexLoaded, unloadMemoryIndex } from '../index.ts';

/**
 * For random groups, security templates, users, assets, collections and metadata templates with
 * access templates: every search result, total and facet count equals what a brute-force filter
 * over the caller's visible assets gives. Visible: View through one of the asset's security
 * templates, and the asset's metadata template not hidden from the caller (it has no access
 * templates, or the caller holds View through one of them; reference §8.1).
 * On SQLite every query runs twice: with the organization's in-memory index not loaded (the SQL
 * path, as right after a start) and loaded (search.memindex.ts); both must give that answer.
 */
const WORDS = ['red', 'blue', 'car', 'cart', 'logo', 'sun', 'sunset', 'beach'];
const AGENCIES = ['Sunset Images LLC', 'Moon Pictures', 'Élan'];
const META = ['Press Release', 'Product Shot', 'Brand Kit'];

interface WorldSpec {
  groups: number;
  templates: { grants: { group: number; view: boolean }[] }[];
  users: number[][];
  docs: {
    templates: number[];
    words: string[];
    filenameWord: string;
    agency: number | null;
    deleted: boolean;
    meta: number | null;
  }[];
  members: number[];
  /** Per metadata template, its access templates (indexes; 4 names a deleted security template). Empty: open to all. */
  metaAccess: number[][];
}

const worldArb: fc.Arbitrary<WorldSpec> = fc.integer({ min: 1, max: 3 }).chain((groups) =>
  fc.record({
    groups: fc.constant(groups),
    templates: fc.array(
      fc.record({
        grants: fc.array(fc.record({ group: fc.integer({ min: 0, max: groups - 1 }), view: fc.boolean() }), {
          maxLength: 3,
        }),
      }),
      { minLength: 1, maxLength: 4 },
    ),
    users: fc.array(fc.uniqueArray(fc.integer({ min: 0, max: groups - 1 }), { maxLength: groups }), {
      minLength: 1,
      maxLength: 3,
    }),
    docs: fc.array(
      fc.record({
        templates: fc.uniqueArray(fc.integer({ min: 0, max: 3 }), { maxLength: 2 }),
        words: fc.array(fc.constantFrom(...WORDS), { maxLength: 4 }),
        filenameWord: fc.constantFrom(...WORDS),
        agency: fc.option(fc.integer({ min: 0, max: AGENCIES.length - 1 })),
        deleted: fc.boolean(),
        meta: fc.option(fc.integer({ min: 0, max: META.length - 1 })),
      }),
      { minLength: 1, maxLength: 25 },
    ),
    members: fc.uniqueArray(fc.integer({ min: 0, max: 24 }), { maxLength: 10 }),
    metaAccess: fc.array(fc.uniqueArray(fc.integer({ min: 0, max: 4 }), { maxLength: 2 }), {
      minLength: META.length,
      maxLength: META.length,
    }),
  }),
);

interface QuerySpec {
  terms: string[];
  operation: 'AND' | 'OR';
  includeDeleted: boolean;
  field: 'filename' | 'metadata' | undefined;
  inCollection: boolean;
}
const termArb = fc.oneof(
  fc.constantFrom(...WORDS),
  fc.constantFrom(...WORDS).map((w) => `${w.slice(0, 3)}*`),
  fc.constantFrom(...AGENCIES).map((a) => `Agency: ${a}`),
  fc.constantFrom(...META).map((m) => `Metadata Template: ${m}`),
  fc.constant('*'),
);
const queryArb: fc.Arbitrary<QuerySpec> = fc.record({
  terms: fc.array(termArb, { maxLength: 3 }),
  operation: fc.constantFrom('AND' as const, 'OR' as const),
  includeDeleted: fc.boolean(),
  field: fc.constantFrom('filename' as const, 'metadata' as const, undefined),
  inCollection: fc.boolean(),
});

interface BruteDoc {
  assetId: string;
  fileId: string;
  createdEpoch: number;
  templates: string[];
  filename: string[];
  metadata: string[];
  agency: string | null;
  deleted: boolean;
  meta: string | null;
}

function matchesTerm(doc: BruteDoc, term: string, field: QuerySpec['field']): boolean {
  if (term === '*') return true;
  const facet = /^Agency: (.+)$/.exec(term);
  if (facet) return doc.agency === facet[1];
  const meta = /^Metadata Template: (.+)$/.exec(term);
  if (meta) return doc.meta === meta[1];
  const tokens =
    field === 'filename'
      ? doc.filename
      : field === 'metadata'
        ? doc.metadata
        : [...doc.filename, ...doc.metadata, doc.agency ? [] : []].flat();
  if (term.endsWith('*')) return tokens.some((t) => t.startsWith(term.slice(0, -1)));
  return tokens.includes(term);
}

async function check(ctx: TestContext, world: WorldSpec, queries: QuerySpec[]): Promise<void> {
  const org = await createTestOrg(ctx);
  const groups: string[] = [];
  for (let i = 0; i < world.groups; i++) groups.push(await createGroup(ctx, org.orgId));
  const templates: string[] = [];
  const viewers = new Map<string, Set<string>>();
  for (const t of world.templates) {
    const grants: Record<string, ('view' | 'download')[]> = {};
    for (const g of t.grants)
      grants[groups[g.group]!] = [
        ...new Set([...(grants[groups[g.group]!] ?? []), g.view ? ('view' as const) : ('download' as const)]),
      ];
    const id = await createTemplate(ctx, org.orgId, grants);
    templates.push(id);
    viewers.set(
      id,
      new Set(
        Object.entries(grants)
          .filter(([, p]) => p.includes('view'))
          .map(([g]) => g),
      ),
    );
  }
  const users = [];
  for (const u of world.users)
    users.push({
      groups: u.map((g) => groups[g]!),
      user: await createTestUser(ctx, org, { groupIds: u.map((g) => groups[g]!), privileges: ['collection'] }),
    });
  // Metadata templates, each with its access templates (index 4: a security template since deleted).
  const metaIds: string[] = [];
  const gone = `00000000-0000-7000-8000-${String(Math.floor(Math.random() * 1e12)).padStart(12, '0')}`;
  for (const [m, name] of META.entries()) {
    const id = `00000000-0000-7000-9000-${String(Math.floor(Math.random() * 1e12)).padStart(12, '0')}`;
    const at = ctx.deps.clock.now();
    await ctx.deps.db
      .insertInto('metadata_templates')
      .values({
        id,
        org_id: org.orgId,
        name: `${name} ${id}`,
        name_key: `${name} ${id}`.toLowerCase(),
        template_types: '["default"]',
        default_values: '[]',
        template_override: null,
        is_default: 0,
        created_by: null,
        updated_by: null,
        created_at: at,
        updated_at: at,
      })
      .execute();
    const access = world.metaAccess[m]!.map((t) => (t < templates.length ? templates[t]! : gone));
    if (access.length > 0)
      await ctx.deps.db
        .insertInto('metadata_template_access')
        .values(
          [...new Set(access)].map((security_template_id) => ({
            org_id: org.orgId,
            template_id: id,
            security_template_id,
          })),
        )
        .execute();
    metaIds.push(id);
  }
  const inputs = world.docs.map((d, i) =>
    docInput(org.orgId, {
      filename: `${d.filenameWord}-${i}.jpg`,
      securityTemplateIds: d.templates.filter((t) => t < templates.length).map((t) => templates[t]!),
      metadataText: d.words.join(' '),
      deleted: d.deleted,
      createdEpoch: 1_700_000_000_000 + i,
      metadataTemplateId: d.meta === null ? null : metaIds[d.meta]!,
      facets: [
        ...(d.agency === null ? [] : [{ facet: 'Agency', value: AGENCIES[d.agency]! }]),
        ...(d.meta === null ? [] : [{ facet: 'Metadata Template', value: META[d.meta]! }]),
      ],
    }),
  );
  await indexDocs(ctx, inputs);
  const brute: BruteDoc[] = inputs.map((d, i) => ({
    assetId: d.assetId,
    fileId: d.fileId!,
    createdEpoch: d.createdEpoch,
    templates: [...d.securityTemplateIds],
    filename: [world.docs[i]!.filenameWord, String(i), 'jpg'],
    metadata: world.docs[i]!.words,
    agency: world.docs[i]!.agency === null ? null : AGENCIES[world.docs[i]!.agency!]!,
    deleted: world.docs[i]!.deleted,
    meta: world.docs[i]!.meta === null ? null : META[world.docs[i]!.meta!]!,
  }));
  // A secured collection, through a template every group may view, owned by the admin.
  const shelf = await createTemplate(
    ctx,
    org.orgId,
    Object.fromEntries(groups.map((g) => [g, ['view', 'edit_metadata'] as const]).map(([g, p]) => [g, [...p]])),
  );
  const members = world.members.filter((m) => m < inputs.length).map((m) => inputs[m]!.fileId!);
  const now = ctx.deps.clock.now();
  const collectionId = `00000000-0000-7000-8000-${String(Math.floor(Math.random() * 1e12)).padStart(12, '0')}`;
  await insertSecuredCollection(ctx.deps.db, {
    id: collectionId,
    orgId: org.orgId,
    name: `c ${collectionId}`,
    ownerId: org.adminUserId,
    templateId: shelf,
    fileIds: members,
    now,
  });

  for (const { groups: mine, user } of users) {
    const views = (t: string) => [...(viewers.get(t) ?? [])].some((g) => mine.includes(g));
    const metaOpen = (name: string | null) => {
      if (name === null) return true;
      const access = world.metaAccess[META.indexOf(name)]!.map((t) => templates[t]);
      return access.length === 0 || access.some((t) => t !== undefined && views(t));
    };
    const visible = brute.filter((d) => d.templates.some(views) && metaOpen(d.meta));
    for (const q of queries) {
      const expected = visible
        .filter((d) => q.includeDeleted || !d.deleted)
        .filter((d) => !q.inCollection || members.includes(d.fileId))
        .filter((d) => {
          if (q.terms.length === 0) return true;
          const hits = q.terms.map((t) => matchesTerm(d, t, q.field));
          return q.operation === 'AND' ? hits.every(Boolean) : hits.some(Boolean);
        })
        .sort((a, b) => a.createdEpoch - b.createdEpoch);
      const body = {
        searchTerm: q.terms,
        operation: q.operation,
        includeDeleted: q.includeDeleted,
        keywordSearchField: q.field,
        limit: 100,
        facetSize: 100,
        sortBy: [{ metadataDefinitionSearchField: 'createdEpoch', order: 'asc' }],
      };
      const url = q.inCollection ? `/v1/collection/${collectionId}/search` : '/v1/search/keyword';
      for (const path of ctx.deps.engine === 'sqlite' ? (['sql', 'memory'] as const) : (['sql'] as const)) {
        if (path === 'sql') unloadMemoryIndex(ctx.deps.db);
        else {
          await loadMemoryIndex(ctx.deps.db, org.orgId);
          assert.ok(memoryIndexLoaded(ctx.deps.db, org.orgId));
        }
        const res = await ctx.inject({ method: 'POST', url, headers: user.headers, payload: body });
        if (q.inCollection && mine.length === 0) {
          assert.equal(res.statusCode, 404, 'a user in no group sees no secured collection');
          continue;
        }
        assert.equal(res.statusCode, 200, res.body);
        const got = res.json();
        const why = `query ${JSON.stringify(q)} (${path} path)`;
        assert.deepEqual(
          got.result.map((r: { objectId: string }) => r.objectId),
          expected.map((d) => d.assetId),
          why,
        );
        assert.equal(got.totalCount, expected.length, why);
        for (const [name, of] of [
          ['Agency', (d: BruteDoc) => d.agency],
          ['Metadata Template', (d: BruteDoc) => d.meta],
        ] as const) {
          const counts = new Map<string, number>();
          for (const d of expected) {
            const v = of(d);
            if (v) counts.set(v, (counts.get(v) ?? 0) + 1);
          }
          const facet = got.facets.find((f: { facet_name: string }) => f.facet_name === name);
          const gotCounts = Object.fromEntries(
            (facet?.values ?? []).map((v: { key: string; doc_count: number }) => [v.key, v.doc_count]),
          );
          assert.deepEqual(gotCounts, Object.fromEntries(counts), `${name} facets of ${why}`);
        }
        // The scan walks the same set (outside collections).
        if (!q.inCollection) {
          const scanned: string[] = [];
          let cursor: string | null | undefined;
          do {
            const page = await ctx.inject({
              method: 'POST',
              url: '/v1/asset/scan',
              headers: user.headers,
              payload: {
                searchTerm: q.terms,
                operation: q.operation,
                includeDeleted: q.includeDeleted,
                keywordSearchField: q.field,
                limit: 7,
                ...(cursor ? { cursor } : {}),
              },
            });
            assert.equal(page.statusCode, 200, page.body);
            scanned.push(...page.json().result.map((r: { objectId: string }) => r.objectId));
            cursor = page.json().cursor;
          } while (cursor);
          assert.deepEqual(scanned.sort(), expected.map((d) => d.assetId).sort(), `scan of ${why}`);
        }
      }
    }
  }
}

forEachEngine('search equals brute force over visible assets (property)', (ctx) => {
  it('holds for random groups, templates, users, assets, collections, metadata-template access and queries', async () => {
    await fc.assert(
      fc.asyncProperty(worldArb, fc.array(queryArb, { minLength: 6, maxLength: 6 }), (world, queries) =>
        check(ctx(), world, queries),
      ),
      { numRuns: 12 },
    );
  });
});
