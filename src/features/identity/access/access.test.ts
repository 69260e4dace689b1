import assert from 'node:assert/strict';
import { it } from 'node:test';
import { PERMISSIONS } from '../../../core/authz/catalog.ts';
import { permissionsOn } from '../../../core/authz/authorize.ts';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser } from '../../../../test/helpers/factories.ts';
import { securitySuite } from '../../../../test/helpers/security.ts';
import { loadUserPrincipal } from '../principal.ts';

const NONE = '00000000-0000-4000-8000-000000000000';

forEachEngine('groups, roles, privileges, security templates', (ctx) => {
  it('GET /v1/security/groups lists the organization groups as {groupId, groupName}', async () => {
    const org = await createTestOrg(ctx());
    const res = await ctx().inject({ method: 'GET', url: '/v1/security/groups', headers: org.admin.headers });
    assert.equal(res.statusCode, 200);
    const groups = json<any[]>(res);
    assert.deepEqual(groups.map((g) => g.groupName).sort(), ['Administrators', 'Everyone']);
    assert.ok(groups.every((g) => typeof g.groupId === 'string'));
  });

  it('creates, reads, renames and deletes a group; names are unique per organization', async () => {
    const org = await createTestOrg(ctx());
    const other = await createTestOrg(ctx());
    const created = await ctx().inject({
      method: 'POST',
      url: '/v1/security/groups',
      headers: org.admin.headers,
      payload: { groupName: 'Marketing', description: 'Brand team' },
    });
    assert.equal(created.statusCode, 201, created.body);
    const group = json(created);
    assert.equal(group.groupName, 'Marketing');
    const dup = await ctx().inject({
      method: 'POST',
      url: '/v1/security/groups',
      headers: org.admin.headers,
      payload: { groupName: 'marketing' },
    });
    assert.equal(dup.statusCode, 409);
    assert.equal(json(dup).details[0].field, 'body.groupName');
    // Another organization may use the same name.
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: '/v1/security/groups',
          headers: other.admin.headers,
          payload: { groupName: 'Marketing' },
        })
      ).statusCode,
      201,
    );
    const renamed = await ctx().inject({
      method: 'PATCH',
      url: `/v1/security/groups/${group.groupId}`,
      headers: org.admin.headers,
      payload: { groupName: 'Brand' },
    });
    assert.equal(json(renamed).groupName, 'Brand');
    assert.equal(
      json(
        await ctx().inject({ method: 'GET', url: `/v1/security/groups/${group.groupId}`, headers: org.admin.headers }),
      ).groupName,
      'Brand',
    );
    const user = await createTestUser(ctx(), org, { groupIds: [group.groupId] });
    assert.equal(
      (
        await ctx().inject({
          method: 'DELETE',
          url: `/v1/security/groups/${group.groupId}`,
          headers: org.admin.headers,
        })
      ).statusCode,
      204,
    );
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/security/groups/${group.groupId}`, headers: org.admin.headers }))
        .statusCode,
      404,
    );
    assert.deepEqual(
      json(await ctx().inject({ method: 'GET', url: `/v1/user/${user.userId}`, headers: org.admin.headers })).groups,
      [],
    );
  });

  it('GET /v1/roles lists roles with id and name; roles are created, changed and deleted', async () => {
    const org = await createTestOrg(ctx());
    const roles = json<any[]>(await ctx().inject({ method: 'GET', url: '/v1/roles', headers: org.admin.headers }));
    assert.deepEqual(roles.map((r) => r.name).sort(), ['Administrator', 'Editor', 'Viewer']);
    assert.ok(roles.every((r) => r.id && r.name));
    const created = await ctx().inject({
      method: 'POST',
      url: '/v1/roles',
      headers: org.admin.headers,
      payload: { name: 'Uploader', privileges: ['upload', 'Download'] },
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.deepEqual(json(created).privileges.sort(), ['download', 'upload']);
    const badPrivilege = await ctx().inject({
      method: 'POST',
      url: '/v1/roles',
      headers: org.admin.headers,
      payload: { name: 'X', privileges: ['fly'] },
    });
    assert.equal(badPrivilege.statusCode, 400);
    assert.equal(json(badPrivilege).details[0].field, 'body.privileges');
    const changed = await ctx().inject({
      method: 'PATCH',
      url: `/v1/roles/${json(created).id}`,
      headers: org.admin.headers,
      payload: { privileges: ['upload'] },
    });
    assert.deepEqual(json(changed).privileges, ['upload']);
    // A role still held by a user cannot be deleted.
    const holder = await createTestUser(ctx(), org, { roleId: json(created).id });
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `/v1/roles/${json(created).id}`, headers: org.admin.headers }))
        .statusCode,
      409,
    );
    await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${holder.userId}`,
      headers: org.admin.headers,
      payload: { userRoleId: org.roles.viewer },
    });
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `/v1/roles/${json(created).id}`, headers: org.admin.headers }))
        .statusCode,
      204,
    );
  });

  it('a role manager cannot grant privileges they do not hold', async () => {
    const org = await createTestOrg(ctx());
    const manager = await createTestUser(ctx(), org, { privileges: ['role_management', 'upload'] });
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/roles',
      headers: manager.headers,
      payload: { name: 'Root', privileges: ['user_management'] },
    });
    assert.equal(res.statusCode, 403);
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: '/v1/roles',
          headers: manager.headers,
          payload: { name: 'Up', privileges: ['upload'] },
        })
      ).statusCode,
      201,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/roles/${org.roles.administrator}`,
          headers: manager.headers,
          payload: { name: 'Mine' },
        })
      ).statusCode,
      403,
    );
  });

  it('GET /v1/roles/privileges (and /v1/role/privileges) lists privileges, filterable', async () => {
    const org = await createTestOrg(ctx());
    const all = json(await ctx().inject({ method: 'GET', url: '/v1/roles/privileges', headers: org.admin.headers }));
    assert.ok(
      all.privileges.some((p: any) => p.name === 'User Management' && p.id === 'user_management' && p.enabled === true),
    );
    const limited = await createTestUser(ctx(), org, {
      privileges: ['security_template_management', 'role_management'],
    });
    const enabled = json(
      await ctx().inject({ method: 'GET', url: '/v1/role/privileges?filter=enabled', headers: limited.headers }),
    );
    assert.deepEqual(enabled.privileges.map((p: any) => p.id).sort(), [
      'role_management',
      'security_template_management',
    ]);
    const disabled = json(
      await ctx().inject({ method: 'GET', url: '/v1/roles/privileges?filter=disabled', headers: limited.headers }),
    );
    assert.equal(disabled.privileges.length, all.privileges.length - 2);
  });

  it('GET /v1/security/permissions lists the permissions with fixed ids', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const res = json(await ctx().inject({ method: 'GET', url: '/v1/security/permissions', headers: user.headers }));
    assert.deepEqual(
      res.permissions.map((p: any) => p.name),
      ['View', 'Download', 'Edit Metadata', 'Delete', 'Relationship', 'Share', 'Apply Security Template'],
    );
    assert.equal(res.permissions[0].permissionId, PERMISSIONS.view.id);
  });

  it('security templates: reference read shape, both write encodings, and effective permissions', async () => {
    const org = await createTestOrg(ctx());
    const list = json<any[]>(
      await ctx().inject({ method: 'GET', url: '/v1/security/template', headers: org.admin.headers }),
    );
    const def = list.find((t) => t.templateName === 'Default');
    assert.ok(def);
    const everyone = def.templateDocument.find((d: any) => d.groupId === org.groups.everyone);
    assert.deepEqual(
      everyone.groupPermissions.filter((p: any) => p.isPermitted).map((p: any) => p.permissionId),
      [PERMISSIONS.view.id, PERMISSIONS.download.id],
    );
    assert.deepEqual(
      def.securityDenormalized.find((d: any) => d.groupId === org.groups.everyone).permissions.sort(),
      [PERMISSIONS.view.id, PERMISSIONS.download.id].sort(),
    );

    const group = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/security/groups',
        headers: org.admin.headers,
        payload: { groupName: 'Editors' },
      }),
    );
    const created = await ctx().inject({
      method: 'POST',
      url: '/v1/security/template',
      headers: org.admin.headers,
      payload: {
        templateName: 'Press',
        templateDocument: [
          {
            groupId: group.groupId,
            groupPermissions: [
              { permissionId: PERMISSIONS.view.id, isPermitted: true },
              { permissionId: PERMISSIONS.edit_metadata.id, isPermitted: true },
              { permissionId: PERMISSIONS.delete.id, isPermitted: false },
            ],
          },
        ],
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const press = json(created);
    assert.deepEqual(press.securityDenormalized, [
      { groupId: group.groupId, permissions: [PERMISSIONS.view.id, PERMISSIONS.edit_metadata.id].sort() },
    ]);

    // The union over templates of what they grant to the caller's groups.
    const member = await createTestUser(ctx(), org, { groupIds: [group.groupId, org.groups.everyone] });
    const principal = (await loadUserPrincipal(ctx().deps.db, member.userId))!;
    assert.deepEqual([...(await permissionsOn(ctx().deps.db, principal, [press.templateId]))].sort(), [
      'edit_metadata',
      'view',
    ]);
    assert.deepEqual([...(await permissionsOn(ctx().deps.db, principal, [press.templateId, def.templateId]))].sort(), [
      'download',
      'edit_metadata',
      'view',
    ]);
    assert.deepEqual([...(await permissionsOn(ctx().deps.db, principal, []))], []);

    const updated = await ctx().inject({
      method: 'PATCH',
      url: `/v1/security/template/${press.templateId}`,
      headers: org.admin.headers,
      payload: { securityDenormalized: [{ groupId: group.groupId, permissions: [PERMISSIONS.share.id] }] },
    });
    assert.equal(updated.statusCode, 200, updated.body);
    assert.deepEqual([...(await permissionsOn(ctx().deps.db, principal, [press.templateId]))], ['share']);

    const unknownPermission = await ctx().inject({
      method: 'POST',
      url: '/v1/security/template',
      headers: org.admin.headers,
      payload: { templateName: 'Bad', securityDenormalized: [{ groupId: group.groupId, permissions: [NONE] }] },
    });
    assert.equal(unknownPermission.statusCode, 400);
    const unknownGroup = await ctx().inject({
      method: 'POST',
      url: '/v1/security/template',
      headers: org.admin.headers,
      payload: { templateName: 'Bad', securityDenormalized: [{ groupId: NONE, permissions: [PERMISSIONS.view.id] }] },
    });
    assert.equal(unknownGroup.statusCode, 400);
    const both = await ctx().inject({
      method: 'POST',
      url: '/v1/security/template',
      headers: org.admin.headers,
      payload: { templateName: 'Bad', securityDenormalized: [], templateDocument: [] },
    });
    assert.equal(both.statusCode, 400);
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: '/v1/security/template',
          headers: org.admin.headers,
          payload: { templateName: 'press' },
        })
      ).statusCode,
      409,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'DELETE',
          url: `/v1/security/template/${press.templateId}`,
          headers: org.admin.headers,
        })
      ).statusCode,
      204,
    );
    assert.deepEqual([...(await permissionsOn(ctx().deps.db, principal, [press.templateId]))], []);
  });

  it("an organization's groups cannot be granted in another organization's template", async () => {
    const org = await createTestOrg(ctx());
    const other = await createTestOrg(ctx());
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/security/template',
      headers: org.admin.headers,
      payload: {
        templateName: 'X',
        securityDenormalized: [{ groupId: other.groups.everyone, permissions: [PERMISSIONS.view.id] }],
      },
    });
    assert.equal(res.statusCode, 400);
  });

  const groupBody = () => ({ groupName: `g-${Math.random().toString(36).slice(2)}` });
  securitySuite(ctx, '/v1/security/groups', {
    method: 'GET',
    privileges: ['user_management'],
    prepare: () => ({ url: '/v1/security/groups' }),
  });
  securitySuite(ctx, '/v1/security/groups (create)', {
    method: 'POST',
    privileges: ['user_management'],
    prepare: () => ({ url: '/v1/security/groups', body: groupBody() }),
  });
  securitySuite(ctx, '/v1/security/groups/{id}', {
    method: 'GET',
    resource: true,
    privileges: ['user_management'],
    prepare: (_c, org) => ({ url: `/v1/security/groups/${org.groups.everyone}` }),
  });
  securitySuite(ctx, '/v1/security/groups/{id} (update)', {
    method: 'PATCH',
    resource: true,
    privileges: ['user_management'],
    prepare: (_c, org) => ({ url: `/v1/security/groups/${org.groups.everyone}`, body: { description: 'x' } }),
    ceiling: {
      privileges: ['user_management'],
      prepare: (_c, org) => ({
        url: `/v1/security/groups/${org.groups.administrators}`,
        body: { groupName: 'Nobody' },
      }),
    },
  });
  securitySuite(ctx, '/v1/security/groups/{id} (delete)', {
    method: 'DELETE',
    resource: true,
    privileges: ['user_management'],
    prepare: (_c, org) => ({ url: `/v1/security/groups/${org.groups.everyone}` }),
    ceiling: {
      privileges: ['user_management'],
      prepare: (_c, org) => ({ url: `/v1/security/groups/${org.groups.administrators}` }),
    },
  });
  securitySuite(ctx, '/v1/roles', { method: 'GET', prepare: () => ({ url: '/v1/roles' }) });
  securitySuite(ctx, '/v1/roles (create)', {
    method: 'POST',
    prepare: () => ({ url: '/v1/roles', body: { name: `r-${Math.random()}`, privileges: [] } }),
    ceiling: {
      privileges: ['role_management'],
      prepare: () => ({ url: '/v1/roles', body: { name: `r-${Math.random()}`, privileges: ['purge'] } }),
    },
  });
  securitySuite(ctx, '/v1/roles/{id}', {
    method: 'GET',
    resource: true,
    prepare: (_c, org) => ({ url: `/v1/roles/${org.roles.viewer}` }),
  });
  securitySuite(ctx, '/v1/roles/{id} (update)', {
    method: 'PATCH',
    resource: true,
    prepare: (_c, org) => ({ url: `/v1/roles/${org.roles.viewer}`, body: { description: 'x' } }),
    ceiling: {
      privileges: ['role_management'],
      prepare: (_c, org) => ({ url: `/v1/roles/${org.roles.editor}`, body: { description: 'x' } }),
    },
  });
  securitySuite(ctx, '/v1/roles/{id} (delete)', {
    method: 'DELETE',
    resource: true,
    prepare: (_c, org) => ({ url: `/v1/roles/${org.roles.viewer}` }),
    ceiling: {
      privileges: ['role_management'],
      prepare: async (c, org) => ({
        url: `/v1/roles/${(await c.inject({ method: 'POST', url: '/v1/roles', headers: org.admin.headers, payload: { name: `r-${Math.random()}`, privileges: ['purge'] } })).json().id}`,
      }),
    },
  });
  securitySuite(ctx, '/v1/roles/privileges', {
    method: 'GET',
    privileges: ['security_template_management', 'role_management'],
    prepare: () => ({ url: '/v1/roles/privileges' }),
  });
  securitySuite(ctx, '/v1/role/privileges', {
    method: 'GET',
    privileges: ['security_template_management', 'role_management'],
    prepare: () => ({ url: '/v1/role/privileges' }),
  });
  securitySuite(ctx, '/v1/security/permissions', {
    method: 'GET',
    prepare: () => ({ url: '/v1/security/permissions' }),
  });
  securitySuite(ctx, '/v1/security/template', {
    method: 'GET',
    privileges: ['security_template_management'],
    prepare: () => ({ url: '/v1/security/template' }),
  });
  securitySuite(ctx, '/v1/security/template (create)', {
    method: 'POST',
    privileges: ['security_template_management'],
    prepare: () => ({ url: '/v1/security/template', body: { templateName: `t-${Math.random()}` } }),
    ceiling: {
      privileges: ['security_template_management'],
      prepare: (_c, org) => ({
        url: '/v1/security/template',
        body: {
          templateName: `t-${Math.random()}`,
          securityDenormalized: [
            { groupId: org.groups.everyone, permissions: [PERMISSIONS.view.id, PERMISSIONS.delete.id] },
          ],
        },
      }),
    },
  });
  securitySuite(ctx, '/v1/security/template/{id}', {
    method: 'GET',
    resource: true,
    privileges: ['security_template_management'],
    prepare: (_c, org) => ({ url: `/v1/security/template/${org.defaultTemplateId}` }),
  });
  securitySuite(ctx, '/v1/security/template/{id} (update)', {
    method: 'PATCH',
    resource: true,
    privileges: ['security_template_management'],
    prepare: (_c, org) => ({ url: `/v1/security/template/${org.defaultTemplateId}`, body: { description: 'x' } }),
    ceiling: {
      privileges: ['security_template_management'],
      prepare: (_c, org) => ({
        url: `/v1/security/template/${org.defaultTemplateId}`,
        body: {
          securityDenormalized: [
            { groupId: org.groups.everyone, permissions: [PERMISSIONS.view.id, PERMISSIONS.delete.id] },
          ],
        },
      }),
    },
  });
  securitySuite(ctx, '/v1/security/template/{id} (delete)', {
    method: 'DELETE',
    resource: true,
    privileges: ['security_template_management'],
    prepare: (_c, org) => ({ url: `/v1/security/template/${org.defaultTemplateId}` }),
    ceiling: {
      privileges: ['security_template_management'],
      prepare: (_c, org) => ({ url: `/v1/security/template/${org.defaultTemplateId}` }),
    },
  });
});
