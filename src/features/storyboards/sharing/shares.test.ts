import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import sharp from 'sharp';
import { createTestOrg, createTestUser, type TestOrg } from '../../../../test/helpers/factories.ts';
import { createKey } from '../../../../test/helpers/api-keys.ts';
import { jpeg, uploadAsset } from '../../../../test/helpers/assets.ts';
import { boardWithAssets } from '../../../../test/helpers/storyboards.ts';

const DAY = 86_400_000;

async function publishedBoard(ctx: TestContext, org: TestOrg, extra: Record<string, unknown> = {}) {
  const res = await ctx.inject({
    method: 'POST',
    url: '/v1/storyboards',
    headers: org.admin.headers,
    payload: {
      title: 'Autumn <b>lookbook</b>',
      description: 'For partners & press',
      status: 'published',
      locale: 'en-GB',
      blocks: [
        { type: 'heading', text: 'Our story' },
        { type: 'richText', html: '<p>Made <em>slowly</em>.</p><script>document.title="pwned"</script>' },
        { type: 'link', url: 'https://example.com/press', label: 'Press kit' },
        { type: 'divider' },
      ],
      ...extra,
    },
  });
  assert.equal(res.statusCode, 201, res.body);
  return json(res);
}

async function link(ctx: TestContext, org: TestOrg, boardId: string, body: Record<string, unknown> = {}) {
  const res = await ctx.inject({
    method: 'POST',
    url: `/v1/storyboards/${boardId}/links`,
    headers: { ...org.admin.headers, 'content-type': 'application/json' },
    payload: body,
  });
  assert.equal(res.statusCode, 201, res.body);
  return json(res);
}

const path = (url: string) => new URL(url).pathname;

