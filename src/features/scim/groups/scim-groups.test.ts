import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { roleWith } from '../../../../test/helpers/api-keys.ts';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../test/helpers/factories.ts';
import { assertScimError, patchOp, scim, SCIM, scimKey, userBody } from '../../../../test/helpers/scim.ts';

let counter = 0;
const unique = (prefix: string) => `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter++}`;
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';

forEachEngine('SCIM 2.0: groups (issue 29)', (ctx) => {
  let org: TestOrg;
  let key: string;
  const call = (...args: Parameters<typeof scim> extends [unknown, unknown, ...infer R] ? R : never) =>
    scim(ctx(), key, ...args);

  before(async () => {
    org = await createTestOrg(ctx());
    key = await scimKey(ctx(), org);
  });

  async function user(): Promise<{ id: string; userName: string }> {
    const res = await call('POST', '/Users', userBody(unique('member')));
    assert.equal(res.statusCode, 201, res.body);
    return json(res);
  }

  async function group(members: string[] = [], extra: Record<string, unknown> = {}) {
    const res = await call('POST', '/Groups', {
      schemas: [GROUP],
      displayName: unique('Team'),
      members: members.map((value) => ({ value })),
      ...extra,
    });
    assert.equal(res.statusCode, 201, res.body);
    return json(res);
  }

  const memberIds = (g: { members: { value: string }[] }) => g.members.map((m) => m.value).sort();

  it('POST /Groups creates a group with members: 201, Location, meta; GET and the users show it', async () => {
    const [a, b] = [await user(), await user()];
    const res = await call('POST', '/Groups', {
      schemas: [GROUP],
      displayName: 'Designers',
      externalId: 'okta-group-1',
      members: [{ value: a.id, display: a.userName }, { value: b.id }],
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.match(String(res.headers['content-type']), /^application\/scim\+json/);
    const g = json(res);
    assert.equal(res.headers.location, g.meta.location);
    assert.match(g.meta.location, new RegExp(`/scim/v2/Groups/${g.id}$`));
    assert.equal(g.meta.resourceType, 'Group');
    assert.deepEqual(g.schemas, [GROUP]);
    assert.equal(g.displayName, 'Designers');
    assert.equal(g.externalId, 'okta-group-1');
    assert.deepEqual(memberIds(g), [a.id, b.id].sort());
    assert.equal(g.members.find((m: { value: string }) => m.value === a.id).display, a.userName);
    assert.deepEqual(json(await call('GET', `/Groups/${g.id}`)), g);
    const member = json(await call('GET', `/Users/${a.id}`));
    assert.ok(
      member.groups.some((x: { value: string; display: string }) => x.value === g.id && x.display === 'Designers'),
    );
    // Tessera's own API sees the group and the membership.
    const profile = json(await ctx().inject({ method: 'GET', url: `/v1/user/${a.id}`, headers: org.admin.headers }));
    assert.ok(profile.groups.includes(g.id));
  });

  it('a taken displayName is 409 uniqueness; bad input is 400', async () => {
    const g = await group();
    assertScimError(await call('POST', '/Groups', { displayName: g.displayName.toUpperCase() }), 409, 'uniqueness');
    const other = await group();
    assertScimError(
      await call('PATCH', `/Groups/${other.id}`, patchOp({ op: 'replace', path: 'displayName', value: g.displayName })),
      409,
      'uniqueness',
    );
    assertScimError(await call('POST', '/Groups', { members: [] }), 400, 'invalidValue');
    assertScimError(await call('POST', '/Groups', { displayName: '   ' }), 400, 'invalidValue');
    assertScimError(
      await call('POST', '/Groups', {
        displayName: unique('x'),
        members: [{ value: '0190a4b2-0000-7000-8000-000000000000' }],
      }),
      400,
      'invalidValue',
    );
    assertScimError(
      await call('POST', '/Groups', { displayName: unique('x'), members: [{ display: 'x' }] }),
      400,
      'invalidValue',
    );
  });

  it('lists groups, filters by displayName and externalId, pages; other filters are 400 invalidFilter', async () => {
    const g = await group([], { externalId: unique('ext') });
    const find = async (filter: string) => {
      const res = await call('GET', `/Groups?filter=${encodeURIComponent(filter)}`);
      assert.equal(res.statusCode, 200, res.body);
      return json(res);
    };
    for (const filter of [
      `displayName eq "${g.displayName}"`,
      `displayname eq "${g.displayName.toLowerCase()}"`,
      `externalId eq "${g.externalId}"`,
      `displayName eq "${g.displayName}" and externalId eq "${g.externalId}"`,
    ]) {
      const list = await find(filter);
      assert.equal(list.totalResults, 1, filter);
      assert.equal(list.Resources[0].id, g.id);
    }
    assert.equal((await find('displayName eq "no such group"')).totalResults, 0);
    for (const filter of ['displayName sw "T"', 'members eq "x"', `displayName eq "${g.displayName}" or id eq "x"`])
      assertScimError(await call('GET', `/Groups?filter=${encodeURIComponent(filter)}`), 400, 'invalidFilter');
    const all = json(await call('GET', '/Groups'));
    assert.ok(all.totalResults >= 3, 'Administrators, Everyone and ours');
    const page = json(await call('GET', '/Groups?startIndex=2&count=1'));
    assert.equal(page.itemsPerPage, 1);
    assert.equal(page.startIndex, 2);
    assert.equal(page.Resources[0].id, all.Resources[1].id);
  });

  it('PATCH adds members, removes one with members[value eq "id"], and renames', async () => {
    const [a, b, c] = [await user(), await user(), await user()];
    const g = await group([a.id]);
    const added = await call(
      'PATCH',
      `/Groups/${g.id}`,
      patchOp({ op: 'add', path: 'members', value: [{ value: b.id }, { value: c.id }] }),
    );
    assert.equal(added.statusCode, 200, added.body);
    assert.deepEqual(memberIds(json(added)), [a.id, b.id, c.id].sort());
    const removed = await call(
      'PATCH',
      `/Groups/${g.id}`,
      patchOp({ op: 'remove', path: `members[value eq "${b.id}"]` }),
    );
    assert.deepEqual(memberIds(json(removed)), [a.id, c.id].sort());
    // Entra ID: capitalised ops, remove with a value list; displayName replaced.
    const entra = await call(
      'PATCH',
      `/Groups/${g.id}`,
      patchOp(
        { op: 'Remove', path: 'members', value: [{ value: a.id }] },
        { op: 'Replace', path: 'displayName', value: `${g.displayName} (renamed)` },
      ),
    );
    assert.equal(entra.statusCode, 200, entra.body);
    assert.deepEqual(memberIds(json(entra)), [c.id]);
    assert.equal(json(entra).displayName, `${g.displayName} (renamed)`);
    const profile = json(await ctx().inject({ method: 'GET', url: `/v1/user/${b.id}`, headers: org.admin.headers }));
    assert.ok(!profile.groups.includes(g.id));
  });

  it("PATCH in Okta's value-object form renames; replace members sets exactly them; remove members empties", async () => {
    const [a, b] = [await user(), await user()];
    const g = await group([a.id]);
    const okta = await call(
      'PATCH',
      `/Groups/${g.id}`,
      patchOp({ op: 'replace', value: { id: g.id, displayName: `${g.displayName}-okta` } }),
    );
    assert.equal(okta.statusCode, 200, okta.body);
    assert.equal(json(okta).displayName, `${g.displayName}-okta`);
    assert.deepEqual(memberIds(json(okta)), [a.id]);
    const replaced = await call(
      'PATCH',
      `/Groups/${g.id}`,
      patchOp({ op: 'replace', path: 'members', value: [{ value: b.id }] }),
    );
    assert.deepEqual(memberIds(json(replaced)), [b.id]);
    const emptied = await call('PATCH', `/Groups/${g.id}`, patchOp({ op: 'remove', path: 'members' }));
    assert.deepEqual(memberIds(json(emptied)), []);
  });

  it('bad group PatchOps are 400 with their scimType', async () => {
    const g = await group();
    const patch = (body: unknown) => call('PATCH', `/Groups/${g.id}`, body);
    assertScimError(await patch(patchOp({ op: 'add', path: 'members[value eq "x"]', value: [] })), 400, 'invalidPath');
    assertScimError(await patch(patchOp({ op: 'remove', path: 'members[display eq "x"]' })), 400, 'invalidPath');
    assertScimError(
      await patch(patchOp({ op: 'add', path: 'members', value: [{ value: 'not-a-user' }] })),
      400,
      'invalidValue',
    );
    assertScimError(await patch(patchOp({ op: 'remove', path: 'displayName' })), 400, 'mutability');
    assertScimError(await patch(patchOp({ op: 'copy', path: 'members' })), 400, 'invalidSyntax');
    assertScimError(await patch(patchOp({ op: 'remove' })), 400, 'noTarget');
  });

  it('PUT replaces name and members', async () => {
    const [a, b] = [await user(), await user()];
    const g = await group([a.id], { externalId: 'x1' });
    const res = await call('PUT', `/Groups/${g.id}`, {
      schemas: [GROUP],
      displayName: `${g.displayName}-put`,
      members: [{ value: b.id }],
    });
    assert.equal(res.statusCode, 200, res.body);
    const after = json(res);
    assert.equal(after.displayName, `${g.displayName}-put`);
    assert.deepEqual(memberIds(after), [b.id]);
    assert.equal(after.externalId, undefined);
  });

  it('DELETE removes the group (204, then 404); a deleted user drops out of its members', async () => {
    const [a, b] = [await user(), await user()];
    const g = await group([a.id, b.id]);
    assert.equal((await call('DELETE', `/Users/${b.id}`)).statusCode, 204);
    assert.deepEqual(memberIds(json(await call('GET', `/Groups/${g.id}`))), [a.id]);
    // A deleted user cannot be added back.
    assertScimError(
      await call('PATCH', `/Groups/${g.id}`, patchOp({ op: 'add', path: 'members', value: [{ value: b.id }] })),
      400,
      'invalidValue',
    );
    const res = await call('DELETE', `/Groups/${g.id}`);
    assert.equal(res.statusCode, 204, res.body);
    assertScimError(await call('GET', `/Groups/${g.id}`), 404);
    assertScimError(await call('DELETE', `/Groups/${g.id}`), 404);
    const profile = json(await ctx().inject({ method: 'GET', url: `/v1/user/${a.id}`, headers: org.admin.headers }));
    assert.ok(!profile.groups.includes(g.id));
    const tessera = await ctx().inject({
      method: 'GET',
      url: `/v1/security/groups/${g.id}`,
      headers: org.admin.headers,
    });
    assert.equal(tessera.statusCode, 404);
  });

  it("another organization's groups are 404 and never listed; its users cannot be made members", async () => {
    const g = await group();
    const other = await createTestOrg(ctx());
    const otherKey = await scimKey(ctx(), other);
    const as = (...args: Parameters<typeof call>) => scim(ctx(), otherKey, ...args);
    assertScimError(await as('GET', `/Groups/${g.id}`), 404);
    assertScimError(await as('PUT', `/Groups/${g.id}`, { displayName: 'x' }), 404);
    assertScimError(await as('PATCH', `/Groups/${g.id}`, patchOp({ op: 'remove', path: 'members' })), 404);
    assertScimError(await as('DELETE', `/Groups/${g.id}`), 404);
    const list = json(await as('GET', `/Groups?filter=${encodeURIComponent(`displayName eq "${g.displayName}"`)}`));
    assert.equal(list.totalResults, 0);
    const stranger = json(await as('POST', '/Users', userBody(unique('stranger'))));
    assertScimError(
      await call('PATCH', `/Groups/${g.id}`, patchOp({ op: 'add', path: 'members', value: [{ value: stranger.id }] })),
      400,
      'invalidValue',
    );
    assert.equal(json(await call('GET', `/Groups/${g.id}`)).displayName, g.displayName, 'untouched');
  });

  it('a key without User Management is 403; one that lacks what a group brings cannot staff it', async () => {
    const viewerKey = await scimKey(ctx(), org, org.roles.viewer);
    const g = await group();
    const as = (...args: Parameters<typeof call>) => scim(ctx(), viewerKey, ...args);
    assertScimError(await as('GET', '/Groups'), 403);
    assertScimError(await as('GET', `/Groups/${g.id}`), 403);
    assertScimError(await as('POST', '/Groups', { displayName: unique('no') }), 403);
    assertScimError(await as('PUT', `/Groups/${g.id}`, { displayName: 'x' }), 403);
    assertScimError(await as('PATCH', `/Groups/${g.id}`, patchOp({ op: 'remove', path: 'members' })), 403);
    assertScimError(await as('DELETE', `/Groups/${g.id}`), 403);
    // A key holding only User Management cannot take out of a group someone who holds more than it.
    const managerKey = await scimKey(ctx(), org, await roleWith(ctx(), org, ['user_management']));
    const res = await scim(
      ctx(),
      managerKey,
      'PATCH',
      `/Groups/${org.groups.administrators}`,
      patchOp({ op: 'remove', path: `members[value eq "${org.admin.userId}"]` }),
    );
    assertScimError(res, 403);
    const admins = json(await call('GET', `/Groups/${org.groups.administrators}`));
    assert.ok(memberIds(admins).includes(org.admin.userId));
  });

  it('the group operations are in /openapi.json under the SCIM tag', async () => {
    const doc = json(await ctx().inject({ method: 'GET', url: '/openapi.json' }));
    const paths = doc.paths as Record<string, Record<string, { operationId: string; tags: string[] }>>;
    const ops = [...Object.values(paths['/scim/v2/Groups']!), ...Object.values(paths['/scim/v2/Groups/{id}']!)];
    assert.deepEqual(ops.map((o) => o.operationId).sort(), [
      'ScimCreateGroup',
      'ScimDeleteGroup',
      'ScimGetGroup',
      'ScimListGroups',
      'ScimPatchGroup',
      'ScimReplaceGroup',
    ]);
    for (const op of ops) assert.deepEqual(op.tags, ['SCIM']);
  });

  it('the groups endpoints answer under /scim/v2 only with credentials', async () => {
    const res = await ctx().inject({ method: 'GET', url: `${SCIM}/Groups` });
    assertScimError(res, 401);
  });
});
