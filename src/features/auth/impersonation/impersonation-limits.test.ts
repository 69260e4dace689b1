import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { impersonationHeaders, loginHeaders } from '../../../../test/helpers/auth.ts';
import { CREATE } from '../../../../test/helpers/api-keys.ts';
import { createTestOrg, createTestUser } from '../../../../test/helpers/factories.ts';

// Issue 8, item 4: impersonation stays within its limits on every use.

forEachEngine('impersonation limits', (ctx) => {
  it('an impersonation token cannot create an API key, a user or an OAuth client', async () => {
    const org = await createTestOrg(ctx());
    const target = await createTestUser(ctx(), org, {
      privileges: ['api_key_management', 'user_management', 'security_template_management'],
    });
    const headers = await impersonationHeaders(ctx(), org.admin, target.username);
    const key = await ctx().inject({
      method: 'POST',
      url: CREATE,
      headers,
      payload: { name: 'k', roleId: org.roles.viewer },
    });
    assert.equal(key.statusCode, 403, key.body);
    assert.match(json(key).message, /own sign-in: an impersonation token cannot/);
    const client = await ctx().inject({
      method: 'POST',
      url: '/v1/oauth2/clients',
      headers,
      payload: { name: 'x', redirectUris: ['https://a.example/cb'] },
    });
    assert.equal(client.statusCode, 403, client.body);
    const user = await ctx().inject({
      method: 'POST',
      url: '/v1/user',
      headers,
      payload: {
        username: 'mallory',
        email: 'm@example.test',
        firstName: 'M',
        lastName: 'M',
        friendlyName: 'M',
        userRoleId: org.roles.viewer,
        accountType: 'local',
        password: 'Very-Long-Passw0rd!',
        groups: [org.groups.everyone],
      },
    });
    assert.equal(user.statusCode, 403, user.body);
    assert.equal(
      (await ctx().deps.db.selectFrom('api_keys').select('id').where('org_id', '=', org.orgId).execute()).length,
      0,
    );
  });

  it('demoting the impersonator, or promoting the target, ends the token at its next use', async () => {
    const org = await createTestOrg(ctx());
    const support = await createTestUser(ctx(), org, { privileges: ['impersonate', 'download', 'upload'] });
    const target = await createTestUser(ctx(), org, { privileges: ['download'] });
    const headers = await impersonationHeaders(ctx(), support, target.username);
    assert.equal((await ctx().inject({ method: 'GET', url: '/v1/user', headers })).statusCode, 200);
    // Promote the target beyond the impersonator.
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/user/${target.userId}`,
          headers: org.admin.headers,
          payload: { userRoleId: org.roles.editor },
        })
      ).statusCode,
      200,
    );
    const afterPromotion = await ctx().inject({ method: 'GET', url: '/v1/user', headers });
    assert.equal(afterPromotion.statusCode, 401, afterPromotion.body);

    const target2 = await createTestUser(ctx(), org, { privileges: ['download'] });
    const headers2 = await impersonationHeaders(ctx(), support, target2.username);
    assert.equal((await ctx().inject({ method: 'GET', url: '/v1/user', headers: headers2 })).statusCode, 200);
    // Demote the impersonator below the target while they keep Impersonate: the ceiling, not the privilege, ends it.
    const lesser = await ctx().inject({
      method: 'POST',
      url: '/v1/roles',
      headers: org.admin.headers,
      payload: { name: 'Impersonate without Download', privileges: ['impersonate', 'upload'] },
    });
    assert.equal(lesser.statusCode, 201, lesser.body);
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/user/${support.userId}`,
          headers: org.admin.headers,
          payload: { userRoleId: json(lesser).id },
        })
      ).statusCode,
      200,
    );
    const afterDemotion = await ctx().inject({ method: 'GET', url: '/v1/user', headers: headers2 });
    assert.equal(afterDemotion.statusCode, 401, afterDemotion.body);
    assert.match(json(afterDemotion).message, /impersonation has ended: the user now holds/);

    // Take Impersonate away from the impersonator.
    const target3 = await createTestUser(ctx(), org, { privileges: [] });
    const supportAgain = await createTestUser(ctx(), org, { privileges: ['impersonate'] });
    const headers3 = await impersonationHeaders(ctx(), supportAgain, target3.username);
    assert.equal((await ctx().inject({ method: 'GET', url: '/v1/user', headers: headers3 })).statusCode, 200);
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/user/${supportAgain.userId}`,
          headers: org.admin.headers,
          payload: { userRoleId: org.roles.viewer },
        })
      ).statusCode,
      200,
    );
    assert.equal((await ctx().inject({ method: 'GET', url: '/v1/user', headers: headers3 })).statusCode, 401);
  });

  it('group memberships count: Support cannot impersonate a Viewer who is in Administrators', async () => {
    const org = await createTestOrg(ctx());
    const support = await createTestUser(ctx(), org, { privileges: ['impersonate', 'download', 'view_storyboards'] });
    const viewer = await createTestUser(ctx(), org, {
      roleId: org.roles.viewer,
      groupIds: [org.groups.everyone, org.groups.administrators],
    });
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/auth/impersonate',
      headers: await loginHeaders(ctx(), support),
      payload: { username: viewer.username },
    });
    assert.equal(res.statusCode, 403, res.body);
    // And a token issued before the Viewer joined Administrators ends when they do.
    const plain = await createTestUser(ctx(), org, { roleId: org.roles.viewer });
    const headers = await impersonationHeaders(ctx(), support, plain.username);
    assert.equal((await ctx().inject({ method: 'GET', url: '/v1/user', headers })).statusCode, 200);
    const join = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${plain.userId}/add-to-group`,
      headers: org.admin.headers,
      payload: { userGroupId: org.groups.administrators },
    });
    assert.equal(join.statusCode, 200, join.body);
    assert.equal((await ctx().inject({ method: 'GET', url: '/v1/user', headers })).statusCode, 401);
  });

  it('every audit row and event caused while impersonating records the impersonator', async () => {
    const org = await createTestOrg(ctx());
    const target = await createTestUser(ctx(), org, { privileges: ['user_management'] });
    const headers = await impersonationHeaders(ctx(), org.admin, target.username);
    const res = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${target.userId}`,
      headers,
      payload: { firstName: 'Changed' },
    });
    assert.equal(res.statusCode, 200, res.body);
    const row = await ctx()
      .deps.db.selectFrom('audit_log')
      .selectAll()
      .where('org_id', '=', org.orgId)
      .where('action', '=', 'user.updated')
      .where('target_id', '=', target.userId)
      .executeTakeFirstOrThrow();
    assert.equal(row.actor_id, target.userId);
    assert.equal(row.impersonator_id, org.admin.userId);
    assert.equal(JSON.parse(row.data).impersonatorId, org.admin.userId);
    const events = await ctx()
      .deps.db.selectFrom('events')
      .select('body')
      .where('org_id', '=', org.orgId)
      .where('type', '=', 'user.updated')
      .execute();
    assert.equal(events.length, 1);
    const body = JSON.parse(events[0]!.body);
    assert.equal(body.event.user.id, target.userId);
    assert.equal(body.event.impersonatorId, org.admin.userId);
    // Not impersonating: no impersonator recorded.
    await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${target.userId}`,
      headers: org.admin.headers,
      payload: { firstName: 'Again' },
    });
    const rows = await ctx()
      .deps.db.selectFrom('audit_log')
      .selectAll()
      .where('org_id', '=', org.orgId)
      .where('action', '=', 'user.updated')
      .execute();
    assert.deepEqual(rows.map((r) => r.impersonator_id).sort(), [org.admin.userId, null].sort());
  });
});