forEachEngine('story boards: external share links', (ctx) => {
  it('serves a read-only HTML page and its JSON form, with nothing else reachable through the token', async () => {
    const org = await createTestOrg(ctx());
    const board = await publishedBoard(ctx(), org);
    const created = await link(ctx(), org, board.id);
    assert.match(created.token, /^[A-Za-z0-9_-]{32}$/);
    assert.equal(created.tokenHint, created.token.slice(-4));
    assert.equal(created.passwordProtected, false);
    assert.equal(created.active, true);
    assert.equal(Date.parse(created.expiresAt), ctx().clock.now() + 30 * DAY, 'default expiry: 30 days');
    assert.ok(created.url.endsWith(`/shared/storyboards/${created.token}`));

    const page = await ctx().inject({ method: 'GET', url: path(created.url) });
    assert.equal(page.statusCode, 200, page.body);
    assert.match(page.headers['content-type'] as string, /^text\/html/);
    const csp = page.headers['content-security-policy'] as string;
    assert.match(csp, /default-src 'none'/);
    assert.doesNotMatch(csp, /script-src/);
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.match(page.headers['cache-control'] as string, /no-store/);
    assert.match(page.body, /<meta name="viewport" content="width=device-width,initial-scale=1">/);
    assert.match(page.body, /<title>Autumn &lt;b&gt;lookbook&lt;\/b&gt;<\/title>/, 'title escaped');
    assert.match(page.body, /<html lang="en-GB">/);
    assert.match(page.body, /Our story/);
    assert.match(page.body, /<p>Made <em>slowly<\/em>.<\/p>/);
    assert.doesNotMatch(page.body, /<script|pwned/);
    assert.match(page.body, /href="https:\/\/example.com\/press"/);

    const view = await ctx().inject({ method: 'GET', url: `${path(created.url)}/view` });
    assert.equal(view.statusCode, 200, view.body);
    const body = json(view);
    assert.equal(body.id, board.id);
    assert.equal(body.title, 'Autumn <b>lookbook</b>');
    assert.deepEqual(
      body.blocks.map((b: any) => b.type),
      ['heading', 'richText', 'link', 'divider'],
    );
    assert.equal(body.blocks[0].text, 'Our story');

    // The token is no credential for the API.
    for (const headers of [
      { authorization: `Bearer ${created.token}` },
      { accesstoken: created.token },
      { 'x-api-key': created.token },
    ] as Record<string, string>[]) {
      const res = await ctx().inject({ method: 'GET', url: `/v1/storyboards/${board.id}`, headers });
      assert.equal(res.statusCode, 401);
    }
    // Another board of the organization is not reachable through this token's paths.
    const other = await publishedBoard(ctx(), org, { title: 'Secret plans' });
    const otherBlocks = json(
      await ctx().inject({ method: 'GET', url: `/v1/storyboards/${other.id}`, headers: org.admin.headers }),
    ).blocks;
    assert.ok(otherBlocks.length > 0);
    const res = await ctx().inject({ method: 'GET', url: `${path(created.url)}/assets/${other.id}/imageThumb` });
    assert.equal(res.statusCode, 404);

    const shares = json(
      await ctx().inject({ method: 'GET', url: `/v1/storyboards/${board.id}/shares`, headers: org.admin.headers }),
    );
    assert.equal(shares.links.length, 1);
    assert.equal(shares.links[0].openCount, 1);
    assert.equal(shares.links[0].token, undefined, 'the token is shown only once');
    const events = await ctx()
      .deps.db.selectFrom('events')
      .select('body')
      .where('org_id', '=', org.orgId)
      .where('type', '=', 'storyboard.shared')
      .execute();
    assert.equal(JSON.parse(events[0]!.body).share.type, 'External');
  });

  it('answers 404 to an expired, a revoked and an unknown link, and when the board is deleted or unpublished', async () => {
    const org = await createTestOrg(ctx());
    const board = await publishedBoard(ctx(), org);
    const expiring = await link(ctx(), org, board.id, {
      expiresAt: new Date(ctx().clock.now() + 60_000).toISOString(),
    });
    const revoked = await link(ctx(), org, board.id);
    const forever = await link(ctx(), org, board.id, { expiresAt: null });
    assert.equal(forever.expiresAt, null);
    for (const l of [expiring, revoked, forever])
      assert.equal((await ctx().inject({ method: 'GET', url: path(l.url) })).statusCode, 200);

    ctx().clock.advance(60_000);
    for (const suffix of ['', '/view'])
      assert.equal((await ctx().inject({ method: 'GET', url: `${path(expiring.url)}${suffix}` })).statusCode, 404);

    assert.equal(
      (
        await ctx().inject({
          method: 'DELETE',
          url: `/v1/storyboards/${board.id}/links/${revoked.id}`,
          headers: org.admin.headers,
        })
      ).statusCode,
      204,
    );
    for (const suffix of ['', '/view'])
      assert.equal((await ctx().inject({ method: 'GET', url: `${path(revoked.url)}${suffix}` })).statusCode, 404);
    assert.equal(
      (
        await ctx().inject({
          method: 'DELETE',
          url: `/v1/storyboards/${board.id}/links/${revoked.id}`,
          headers: org.admin.headers,
        })
      ).statusCode,
      404,
      'revoking twice',
    );

    const unknown = `/shared/storyboards/${'A'.repeat(32)}`;
    const miss = await ctx().inject({ method: 'GET', url: unknown });
    assert.equal(miss.statusCode, 404);
    assert.equal(json(miss).message, 'Share link not found');
    assert.equal((await ctx().inject({ method: 'GET', url: '/shared/storyboards/short-token' })).statusCode, 404);

    const shares = json(
      await ctx().inject({ method: 'GET', url: `/v1/storyboards/${board.id}/shares`, headers: org.admin.headers }),
    );
    assert.deepEqual(
      shares.links.map((l: any) => [l.id, l.active]).sort(),
      [
        [expiring.id, false],
        [revoked.id, false],
        [forever.id, true],
      ].sort(),
    );

    // Unpublishing hides the board from everyone but managers: the creator here is a manager, so
    // make a link by a viewer-level creator's rights test in the next case; deletion always ends it.
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `/v1/storyboards/${board.id}`, headers: org.admin.headers }))
        .statusCode,
      204,
    );
    assert.equal((await ctx().inject({ method: 'GET', url: path(forever.url) })).statusCode, 404);
  });

  it('stops working when its creator loses access (disabled, or no longer a Story Board user)', async () => {
    const org = await createTestOrg(ctx());
    const manager = await createTestUser(ctx(), org, { privileges: ['view_storyboards', 'storyboard_management'] });
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/storyboards',
      headers: manager.headers,
      payload: { title: 'By a manager', status: 'published' },
    });
    const board = json(res);
    const l = json(
      await ctx().inject({
        method: 'POST',
        url: `/v1/storyboards/${board.id}/links`,
        headers: manager.headers,
        payload: {},
      }),
    );
    assert.equal((await ctx().inject({ method: 'GET', url: path(l.url) })).statusCode, 200);
    await ctx().deps.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', manager.userId).execute();
    assert.equal((await ctx().inject({ method: 'GET', url: path(l.url) })).statusCode, 404);
  });

  it('asks for the password of a protected link, then remembers it in a cookie scoped to the link', async () => {
    const org = await createTestOrg(ctx());
    const board = await publishedBoard(ctx(), org);
    const l = await link(ctx(), org, board.id, { password: 'open sesame' });
    assert.equal(l.passwordProtected, true);
    const page = await ctx().inject({ method: 'GET', url: path(l.url) });
    assert.equal(page.statusCode, 401);
    assert.match(page.body, /<form method="post" action="\/shared\/storyboards\/[^"]+\/unlock">/);
    assert.doesNotMatch(page.body, /Our story/);
    assert.equal((await ctx().inject({ method: 'GET', url: `${path(l.url)}/view` })).statusCode, 401);

    const wrong = await ctx().inject({
      method: 'POST',
      url: `${path(l.url)}/unlock`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'password=nope',
    });
    assert.equal(wrong.statusCode, 401);
    assert.match(wrong.body, /Wrong password/);
    assert.equal(wrong.headers['set-cookie'], undefined);

    const right = await ctx().inject({
      method: 'POST',
      url: `${path(l.url)}/unlock`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'password=open+sesame',
    });
    assert.equal(right.statusCode, 303);
    assert.equal(right.headers.location, path(l.url));
    // No body, as /openapi.json declares it (issue 24): not a JSON `null`.
    assert.equal(right.body, '');
    assert.equal(right.headers['content-type'], undefined);
    const declared = json(await ctx().inject({ method: 'GET', url: '/openapi.json' })).paths[
      '/shared/storyboards/{token}/unlock'
    ].post.responses['303'];
    assert.equal(declared.content, undefined);
    assert.ok(declared.headers.Location);
    const cookie = String(right.headers['set-cookie']);
    assert.match(cookie, new RegExp(`Path=${path(l.url)}; HttpOnly; SameSite=Lax`));
    const cookieHeader = cookie.split(';')[0]!;
    const opened = await ctx().inject({ method: 'GET', url: path(l.url), headers: { cookie: cookieHeader } });
    assert.equal(opened.statusCode, 200);
    assert.match(opened.body, /Our story/);
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `${path(l.url)}/view`, headers: { cookie: cookieHeader } })).statusCode,
      200,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'GET',
          url: `${path(l.url)}/view`,
          headers: { 'x-share-password': 'open sesame' },
        })
      ).statusCode,
      200,
    );
    // The cookie of one link opens no other protected link.
    const other = await link(ctx(), org, board.id, { password: 'open sesame' });
    assert.equal(
      (await ctx().inject({ method: 'GET', url: path(other.url), headers: { cookie: cookieHeader } })).statusCode,
      401,
    );
    // JSON bodies work too.
    const jsonUnlock = await ctx().inject({
      method: 'POST',
      url: `${path(other.url)}/unlock`,
      payload: { password: 'open sesame' },
    });
    assert.equal(jsonUnlock.statusCode, 303);
  });

  it('throttles password guesses per link and per client address like sign-in: 429 with Retry-After (issue 23, defect 6)', async () => {
    const org = await createTestOrg(ctx());
    const board = await publishedBoard(ctx(), org);
    const l = await link(ctx(), org, board.id, { password: 'open sesame' });
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const unlock = (password: string, ip: string, url = l.url) =>
      ctx().app.inject({
        method: 'POST',
        url: `${path(url)}/unlock`,
        headers: form,
        payload: `password=${encodeURIComponent(password)}`,
        remoteAddress: ip,
      });
    for (let i = 0; i < 5; i++) assert.equal((await unlock(`guess-${i}`, '10.23.6.1')).statusCode, 401);
    assert.equal(
      (await unlock('guess-5', '10.23.6.1')).statusCode,
      401,
      'the 6th guess is still checked, then locks the link',
    );
    for (const ip of ['10.23.6.1', '10.23.6.2']) {
      const locked = await unlock('open sesame', ip);
      assert.equal(locked.statusCode, 429, `even the right password waits, from ${ip}`);
      assert.equal(locked.headers['retry-after'], '1');
      assert.equal(json(locked).code, 'rate_limited');
    }
    const header = await ctx().app.inject({
      method: 'GET',
      url: `${path(l.url)}/view`,
      headers: { 'x-share-password': 'open sesame' },
      remoteAddress: '10.23.6.3',
    });
    assert.equal(header.statusCode, 429, 'the X-Share-Password header is throttled too');
    assert.ok(Number(header.headers['retry-after']) >= 1);
    ctx().clock.advance(1000);
    assert.equal((await unlock('open sesame', '10.23.6.2')).statusCode, 303, 'no permanent lockout');

    // Parallel guesses are reserved before hashing: 30 at once on a fresh link get 6 checked.
    const fresh = await link(ctx(), org, board.id, { password: 'open sesame' });
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => unlock(`p-${i}`, `10.23.7.${i}`, fresh.url)),
    );
    assert.equal(results.filter((r) => r.statusCode === 401).length, 6);
    assert.equal(results.filter((r) => r.statusCode === 429).length, 24);

    // One address guessing across many links is stopped on every link; other addresses are not.
    ctx().clock.advance(16 * 60_000);
    const links = [];
    for (let i = 0; i < 22; i++) links.push(await link(ctx(), org, board.id, { password: 'open sesame' }));
    for (let i = 0; i < 21; i++) assert.equal((await unlock('wrong', '10.23.8.8', links[i].url)).statusCode, 401);
    const sprayer = await unlock('open sesame', '10.23.8.8', links[21].url);
    assert.equal(sprayer.statusCode, 429);
    assert.ok(Number(sprayer.headers['retry-after']) >= 1);
    assert.equal((await unlock('open sesame', '10.23.8.9', links[21].url)).statusCode, 303);
  });

  it('serves renditions of exactly the assets the shared view shows', async () => {
    const org = await createTestOrg(ctx());
    const { board, assetIds } = await boardWithAssets(ctx(), org);
    const l = await link(ctx(), org, board.id);
    const view = json(await ctx().inject({ method: 'GET', url: `${path(l.url)}/view` }));
    const gallery = view.blocks.find((b: any) => b.type === 'gallery');
    const thumb = gallery.assets[0].renditions.imageThumb;
    assert.match(thumb, new RegExp(`^/shared/storyboards/${l.token}/assets/${gallery.assets[0].id}/imageThumb$`));
    const img = await ctx().inject({ method: 'GET', url: thumb });
    assert.equal(img.statusCode, 200, img.body);
    assert.match(img.headers['content-type'] as string, /^image\//);
    const meta = await sharp(img.rawPayload).metadata();
    assert.equal(meta.width, 200);
    assert.equal(img.headers['x-content-type-options'], 'nosniff');
    // An asset of the same organization that the board does not show, a made-up rendition, another token.
    const { objectId: elsewhere } = await uploadAsset(ctx(), org, await jpeg(), 'not-on-the-board.jpg');
    for (const url of [
      `${path(l.url)}/assets/${elsewhere}/imageThumb`,
      `${path(l.url)}/assets/${gallery.assets[0].id}/original`,
      `/shared/storyboards/${'B'.repeat(32)}/assets/${gallery.assets[0].id}/imageThumb`,
    ])
      assert.equal((await ctx().inject({ method: 'GET', url })).statusCode, 404, url);
    // Once the creator can no longer see an asset, neither can the link.
    assert.ok(assetIds.includes(gallery.assets[0].id));
    await ctx().deps.db.deleteFrom('asset_security').where('asset_id', '=', gallery.assets[0].id).execute();
    assert.equal((await ctx().inject({ method: 'GET', url: thumb })).statusCode, 404);
    const after = json(await ctx().inject({ method: 'GET', url: `${path(l.url)}/view` }));
    assert.equal(after.blocks.find((b: any) => b.type === 'gallery').assets.length, 2);
  });

  it("makes links only on a person's own sign-in: an API key of an administrator may not", async () => {
    const org = await createTestOrg(ctx());
    const board = await publishedBoard(ctx(), org);
    const key = await createKey(ctx(), org, { roleId: org.roles.administrator });
    const res = await ctx().inject({
      method: 'POST',
      url: `/v1/storyboards/${board.id}/links`,
      headers: { 'x-api-key': key.key },
      payload: {},
    });
    assert.equal(res.statusCode, 403, res.body);
    assert.match(json(res).message, /own sign-in/);
    // The same key may still read and share internally.
    assert.equal(
      (
        await ctx().inject({
          method: 'GET',
          url: `/v1/storyboards/${board.id}/view`,
          headers: { 'x-api-key': key.key },
        })
      ).statusCode,
      200,
    );
  });

  it('refuses bad link input with 400', async () => {
    const org = await createTestOrg(ctx());
    const board = await publishedBoard(ctx(), org);
    for (const [body, field] of [
      [{ expiresAt: new Date(ctx().clock.now() - 1000).toISOString() }, 'body.expiresAt'],
      [{ expiresAt: 'tomorrow' }, 'expiresAt'],
      [{ password: 'abc' }, 'password'],
    ] as const) {
      const res = await ctx().inject({
        method: 'POST',
        url: `/v1/storyboards/${board.id}/links`,
        headers: org.admin.headers,
        payload: body,
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.ok(res.body.includes(field), res.body);
    }
  });
});
