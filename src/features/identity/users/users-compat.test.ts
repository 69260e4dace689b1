import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser } from '../../../../test/helpers/factories.ts';
import { securitySuite } from '../../../../test/helpers/security.ts';

forEachEngine('identity: what clients of the reference send', (ctx) => {
  it('PATCH /v1/user/{id} with userRoleId and userRoleName naming the same role (the reference example) is accepted', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const same = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${user.userId}`,
      headers: org.admin.headers,
      payload: { userRoleId: org.roles.editor, userRoleName: 'editor' },
    });
    assert.equal(same.statusCode, 200, same.body);
    assert.equal(json(same).roleId, org.roles.editor);
    const cased = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${user.userId}`,
      headers: org.admin.headers,
      payload: { userRoleId: org.roles.viewer, userRoleName: 'Viewer' },
    });
    assert.equal(cased.statusCode, 200, cased.body);
    assert.equal(json(cased).roleId, org.roles.viewer);
    const differ = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${user.userId}`,
      headers: org.admin.headers,
      payload: { userRoleId: org.roles.editor, userRoleName: 'Viewer' },
    });
    assert.equal(differ.statusCode, 400, differ.body);
    assert.equal(json(differ).details[0].field, 'body.userRoleName');
    const after = await ctx().inject({ method: 'GET', url: `/v1/user/${user.userId}`, headers: org.admin.headers });
    assert.equal(json(after).roleId, org.roles.viewer, 'a refused change changed nothing');
  });

  it('GET /v1/user/search/{searchText} finds people by any profile field, group or role, case-insensitively', async () => {
    const org = await createTestOrg(ctx());
    const other = await createTestOrg(ctx());
    const group = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/security/groups',
        headers: org.admin.headers,
        payload: { groupName: 'Zebra Crossing' },
      }),
    );
    const ada = await createTestUser(ctx(), org, {
      roleId: org.roles.editor,
      groupIds: [org.groups.everyone, group.id ?? group.groupId],
    });
    await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${ada.userId}`,
      headers: org.admin.headers,
      payload: { firstName: 'Augusta', lastName: 'Lovelace', company: 'Analytical Engines Ltd', country: 'Narnia' },
    });
    const bob = await createTestUser(ctx(), org);
    const stranger = await createTestUser(ctx(), other);
    await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${stranger.userId}`,
      headers: other.admin.headers,
      payload: { lastName: 'Lovelace' },
    });
    const search = (text: string, query = '') =>
      ctx().inject({
        method: 'GET',
        url: `/v1/user/search/${encodeURIComponent(text)}${query}`,
        headers: org.admin.headers,
      });
    for (const text of [
      'lovelace',
      // Not a word hexadecimal letters can spell: the factories' user names are `user-<hex>` (a search
      // for "ADA" matched one of them about once in 500 runs).
      'AUGUSTA',
      'analytical engines',
      'narnia',
      'zebra',
      ada.username.toUpperCase(),
      `${ada.username}@example`,
    ]) {
      const res = await search(text);
      assert.equal(res.statusCode, 200, res.body);
      const body = json(res);
      assert.equal(body.status, 'success');
      assert.deepEqual(
        body.data.map((u: { userId: string }) => u.userId),
        [ada.userId],
        text,
      );
      assert.equal(body.count, 1);
    }
    const byRole = json(await search('editor')).data.map((u: { userId: string }) => u.userId);
    assert.ok(byRole.includes(ada.userId) && !byRole.includes(bob.userId));
    const all = json(await search('*'));
    assert.equal(all.count, 3, 'admin, ada and bob; never the other organization');
    assert.ok(!all.data.some((u: { userId: string }) => u.userId === stranger.userId));
    // LIKE wildcards in the text are literal.
    assert.equal(json(await search('%')).count, 0);
    assert.equal(json(await search('_')).count, 0);
    // Paging with from/limit (strings in the query, as the reference sends them).
    const page1 = json(await search('*', '?from=0&limit=2'));
    const page2 = json(await search('*', '?from=2&limit=2'));
    assert.equal(page1.data.length, 2);
    assert.equal(page2.data.length, 1);
    assert.equal(page1.count, 3);
    assert.equal(new Set([...page1.data, ...page2.data].map((u: { userId: string }) => u.userId)).size, 3);
    const tooMany = await search('*', '?limit=101');
    assert.equal(tooMany.statusCode, 400);
    assert.equal(json(tooMany).details[0].field, 'query.limit');
  });

  it('people search with an API key lists no service accounts', async () => {
    const org = await createTestOrg(ctx());
    const key = json(
      await ctx().inject({
        method: 'POST',
        url: '/api/v1/api-key/create-api-key',
        headers: org.admin.headers,
        payload: { name: 'search', roleId: org.roles.administrator },
      }),
    );
    const res = await ctx().inject({ method: 'GET', url: '/v1/user/search/*', headers: { 'x-api-key': key.key } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      json(res).data.map((u: { accountType: string }) => u.accountType),
      ['local'],
    );
  });

  securitySuite(ctx, '/v1/user/search/{searchText}', {
    method: 'GET',
    privileges: ['user_management'],
    prepare: () => ({ url: '/v1/user/search/*' }),
  });
});
