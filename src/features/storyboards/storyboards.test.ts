import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Value } from 'typebox/value';
import { forEachEngine, json, type TestContext } from '../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg, type TestUser } from '../../../test/helpers/factories.ts';
import { securitySuite } from '../../../test/helpers/security.ts';
import { PERMISSIONS, type Permission } from '../../core/authz/catalog.ts';
import { envelopeSchema } from '../../core/events/index.ts';

const H = (user: { headers: Record<string, string> }) => user.headers;

async function createBoard(
  ctx: TestContext,
  user: { headers: Record<string, string> },
  body: Record<string, unknown> = {},
): Promise<any> {
  const res = await ctx.inject({
    method: 'POST',
    url: '/v1/storyboards',
    headers: H(user),
    payload: { title: 'Spring campaign', ...body },
  });
  assert.equal(res.statusCode, 201, res.body);
  return json(res);
}

/** A role-holding user: `manager` has Story Board Management, `viewer` only viewStoryboards. */
async function member(
  ctx: TestContext,
  org: TestOrg,
  kind: 'manager' | 'viewer' | 'none',
  groupIds?: string[],
): Promise<TestUser> {
  const privileges =
    kind === 'manager'
      ? (['view_storyboards', 'storyboard_management'] as const)
      : kind === 'viewer'
        ? (['view_storyboards'] as const)
        : [];
  return createTestUser(ctx, org, { privileges: [...privileges], groupIds });
}

async function template(
  ctx: TestContext,
  org: TestOrg,
  grants: { groupId: string; permissions: Permission[] }[],
): Promise<string> {
  const res = await ctx.inject({
    method: 'POST',
    url: '/v1/security/template',
    headers: org.admin.headers,
    payload: {
      templateName: `tpl-${Math.random().toString(36).slice(2)}`,
      securityDenormalized: grants.map((g) => ({
        groupId: g.groupId,
        permissions: g.permissions.map((p) => PERMISSIONS[p].id),
      })),
    },
  });
  assert.equal(res.statusCode, 201, res.body);
  return json(res).templateId;
}

async function group(ctx: TestContext, org: TestOrg): Promise<string> {
  const res = await ctx.inject({
    method: 'POST',
    url: '/v1/security/groups',
    headers: org.admin.headers,
    payload: { groupName: `g-${Math.random().toString(36).slice(2)}` },
  });
  assert.equal(res.statusCode, 201, res.body);
  return json(res).groupId;
}

