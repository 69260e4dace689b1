// A user of organization A can neither read nor change anything of organization B, and gets 404
// exactly as for something that does not exist.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json } from './helpers/context.ts';
import { createTestOrg, createTestUser } from './helpers/factories.ts';

forEachEngine('tenant isolation', (ctx) => {
  it('every identity resource of another organization is 404, and nothing of it changes', async () => {
    const a = await createTestOrg(ctx());
    const b = await createTestOrg(ctx());
    const bUser = await createTestUser(ctx(), b);
    const requests: { method: 'GET' | 'PATCH' | 'DELETE'; url: string; payload?: unknown }[] = [
      { method: 'GET', url: `/v1/user/${bUser.userId}` },
      { method: 'PATCH', url: `/v1/user/${bUser.userId}`, payload: { firstName: 'Hacked' } },
      { method: 'PATCH', url: `/v1/user/${bUser.userId}/add-to-group`, payload: { userGroupId: a.groups.everyone } },
      {
        method: 'PATCH',
        url: `/v1/user/${bUser.userId}/remove-from-group`,
        payload: { userGroupId: b.groups.everyone },
      },
      { method: 'GET', url: `/v1/security/groups/${b.groups.everyone}` },
      { method: 'PATCH', url: `/v1/security/groups/${b.groups.everyone}`, payload: { groupName: 'Hacked' } },
      { method: 'DELETE', url: `/v1/security/groups/${b.groups.everyone}` },
      { method: 'GET', url: `/v1/roles/${b.roles.viewer}` },
      { method: 'PATCH', url: `/v1/roles/${b.roles.viewer}`, payload: { name: 'Hacked' } },
      { method: 'DELETE', url: `/v1/roles/${b.roles.editor}` },
      { method: 'GET', url: `/v1/security/template/${b.defaultTemplateId}` },
      { method: 'PATCH', url: `/v1/security/template/${b.defaultTemplateId}`, payload: { templateName: 'Hacked' } },
      { method: 'DELETE', url: `/v1/security/template/${b.defaultTemplateId}` },
    ];
    for (const request of requests) {
      const res = await ctx().inject({ ...request, headers: a.admin.headers });
      assert.equal(res.statusCode, 404, `${request.method} ${request.url}: ${res.body}`);
    }
    // B's things are intact.
    const user = json(await ctx().inject({ method: 'GET', url: `/v1/user/${bUser.userId}`, headers: b.admin.headers }));
    assert.equal(user.firstName, 'Test');
    assert.deepEqual(user.groups, [b.groups.everyone]);
    const groups = json<any[]>(
      await ctx().inject({ method: 'GET', url: '/v1/security/groups', headers: b.admin.headers }),
    );
    assert.deepEqual(groups.map((g) => g.groupName).sort(), ['Administrators', 'Everyone']);
    const roles = json<any[]>(await ctx().inject({ method: 'GET', url: '/v1/roles', headers: b.admin.headers }));
    for (const name of ['Administrator', 'Editor', 'Viewer'])
      assert.ok(
        roles.some((r) => r.name === name),
        name,
      );
    assert.ok(!roles.some((r) => r.name === 'Hacked'));
    const templates = json<any[]>(
      await ctx().inject({ method: 'GET', url: '/v1/security/template', headers: b.admin.headers }),
    );
    assert.deepEqual(
      templates.map((t) => t.templateName),
      ['Default'],
    );
  });

  it("lists show only the caller's organization", async () => {
    const a = await createTestOrg(ctx());
    const b = await createTestOrg(ctx());
    const groups = json<any[]>(
      await ctx().inject({ method: 'GET', url: '/v1/security/groups', headers: a.admin.headers }),
    );
    assert.ok(!groups.some((g) => g.groupId === b.groups.everyone));
    const templates = json<any[]>(
      await ctx().inject({ method: 'GET', url: '/v1/security/template', headers: a.admin.headers }),
    );
    assert.deepEqual(
      templates.map((t) => t.templateId),
      [a.defaultTemplateId],
    );
    const roles = json<any[]>(await ctx().inject({ method: 'GET', url: '/v1/roles', headers: a.admin.headers }));
    assert.ok(!roles.some((r) => r.id === b.roles.viewer));
  });

  it("another organization's roles and groups cannot be assigned", async () => {
    const a = await createTestOrg(ctx());
    const b = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), a);
    const role = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${user.userId}`,
      headers: a.admin.headers,
      payload: { userRoleId: b.roles.viewer },
    });
    assert.equal(role.statusCode, 400);
    const group = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${user.userId}`,
      headers: a.admin.headers,
      payload: { groups: [b.groups.everyone] },
    });
    assert.equal(group.statusCode, 400);
    const add = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${user.userId}/add-to-group`,
      headers: a.admin.headers,
      payload: { userGroupId: b.groups.administrators },
    });
    assert.equal(add.statusCode, 400);
  });

  it('a user without role privileges gets 403 on role administration', async () => {
    const org = await createTestOrg(ctx());
    const nobody = await createTestUser(ctx(), org, { privileges: ['upload'] });
    assert.equal((await ctx().inject({ method: 'GET', url: '/v1/roles', headers: nobody.headers })).statusCode, 403);
    const roleManager = await createTestUser(ctx(), org, { privileges: ['role_management'] });
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/roles', headers: roleManager.headers })).statusCode,
      200,
    );
  });
});