forEachEngine('story boards: model and management', (ctx) => {
  it('creates, reads, updates, publishes, unpublishes and deletes a story board', async () => {
    const org = await createTestOrg(ctx());
    const created = await createBoard(ctx(), org.admin, {
      description: 'Looks for the spring launch',
      locale: 'fr-FR',
      blocks: [
        { type: 'heading', text: 'Welcome', level: 1 },
        {
          type: 'richText',
          html: '<p>Hello <strong>world</strong><script>alert(1)</script><img src=x onerror=alert(2)> <a href="javascript:alert(3)">x</a> <a href="https://example.com">ok</a></p>',
        },
        { type: 'link', url: 'https://example.com/brief', label: 'Brief' },
        { type: 'divider' },
      ],
    });
    assert.equal(created.title, 'Spring campaign');
    assert.equal(created.locale, 'fr-FR');
    assert.equal(created.status, 'draft');
    assert.equal(created.version, 1);
    assert.equal(created.blockCount, 4);
    assert.deepEqual(
      created.blocks.map((b: any) => b.type),
      ['heading', 'richText', 'link', 'divider'],
    );
    assert.equal(created.blocks[0].level, 1);
    const html: string = created.blocks[1].html;
    assert.doesNotMatch(html, /script|onerror|javascript:|<img/i);
    assert.match(html, /<strong>world<\/strong>/);
    assert.match(html, /<a href="https:\/\/example.com" rel="noopener noreferrer nofollow" target="_blank">ok<\/a>/);
    for (const flag of [
      'canEdit',
      'canDelete',
      'canApplySecurityTemplates',
      'canShareInternal',
      'canShareExternal',
      'canPublish',
    ])
      assert.equal(created[flag], true, flag);

    const got = json(
      await ctx().inject({ method: 'GET', url: `/v1/storyboards/${created.id}`, headers: org.admin.headers }),
    );
    assert.deepEqual(got, created);

    const patched = await ctx().inject({
      method: 'PATCH',
      url: `/v1/storyboards/${created.id}/`,
      headers: { ...org.admin.headers, 'content-type': 'application/json' },
      payload: { title: 'Spring 2027', description: '', version: 1 },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(json(patched).title, 'Spring 2027');
    assert.equal(json(patched).description, '');
    assert.equal(json(patched).version, 2);
    assert.deepEqual(json(patched).blocks, created.blocks);

    const stale = await ctx().inject({
      method: 'PATCH',
      url: `/v1/storyboards/${created.id}`,
      headers: org.admin.headers,
      payload: { title: 'Lost update', version: 1 },
    });
    assert.equal(stale.statusCode, 409, stale.body);
    assert.equal(json(stale).details[0].field, 'body.version');

    const published = json(
      await ctx().inject({ method: 'POST', url: `/v1/storyboards/${created.id}/publish`, headers: org.admin.headers }),
    );
    assert.equal(published.status, 'published');
    assert.ok(published.publishedDate);
    const draft = json(
      await ctx().inject({
        method: 'POST',
        url: `/v1/storyboards/${created.id}/unpublish`,
        headers: org.admin.headers,
        payload: {},
      }),
    );
    assert.equal(draft.status, 'draft');
    assert.equal(draft.publishedDate, null);

    const del = await ctx().inject({
      method: 'DELETE',
      url: `/v1/storyboards/${created.id}`,
      headers: org.admin.headers,
    });
    assert.equal(del.statusCode, 204);
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/storyboards/${created.id}`, headers: org.admin.headers }))
        .statusCode,
      404,
    );

    const events = await ctx()
      .deps.db.selectFrom('events')
      .select(['type', 'body'])
      .where('org_id', '=', org.orgId)
      .where('type', 'like', 'storyboard.%')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    assert.deepEqual(events.map((e) => e.type).sort(), [
      'storyboard.created',
      'storyboard.deleted',
      'storyboard.updated',
      'storyboard.updated',
      'storyboard.updated',
    ]);
    for (const e of events) {
      assert.ok(
        Value.Check(envelopeSchema(e.type as 'storyboard.created'), JSON.parse(e.body)),
        `${e.type} matches its schema`,
      );
      const body = JSON.parse(e.body);
      assert.equal(body.storyboard.id, created.id);
      assert.equal(body.event.user.id, org.admin.userId);
    }
    assert.equal(
      events.filter((e) => JSON.parse(e.body).storyboard.published === true).length,
      1,
      'one updated event reports the published state',
    );
  });

  it('rejects bad input with 400 naming the field, and writes nothing', async () => {
    const org = await createTestOrg(ctx());
    const cases: [Record<string, unknown>, string][] = [
      [{ title: '' }, 'body.title'],
      [{ title: '   ' }, 'body.title'],
      [{ locale: 'not a locale!' }, 'locale'],
      [{ blocks: [{ type: 'heading' }] }, 'body.blocks.0.text'],
      [{ blocks: [{ type: 'heading', text: 'x', url: 'https://example.com' }] }, 'body.blocks.0.url'],
      [{ blocks: [{ type: 'richText', html: '<script>alert(1)</script>' }] }, 'body.blocks.0.html'],
      [{ blocks: [{ type: 'link', url: 'javascript:alert(1)' }] }, 'body.blocks.0.url'],
      [{ blocks: [{ type: 'link', url: 'ftp://example.com' }] }, 'body.blocks.0.url'],
      [{ blocks: [{ type: 'gallery', assetIds: [] }] }, 'body.blocks.0.assetIds'],
      [{ blocks: [{ type: 'asset' }] }, 'body.blocks.0.assetId'],
      [{ blocks: [{ type: 'asset', assetId: '0190a0a0-0000-7000-8000-000000000001' }] }, 'body.blocks.0.assetId'],
      [
        { blocks: [{ type: 'collection', collectionId: '0190a0a0-0000-7000-8000-000000000002' }] },
        'body.blocks.0.collectionId',
      ],
      [
        { blocks: [{ type: 'savedSearch', savedSearchId: '0190a0a0-0000-7000-8000-000000000003' }] },
        'body.blocks.0.savedSearchId',
      ],
      [{ blocks: [{ type: 'video' }] }, 'type'],
      [{ coverAssetId: '0190a0a0-0000-7000-8000-000000000004' }, 'body.coverAssetId'],
      [{ securityTemplateIds: ['0190a0a0-0000-7000-8000-000000000005'] }, 'body.securityTemplateIds.0'],
    ];
    for (const [body, field] of cases) {
      const res = await ctx().inject({
        method: 'POST',
        url: '/v1/storyboards',
        headers: org.admin.headers,
        payload: { title: 'T', ...body },
      });
      assert.equal(res.statusCode, 400, `${JSON.stringify(body)} → ${res.body}`);
      assert.ok(JSON.stringify(json(res)).includes(field), `${JSON.stringify(body)} names ${field}: ${res.body}`);
    }
    const count = await ctx()
      .deps.db.selectFrom('storyboards')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', org.orgId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 0);
  });

  it('edits, inserts, removes and reorders blocks atomically, keeping block ids', async () => {
    const org = await createTestOrg(ctx());
    const board = await createBoard(ctx(), org.admin, {
      blocks: [
        { type: 'heading', text: 'A' },
        { type: 'heading', text: 'B' },
        { type: 'heading', text: 'C' },
      ],
    });
    const [a, b, c] = board.blocks.map((x: any) => x.id);
    const url = `/v1/storyboards/${board.id}`;

    const added = await ctx().inject({
      method: 'POST',
      url: `${url}/blocks`,
      headers: org.admin.headers,
      payload: { block: { type: 'divider' }, position: 1 },
    });
    assert.equal(added.statusCode, 201, added.body);
    const d = json(added).blocks[1].id;
    assert.deepEqual(
      json(added).blocks.map((x: any) => x.id),
      [a, d, b, c],
    );

    const edited = json(
      await ctx().inject({
        method: 'PATCH',
        url: `${url}/blocks/${b}`,
        headers: org.admin.headers,
        payload: { block: { type: 'richText', html: '<p>Bee</p>' } },
      }),
    );
    assert.deepEqual(edited.blocks[2], { id: b, type: 'richText', html: '<p>Bee</p>' });

    const reordered = await ctx().inject({
      method: 'POST',
      url: `${url}/blocks/reorder`,
      headers: org.admin.headers,
      payload: { blockIds: [c, b, d, a], version: edited.version },
    });
    assert.equal(reordered.statusCode, 200, reordered.body);
    assert.deepEqual(
      json(reordered).blocks.map((x: any) => x.id),
      [c, b, d, a],
    );

    for (const [blockIds, field] of [
      [[c, b, d], 'body.blockIds'],
      [[c, b, d, d], 'body.blockIds.3'],
      [[c, b, d, '0190a0a0-0000-7000-8000-000000000009'], 'body.blockIds.3'],
    ] as const) {
      const bad = await ctx().inject({
        method: 'POST',
        url: `${url}/blocks/reorder`,
        headers: org.admin.headers,
        payload: { blockIds },
      });
      assert.equal(bad.statusCode, 400, bad.body);
      assert.equal(json(bad).details[0].field, field);
    }
    const staleReorder = await ctx().inject({
      method: 'POST',
      url: `${url}/blocks/reorder`,
      headers: org.admin.headers,
      payload: { blockIds: [a, b, c, d], version: 1 },
    });
    assert.equal(staleReorder.statusCode, 409);

    const removed = json(
      await ctx().inject({ method: 'DELETE', url: `${url}/blocks/${d}`, headers: org.admin.headers }),
    );
    assert.deepEqual(
      removed.blocks.map((x: any) => x.id),
      [c, b, a],
    );
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `${url}/blocks/${d}`, headers: org.admin.headers })).statusCode,
      404,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `${url}/blocks/${d}`,
          headers: org.admin.headers,
          payload: { block: { type: 'divider' } },
        })
      ).statusCode,
      404,
    );

    // Replacing all blocks keeps the ids sent and refuses ids of other boards; a failure changes nothing.
    const other = await createBoard(ctx(), org.admin, { blocks: [{ type: 'divider' }] });
    const foreign = await ctx().inject({
      method: 'PUT',
      url: `${url}/blocks`,
      headers: org.admin.headers,
      payload: {
        blocks: [
          { id: a, type: 'heading', text: 'A2' },
          { id: other.blocks[0].id, type: 'divider' },
        ],
      },
    });
    assert.equal(foreign.statusCode, 400, foreign.body);
    assert.equal(json(foreign).details[0].field, 'body.blocks.1.id');
    const unchanged = json(await ctx().inject({ method: 'GET', url, headers: org.admin.headers }));
    assert.deepEqual(
      unchanged.blocks.map((x: any) => x.id),
      [c, b, a],
    );
    assert.equal(unchanged.version, removed.version);
    const replaced = json(
      await ctx().inject({
        method: 'PUT',
        url: `${url}/blocks`,
        headers: org.admin.headers,
        payload: {
          blocks: [
            { id: a, type: 'heading', text: 'A2' },
            { type: 'link', url: 'mailto:team@example.com' },
          ],
        },
      }),
    );
    assert.equal(replaced.blocks[0].id, a);
    assert.equal(replaced.blocks[0].text, 'A2');
    assert.equal(replaced.blocks.length, 2);
  });

  it('serialises concurrent block edits: none is lost', async () => {
    const org = await createTestOrg(ctx());
    const board = await createBoard(ctx(), org.admin);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        ctx().inject({
          method: 'POST',
          url: `/v1/storyboards/${board.id}/blocks`,
          headers: org.admin.headers,
          payload: { block: { type: 'heading', text: `H${i}` } },
        }),
      ),
    );
    for (const r of results) assert.equal(r.statusCode, 201, r.body);
    const final = json(
      await ctx().inject({ method: 'GET', url: `/v1/storyboards/${board.id}`, headers: org.admin.headers }),
    );
    assert.equal(final.blocks.length, 8);
    assert.deepEqual(final.blocks.map((b: any) => b.text).sort(), Array.from({ length: 8 }, (_, i) => `H${i}`).sort());
    assert.equal(final.version, 9);
  });
});

forEachEngine('story boards: list (reference §15)', (ctx) => {
  it('pages with cursor and limit, searches title and description, sorts and filters by status and locale', async () => {
    const org = await createTestOrg(ctx());
    const titles = ['Alpha launch', 'beta Review', 'Gamma', 'Delta 50%_off', 'Epsilon'];
    const ids: string[] = [];
    for (const [i, title] of titles.entries()) {
      ctx().clock.advance(1000);
      const board = await createBoard(ctx(), org.admin, {
        title,
        description: i === 2 ? 'The LAUNCH follow-up' : '',
        locale: i === 4 ? 'de-DE' : 'en-US',
        status: i % 2 === 0 ? 'published' : 'draft',
      });
      ids.push(board.id);
    }
    const list = async (q: string) => {
      const res = await ctx().inject({ method: 'GET', url: `/v1/storyboards?${q}`, headers: org.admin.headers });
      assert.equal(res.statusCode, 200, res.body);
      return json(res);
    };
    const all = await list('');
    assert.deepEqual(
      all.items.map((b: any) => b.id),
      [...ids].reverse(),
      'default: updatedAt desc',
    );
    assert.equal(all.nextCursor, null);
    assert.equal(all.items[0].blockCount, 0);
    for (const flag of ['canDelete', 'canApplySecurityTemplates', 'canShareInternal', 'canShareExternal', 'canPublish'])
      assert.equal(typeof all.items[0][flag], 'boolean');

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await list(`limit=2&sortBy=title&sortOrder=asc${cursor ? `&cursor=${cursor}` : ''}`);
      assert.ok(page.items.length <= 2);
      seen.push(...page.items.map((b: any) => b.title));
      cursor = page.nextCursor;
    } while (cursor);
    assert.deepEqual(seen, ['Alpha launch', 'beta Review', 'Delta 50%_off', 'Epsilon', 'Gamma']);

    assert.deepEqual((await list('search=LAUNCH')).items.map((b: any) => b.title).sort(), ['Alpha launch', 'Gamma']);
    assert.deepEqual(
      (await list('search=50%25_')).items.map((b: any) => b.title),
      ['Delta 50%_off'],
    );
    assert.deepEqual(
      (await list('search=%25')).items.map((b: any) => b.title),
      ['Delta 50%_off'],
      '% is literal',
    );
    assert.deepEqual(
      (await list('status=published')).items.map((b: any) => b.title),
      ['Epsilon', 'Gamma', 'Alpha launch'],
    );
    assert.deepEqual(
      (await list('status=draft')).items.map((b: any) => b.title),
      ['Delta 50%_off', 'beta Review'],
    );
    assert.deepEqual(
      (await list('locale=de-de')).items.map((b: any) => b.title),
      ['Epsilon'],
    );

    const first = await list('limit=2');
    const switched = await ctx().inject({
      method: 'GET',
      url: `/v1/storyboards?sortBy=title&cursor=${first.nextCursor}`,
      headers: org.admin.headers,
    });
    assert.equal(switched.statusCode, 400);
    assert.equal(json(switched).details[0].field, 'query.cursor');
    for (const q of ['limit=101', 'limit=0', 'sortBy=created', 'sortOrder=up', 'status=archived', 'cursor=garbage']) {
      const bad = await ctx().inject({ method: 'GET', url: `/v1/storyboards?${q}`, headers: org.admin.headers });
      assert.equal(bad.statusCode, 400, `${q}: ${bad.body}`);
    }
  });

  it('answers 200 with nothing to a caller without viewStoryboards', async () => {
    const org = await createTestOrg(ctx());
    await createBoard(ctx(), org.admin, { status: 'published' });
    const nobody = await member(ctx(), org, 'none');
    const res = await ctx().inject({ method: 'GET', url: '/v1/storyboards', headers: nobody.headers });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(json(res), { items: [], nextCursor: null });
  });
});

forEachEngine('story boards: who sees what', (ctx) => {
  it('drafts only for managers; published boards for viewers; security templates and internal shares decide the rest', async () => {
    const org = await createTestOrg(ctx());
    const teamA = await group(ctx(), org);
    const teamB = await group(ctx(), org);
    const manager = await member(ctx(), org, 'manager', [teamA]);
    const viewerA = await member(ctx(), org, 'viewer', [teamA]);
    const viewerB = await member(ctx(), org, 'viewer', [teamB]);
    const onlyA = await template(ctx(), org, [{ groupId: teamA, permissions: ['view'] }]);

    const open = await createBoard(ctx(), manager, { title: 'Open', status: 'published' });
    const draft = await createBoard(ctx(), manager, { title: 'Draft' });
    const secured = await createBoard(ctx(), manager, {
      title: 'Secured',
      status: 'published',
      securityTemplateIds: [onlyA],
    });
    assert.deepEqual(secured.securityTemplateIds, [onlyA]);

    const titles = async (user: TestUser) =>
      json(
        await ctx().inject({ method: 'GET', url: '/v1/storyboards?sortBy=title&sortOrder=asc', headers: user.headers }),
      ).items.map((b: any) => b.title);
    assert.deepEqual(await titles(manager), ['Draft', 'Open', 'Secured']);
    assert.deepEqual(await titles(viewerA), ['Open', 'Secured']);
    assert.deepEqual(await titles(viewerB), ['Open']);
    for (const [user, board, status] of [
      [viewerA, draft, 404],
      [viewerB, secured, 404],
      [viewerB, open, 200],
      [viewerA, secured, 200],
    ] as const) {
      assert.equal(
        (await ctx().inject({ method: 'GET', url: `/v1/storyboards/${board.id}`, headers: user.headers })).statusCode,
        status,
      );
      assert.equal(
        (await ctx().inject({ method: 'GET', url: `/v1/storyboards/${board.id}/view`, headers: user.headers }))
          .statusCode,
        status,
      );
    }
    // A viewer reads but cannot change anything, and sees no management flags.
    const asViewer = json(
      await ctx().inject({ method: 'GET', url: `/v1/storyboards/${open.id}`, headers: viewerB.headers }),
    );
    for (const flag of [
      'canEdit',
      'canDelete',
      'canApplySecurityTemplates',
      'canShareInternal',
      'canShareExternal',
      'canPublish',
    ])
      assert.equal(asViewer[flag], false, flag);
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/storyboards/${open.id}`,
          headers: viewerB.headers,
          payload: { title: 'x' },
        })
      ).statusCode,
      403,
    );
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `/v1/storyboards/${open.id}`, headers: viewerB.headers }))
        .statusCode,
      403,
    );
    assert.equal(
      (await ctx().inject({ method: 'POST', url: `/v1/storyboards/${open.id}/unpublish`, headers: viewerB.headers }))
        .statusCode,
      403,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: '/v1/storyboards',
          headers: viewerB.headers,
          payload: { title: 'x' },
        })
      ).statusCode,
      403,
    );

    // Sharing the secured board with team B opens it to viewer B; unsharing closes it again.
    const share = await ctx().inject({
      method: 'POST',
      url: `/v1/storyboards/${secured.id}/shares`,
      headers: manager.headers,
      payload: { groupIds: [teamB] },
    });
    assert.equal(share.statusCode, 200, share.body);
    assert.deepEqual(
      json(share).internal.map((s: any) => [s.type, s.id]),
      [['group', teamB]],
    );
    assert.deepEqual(await titles(viewerB), ['Open', 'Secured']);
    assert.equal(
      (
        await ctx().inject({
          method: 'DELETE',
          url: `/v1/storyboards/${secured.id}/shares/${teamB}`,
          headers: manager.headers,
        })
      ).statusCode,
      204,
    );
    assert.deepEqual(await titles(viewerB), ['Open']);
    // A share to one user works the same way.
    await ctx().inject({
      method: 'POST',
      url: `/v1/storyboards/${secured.id}/shares`,
      headers: manager.headers,
      payload: { userIds: [viewerB.userId] },
    });
    assert.deepEqual(await titles(viewerB), ['Open', 'Secured']);

    const events = await ctx()
      .deps.db.selectFrom('events')
      .select(['body'])
      .where('org_id', '=', org.orgId)
      .where('type', '=', 'storyboard.shared')
      .orderBy('created_at')
      .execute();
    assert.equal(events.length, 2);
    assert.equal(JSON.parse(events[0]!.body).share.type, 'Internal');

    // Another manager without rights through the template sees the secured board only via... nothing.
    const outsider = await member(ctx(), org, 'manager', [teamB]);
    assert.deepEqual(await titles(outsider), ['Draft', 'Open']);
    // Security templates may be changed only by those who may apply them.
    const noApply = await template(ctx(), org, [{ groupId: teamA, permissions: ['view', 'edit_metadata'] }]);
    const editorA = await member(ctx(), org, 'manager', [teamA]);
    const board = await createBoard(ctx(), manager, { title: 'Editable', securityTemplateIds: [noApply] });
    const asEditor = json(
      await ctx().inject({ method: 'GET', url: `/v1/storyboards/${board.id}`, headers: editorA.headers }),
    );
    assert.equal(asEditor.canEdit, true);
    assert.equal(asEditor.canApplySecurityTemplates, false);
    assert.equal(asEditor.canDelete, false);
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/storyboards/${board.id}`,
          headers: editorA.headers,
          payload: { title: 'Renamed' },
        })
      ).statusCode,
      200,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/storyboards/${board.id}`,
          headers: editorA.headers,
          payload: { securityTemplateIds: [] },
        })
      ).statusCode,
      403,
    );
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `/v1/storyboards/${board.id}`, headers: editorA.headers }))
        .statusCode,
      403,
    );
  });

  it('refuses shares to users and groups of another organization', async () => {
    const org = await createTestOrg(ctx());
    const other = await createTestOrg(ctx());
    const board = await createBoard(ctx(), org.admin);
    const res = await ctx().inject({
      method: 'POST',
      url: `/v1/storyboards/${board.id}/shares`,
      headers: org.admin.headers,
      payload: { userIds: [other.admin.userId] },
    });
    assert.equal(res.statusCode, 400);
    assert.equal(json(res).details[0].field, 'body.userIds.0');
    const res2 = await ctx().inject({
      method: 'POST',
      url: `/v1/storyboards/${board.id}/shares`,
      headers: org.admin.headers,
      payload: { groupIds: [other.groups.everyone] },
    });
    assert.equal(res2.statusCode, 400);
    assert.equal(json(res2).details[0].field, 'body.groupIds.0');
    const empty = await ctx().inject({
      method: 'POST',
      url: `/v1/storyboards/${board.id}/shares`,
      headers: org.admin.headers,
      payload: {},
    });
    assert.equal(empty.statusCode, 400);
  });
});

forEachEngine('story boards: security suite', (ctx) => {
  const board = async (c: TestContext, org: TestOrg) =>
    await createBoard(c, org.admin, { blocks: [{ type: 'heading', text: 'H' }] });
  const routes: [string, Parameters<typeof securitySuite>[2]][] = [
    ['/v1/storyboards', { method: 'GET', prepare: () => ({ url: '/v1/storyboards' }) }],
    [
      '/v1/storyboards',
      {
        method: 'POST',
        privileges: ['storyboard_management'],
        prepare: () => ({ url: '/v1/storyboards', body: { title: 'x' } }),
      },
    ],
    [
      '/v1/storyboards/{id}',
      {
        method: 'GET',
        resource: true,
        prepare: async (c, o) => ({ url: `/v1/storyboards/${(await board(c, o)).id}` }),
      },
    ],
    [
      '/v1/storyboards/{id}',
      {
        method: 'PATCH',
        resource: true,
        privileges: ['storyboard_management'],
        prepare: async (c, o) => ({ url: `/v1/storyboards/${(await board(c, o)).id}`, body: { title: 'y' } }),
      },
    ],
    [
      '/v1/storyboards/{id}',
      {
        method: 'DELETE',
        resource: true,
        privileges: ['storyboard_management'],
        prepare: async (c, o) => ({ url: `/v1/storyboards/${(await board(c, o)).id}` }),
      },
    ],
    [
      '/v1/storyboards/{id}/publish',
      {
        method: 'POST',
        resource: true,
        privileges: ['storyboard_management'],
        prepare: async (c, o) => ({ url: `/v1/storyboards/${(await board(c, o)).id}/publish` }),
      },
    ],
    [
      '/v1/storyboards/{id}/unpublish',
      {
        method: 'POST',
        resource: true,
        privileges: ['storyboard_management'],
        prepare: async (c, o) => ({ url: `/v1/storyboards/${(await board(c, o)).id}/unpublish` }),
      },
    ],
    [
      '/v1/storyboards/{id}/view',
      {
        method: 'GET',
        resource: true,
        prepare: async (c, o) => ({ url: `/v1/storyboards/${(await board(c, o)).id}/view` }),
      },
    ],
    [
      '/v1/storyboards/{id}/blocks',
      {
        method: 'PUT',
        resource: true,
        privileges: ['storyboard_management'],
        prepare: async (c, o) => ({ url: `/v1/storyboards/${(await board(c, o)).id}/blocks`, body: { blocks: [] } }),
      },
    ],
    [
      '/v1/storyboards/{id}/blocks',
      {
        method: 'POST',
        resource: true,
        privileges: ['storyboard_management'],
        prepare: async (c, o) => ({
          url: `/v1/storyboards/${(await board(c, o)).id}/blocks`,
          body: { block: { type: 'divider' } },
        }),
      },
    ],
    [
      '/v1/storyboards/{id}/blocks/reorder',
      {
        method: 'POST',
        resource: true,
        privileges: ['storyboard_management'],
        prepare: async (c, o) => {
          const b = await board(c, o);
          return { url: `/v1/storyboards/${b.id}/blocks/reorder`, body: { blockIds: [b.blocks[0].id] } };
        },
      },
    ],
    [
      '/v1/storyboards/{id}/blocks/{blockId}',
      {
        method: 'PATCH',
        resource: true,
        privileges: ['storyboard_management'],
        prepare: async (c, o) => {
          const b = await board(c, o);
          return { url: `/v1/storyboards/${b.id}/blocks/${b.blocks[0].id}`, body: { block: { type: 'divider' } } };
        },
      },
    ],
    [
      '/v1/storyboards/{id}/blocks/{blockId}',
      {
        method: 'DELETE',
        resource: true,
        privileges: ['storyboard_management'],
        prepare: async (c, o) => {
          const b = await board(c, o);
          return { url: `/v1/storyboards/${b.id}/blocks/${b.blocks[0].id}` };
        },
      },
    ],
    [
      '/v1/storyboards/{id}/shares',
      {
        method: 'GET',
        resource: true,
        privileges: ['storyboard_management'],
        prepare: async (c, o) => ({ url: `/v1/storyboards/${(await board(c, o)).id}/shares` }),
      },
    ],
    [
      '/v1/storyboards/{id}/shares',
      {
        method: 'POST',
        resource: true,
        privileges: ['storyboard_management'],
        prepare: async (c, o) => ({
          url: `/v1/storyboards/${(await board(c, o)).id}/shares`,
          body: { groupIds: [o.groups.everyone] },
        }),
      },
    ],
    [
      '/v1/storyboards/{id}/shares/{subjectId}',
      {
        method: 'DELETE',
        resource: true,
        privileges: ['storyboard_management'],
        prepare: async (c, o) => {
          const b = await board(c, o);
          await c.inject({
            method: 'POST',
            url: `/v1/storyboards/${b.id}/shares`,
            headers: o.admin.headers,
            payload: { groupIds: [o.groups.everyone] },
          });
          return { url: `/v1/storyboards/${b.id}/shares/${o.groups.everyone}` };
        },
      },
    ],
    [
      '/v1/storyboards/{id}/links',
      {
        method: 'POST',
        resource: true,
        privileges: ['storyboard_management'],
        prepare: async (c, o) => ({ url: `/v1/storyboards/${(await board(c, o)).id}/links`, body: {} }),
      },
    ],
    [
      '/v1/storyboards/{id}/links/{linkId}',
      {
        method: 'DELETE',
        resource: true,
        privileges: ['storyboard_management'],
        prepare: async (c, o) => {
          const b = await board(c, o);
          const l = json(
            await c.inject({
              method: 'POST',
              url: `/v1/storyboards/${b.id}/links`,
              headers: o.admin.headers,
              payload: {},
            }),
          );
          return { url: `/v1/storyboards/${b.id}/links/${l.id}` };
        },
      },
    ],
  ];
  for (const [name, route] of routes) securitySuite(ctx, name, route);
});
