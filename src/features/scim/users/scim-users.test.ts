import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg } from '../../../../test/helpers/factories.ts';
import { impersonationHeaders, loginHeaders } from '../../../../test/helpers/auth.ts';
import { assertScimError, patchOp, scim, scimKey, SCIM, userBody } from '../../../../test/helpers/scim.ts';

const ME = '/v1/user';
let counter = 0;
const unique = (prefix: string) => `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter++}`;

forEachEngine('SCIM 2.0: users (issue 29)', (ctx) => {
  let org: TestOrg;
  let key: string;
  const call = (...args: Parameters<typeof scim> extends [unknown, unknown, ...infer R] ? R : never) =>
    scim(ctx(), key, ...args);

  before(async () => {
    org = await createTestOrg(ctx());
    key = await scimKey(ctx(), org);
  });

  async function created(userName = unique('ada'), extra: Record<string, unknown> = {}) {
    const res = await call('POST', '/Users', userBody(userName, extra));
    assert.equal(res.statusCode, 201, res.body);
    return json(res);
  }

  it('discovery: ServiceProviderConfig, ResourceTypes and Schemas say honestly what is supported', async () => {
    const config = await call('GET', '/ServiceProviderConfig');
    assert.equal(config.statusCode, 200, config.body);
    assert.match(String(config.headers['content-type']), /^application\/scim\+json/);
    const c = json(config);
    assert.deepEqual(c.schemas, ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig']);
    assert.equal(c.patch.supported, true);
    assert.equal(c.filter.supported, true);
    assert.equal(c.filter.maxResults, 200);
    assert.equal(c.bulk.supported, false);
    assert.equal(c.sort.supported, false);
    assert.equal(c.changePassword.supported, false);
    assert.equal(c.etag.supported, false);
    assert.equal(c.authenticationSchemes[0].type, 'oauthbearertoken');

    const types = json(await call('GET', '/ResourceTypes'));
    assert.deepEqual(
      types.Resources.map((r: { name: string; endpoint: string }) => [r.name, r.endpoint]),
      [
        ['User', '/Users'],
        ['Group', '/Groups'],
      ],
    );
    const schemas = json(await call('GET', '/Schemas'));
    const user = schemas.Resources.find((s: { id: string }) => s.id === 'urn:ietf:params:scim:schemas:core:2.0:User');
    assert.ok(user.attributes.some((a: { name: string; required: boolean }) => a.name === 'userName' && a.required));
    assert.ok(schemas.Resources.some((s: { id: string }) => s.id === 'urn:ietf:params:scim:schemas:core:2.0:Group'));
  });

  it('needs credentials: no key, a bad key and a revoked one are 401 in the SCIM error shape', async () => {
    const none = await ctx().inject({ method: 'GET', url: `${SCIM}/Users` });
    assertScimError(none, 401);
    assert.match(String(none.headers['www-authenticate']), /^Bearer/);
    assertScimError(await scim(ctx(), 'tsk_not-a-key', 'GET', '/Users'), 401);
  });

  it('POST /Users (Okta-shaped) creates a federated user: 201, Location, meta, and GET answers the same', async () => {
    const userName = `${unique('grace')}@example.test`;
    const res = await call('POST', '/Users', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName,
      name: { givenName: 'Grace', familyName: 'Hopper' },
      emails: [
        { primary: false, value: 'other@example.test', type: 'home' },
        { primary: true, value: 'grace@example.test', type: 'work' },
      ],
      displayName: 'Grace Hopper',
      locale: 'en-US',
      externalId: '00u1abcdOkta',
      groups: [],
      password: 'ignored-by-tessera',
      active: true,
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.match(String(res.headers['content-type']), /^application\/scim\+json/);
    const user = json(res);
    assert.equal(res.headers.location, user.meta.location);
    assert.match(user.meta.location, new RegExp(`/scim/v2/Users/${user.id}$`));
    assert.equal(user.meta.resourceType, 'User');
    assert.equal(user.meta.created, new Date(ctx().clock.now()).toISOString());
    assert.equal(user.meta.lastModified, user.meta.created);
    assert.deepEqual(user.schemas, ['urn:ietf:params:scim:schemas:core:2.0:User']);
    assert.equal(user.userName, userName);
    assert.deepEqual(user.name, { givenName: 'Grace', familyName: 'Hopper', formatted: 'Grace Hopper' });
    assert.deepEqual(user.emails, [{ value: 'grace@example.test', type: 'work', primary: true }]);
    assert.equal(user.active, true);
    assert.equal(user.externalId, '00u1abcdOkta');
    assert.deepEqual(
      user.groups.map((g: { value: string }) => g.value),
      [org.groups.everyone],
    );

    const got = await call('GET', `/Users/${user.id}`);
    assert.equal(got.statusCode, 200, got.body);
    assert.deepEqual(json(got), user);

    // Tessera's own API sees a federated person (no password) with the Viewer role.
    const profile = json(await ctx().inject({ method: 'GET', url: `/v1/user/${user.id}`, headers: org.admin.headers }));
    assert.equal(profile.accountType, 'federated');
    assert.equal(profile.roleId, org.roles.viewer);
    assert.equal(profile.emailId, 'grace@example.test');
  });

  it('accepts application/json too, and a user created inactive is disabled', async () => {
    const res = await call('POST', '/Users', userBody(unique('json'), { active: 'False' }), 'application/json');
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(json(res).active, false);
    const profile = json(
      await ctx().inject({ method: 'GET', url: `/v1/user/${json(res).id}`, headers: org.admin.headers }),
    );
    assert.equal(profile.status, 'disabled');
  });

  it('a taken userName is 409 uniqueness (any case, any organization)', async () => {
    const user = await created();
    assertScimError(await call('POST', '/Users', userBody(user.userName.toUpperCase())), 409, 'uniqueness');
    const other = await createTestOrg(ctx());
    const otherKey = await scimKey(ctx(), other);
    assertScimError(await scim(ctx(), otherKey, 'POST', '/Users', userBody(user.userName)), 409, 'uniqueness');
    // A rename onto a taken name too.
    const second = await created();
    assertScimError(
      await call('PATCH', `/Users/${second.id}`, patchOp({ op: 'replace', path: 'userName', value: user.userName })),
      409,
      'uniqueness',
    );
  });

  it('bad input is 400 naming the problem, never a 500', async () => {
    const { userName: _omit, ...noUserName } = userBody('x');
    assertScimError(await call('POST', '/Users', noUserName), 400, 'invalidValue');
    assertScimError(await call('POST', '/Users', userBody('has space')), 400, 'invalidValue');
    assertScimError(await call('POST', '/Users', userBody(unique('a'), { active: 'maybe' })), 400, 'invalidValue');
    assertScimError(
      await call('POST', '/Users', userBody(unique('a'), { emails: [{ value: 'not-an-address' }] })),
      400,
      'invalidValue',
    );
    assertScimError(await call('POST', '/Users', userBody(unique('a'), { emails: ['x'] })), 400, 'invalidValue');
    const broken = await ctx().inject({
      method: 'POST',
      url: `${SCIM}/Users`,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/scim+json' },
      payload: '{"userName": ',
    });
    assertScimError(broken, 400, 'invalidSyntax');
  });

  it('filters: userName, externalId and emails.value with eq, joined by and; anything else is 400 invalidFilter', async () => {
    const a = await created(unique('filter'), { externalId: unique('ext') });
    const find = async (filter: string) => {
      const res = await call('GET', `/Users?filter=${encodeURIComponent(filter)}`);
      assert.equal(res.statusCode, 200, `${filter}: ${res.body}`);
      const list = json(res);
      assert.deepEqual(list.schemas, ['urn:ietf:params:scim:api:messages:2.0:ListResponse']);
      return list;
    };
    for (const filter of [
      `userName eq "${a.userName}"`,
      `USERNAME Eq "${a.userName.toUpperCase()}"`,
      `urn:ietf:params:scim:schemas:core:2.0:User:userName eq "${a.userName}"`,
      `externalId eq "${a.externalId}"`,
      `emails.value eq "${a.emails[0].value}"`,
      `emails eq "${a.emails[0].value}"`,
      `userName eq "${a.userName}" and externalId eq "${a.externalId}"`,
      `id eq "${a.id}"`,
    ]) {
      const list = await find(filter);
      assert.equal(list.totalResults, 1, filter);
      assert.equal(list.Resources[0].id, a.id, filter);
      assert.equal(list.itemsPerPage, 1);
      assert.equal(list.startIndex, 1);
    }
    for (const filter of [
      'userName eq "nobody-at-all"',
      `userName eq "${a.userName}" and externalId eq "other"`,
      `externalId eq "${a.externalId.toUpperCase()}"`,
      `userName eq "${a.userName}" and userName eq "someone-else"`,
    ]) {
      const list = await find(filter);
      assert.equal(list.totalResults, 0, filter);
      assert.deepEqual(list.Resources, []);
    }
    for (const filter of [
      `userName co "${a.userName}"`,
      `userName eq "${a.userName}" or userName eq "x"`,
      'title eq "x"',
      'userName eq x',
      'userName eq "unterminated',
      '(userName eq "x")',
      'userName pr',
      '',
    ]) {
      assertScimError(await call('GET', `/Users?filter=${encodeURIComponent(filter)}`), 400, 'invalidFilter');
    }
  });

  it('pages with startIndex and count (ListResponse: totalResults, itemsPerPage, startIndex)', async () => {
    const fresh = await createTestOrg(ctx());
    const freshKey = await scimKey(ctx(), fresh);
    for (let i = 0; i < 3; i++) {
      const res = await scim(ctx(), freshKey, 'POST', '/Users', userBody(unique('page')));
      assert.equal(res.statusCode, 201, res.body);
    }
    // The administrator and three provisioned people; never the key's service account.
    const all = json(await scim(ctx(), freshKey, 'GET', '/Users'));
    assert.equal(all.totalResults, 4);
    assert.ok(all.Resources.every((u: { userName: string }) => !u.userName.startsWith('apikey')));
    const page = json(await scim(ctx(), freshKey, 'GET', '/Users?startIndex=2&count=2'));
    assert.equal(page.totalResults, 4);
    assert.equal(page.itemsPerPage, 2);
    assert.equal(page.startIndex, 2);
    assert.deepEqual(
      page.Resources.map((u: { id: string }) => u.id),
      all.Resources.slice(1, 3).map((u: { id: string }) => u.id),
    );
    const clamped = json(await scim(ctx(), freshKey, 'GET', '/Users?startIndex=0&count=-5'));
    assert.equal(clamped.startIndex, 1);
    assert.equal(clamped.itemsPerPage, 0);
    assert.equal(clamped.totalResults, 4);
    const beyond = json(await scim(ctx(), freshKey, 'GET', '/Users?startIndex=99'));
    assert.deepEqual(beyond.Resources, []);
    assertScimError(await scim(ctx(), freshKey, 'GET', '/Users?count=abc'), 400, 'invalidValue');
  });

  it('PUT /Users/{id} replaces the user', async () => {
    const user = await created(unique('put'), { externalId: 'before' });
    ctx().clock.advance(1000);
    const res = await call('PUT', `/Users/${user.id}`, {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: `${user.userName}-renamed`,
      name: { givenName: 'Augusta', familyName: 'King' },
      emails: [{ value: 'augusta@example.test', primary: true }],
      active: true,
    });
    assert.equal(res.statusCode, 200, res.body);
    const after = json(res);
    assert.equal(after.userName, `${user.userName}-renamed`);
    assert.deepEqual(after.name, { givenName: 'Augusta', familyName: 'King', formatted: 'Augusta King' });
    assert.equal(after.emails[0].value, 'augusta@example.test');
    assert.equal(after.externalId, undefined, 'an omitted externalId is cleared');
    assert.equal(after.meta.created, user.meta.created);
    assert.notEqual(after.meta.lastModified, user.meta.lastModified);
  });

  it("PATCH in Entra ID's form (capitalised op, string boolean) disables the user and their tokens stop working", async () => {
    const person = await createTestUser(ctx(), org);
    const token = await loginHeaders(ctx(), person);
    assert.equal((await ctx().inject({ method: 'GET', url: ME, headers: token })).statusCode, 200);
    const res = await call(
      'PATCH',
      `/Users/${person.userId}`,
      patchOp({ op: 'Replace', path: 'active', value: 'False' }),
    );
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).active, false);
    assert.equal((await ctx().inject({ method: 'GET', url: ME, headers: token })).statusCode, 401);
    // Re-enabled: they may sign in again, but the old token stays dead.
    const back = await call(
      'PATCH',
      `/Users/${person.userId}`,
      patchOp({ op: 'Replace', path: 'active', value: 'True' }),
    );
    assert.equal(json(back).active, true);
    assert.equal((await ctx().inject({ method: 'GET', url: ME, headers: token })).statusCode, 401);
    const fresh = await loginHeaders(ctx(), person);
    assert.equal((await ctx().inject({ method: 'GET', url: ME, headers: fresh })).statusCode, 200);
  });

  it('PATCH in Entra ID\'s attribute forms: name.givenName, emails[type eq "work"].value, userName, extension attributes ignored', async () => {
    const user = await created();
    const res = await call(
      'PATCH',
      `/Users/${user.id}`,
      patchOp(
        { op: 'Add', path: 'name.givenName', value: 'Augusta' },
        { op: 'Replace', path: 'emails[type eq "work"].value', value: 'augusta@example.test' },
        { op: 'Replace', path: 'userName', value: `${user.userName}.k` },
        { op: 'Add', path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department', value: 'R&D' },
        { op: 'Add', path: 'title', value: 'Countess' },
        { op: 'Replace', path: 'externalId', value: 'entra-object-id' },
      ),
    );
    assert.equal(res.statusCode, 200, res.body);
    const after = json(res);
    assert.equal(after.name.givenName, 'Augusta');
    assert.equal(after.name.familyName, 'Lovelace');
    assert.equal(after.emails[0].value, 'augusta@example.test');
    assert.equal(after.userName, `${user.userName}.k`);
    assert.equal(after.externalId, 'entra-object-id');
  });

  it("PATCH in Okta's value-object form without a path", async () => {
    const user = await created();
    const res = await call(
      'PATCH',
      `/Users/${user.id}`,
      patchOp({
        op: 'replace',
        value: {
          active: false,
          name: { familyName: 'Byron' },
          emails: [{ value: 'byron@example.test', primary: true }],
        },
      }),
    );
    assert.equal(res.statusCode, 200, res.body);
    const after = json(res);
    assert.equal(after.active, false);
    assert.deepEqual(after.name, { givenName: 'Ada', familyName: 'Byron', formatted: 'Ada Byron' });
    assert.equal(after.emails[0].value, 'byron@example.test');
    // Entra's no-path form with dotted keys and a string boolean.
    const entra = await call(
      'PATCH',
      `/Users/${user.id}`,
      patchOp({ op: 'Replace', value: { active: 'True', 'name.givenName': 'Annabella' } }),
    );
    assert.equal(json(entra).active, true);
    assert.equal(json(entra).name.givenName, 'Annabella');
    // remove clears optional attributes
    const removed = await call('PATCH', `/Users/${user.id}`, patchOp({ op: 'remove', path: 'name.familyName' }));
    assert.equal(json(removed).name.familyName, '');
  });

  it('bad PatchOps are 400 with their scimType', async () => {
    const user = await created();
    const patch = (body: unknown) => call('PATCH', `/Users/${user.id}`, body);
    assertScimError(await patch(patchOp({ op: 'merge', path: 'active', value: true })), 400, 'invalidSyntax');
    assertScimError(await patch(patchOp({ op: 'remove' })), 400, 'noTarget');
    assertScimError(await patch(patchOp({ op: 'remove', path: 'userName' })), 400, 'mutability');
    assertScimError(await patch(patchOp({ op: 'replace', path: 'active', value: 'yes' })), 400, 'invalidValue');
    assertScimError(await patch(patchOp({ op: 'replace', path: 'a b c', value: 1 })), 400, 'invalidPath');
    assertScimError(await patch(patchOp({ op: 'replace', path: 'id', value: 'x' })), 400, 'invalidPath');
    assertScimError(await patch(patchOp({ op: 'replace', value: 'not an object' })), 400, 'invalidSyntax');
    assertScimError(await patch({ schemas: [] }), 400, 'invalidValue');
    assertScimError(await patch({ Operations: [] }), 400, 'invalidValue');
  });

  it('DELETE /Users/{id} deprovisions: 204, then 404; their sessions end and they leave every group', async () => {
    const user = await created();
    const acting = await impersonationHeaders(ctx(), org.admin, user.userName);
    assert.equal((await ctx().inject({ method: 'GET', url: ME, headers: acting })).statusCode, 200);
    const res = await call('DELETE', `/Users/${user.id}`);
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.body, '');
    assertScimError(await call('GET', `/Users/${user.id}`), 404);
    assertScimError(
      await call('PATCH', `/Users/${user.id}`, patchOp({ op: 'replace', path: 'active', value: true })),
      404,
    );
    assertScimError(await call('DELETE', `/Users/${user.id}`), 404);
    const list = json(await call('GET', `/Users?filter=${encodeURIComponent(`userName eq "${user.userName}"`)}`));
    assert.equal(list.totalResults, 0);
    assert.equal((await ctx().inject({ method: 'GET', url: ME, headers: acting })).statusCode, 401);
    const profile = json(await ctx().inject({ method: 'GET', url: `/v1/user/${user.id}`, headers: org.admin.headers }));
    assert.equal(profile.status, 'disabled');
    assert.deepEqual(profile.groups, []);
    // The userName stays taken.
    assertScimError(await call('POST', '/Users', userBody(user.userName)), 409, 'uniqueness');
  });

  it("another organization's users are 404, and never listed", async () => {
    const user = await created();
    const other = await createTestOrg(ctx());
    const otherKey = await scimKey(ctx(), other);
    const as = (...args: Parameters<typeof call>) => scim(ctx(), otherKey, ...args);
    assertScimError(await as('GET', `/Users/${user.id}`), 404);
    assertScimError(await as('PUT', `/Users/${user.id}`, userBody(user.userName)), 404);
    assertScimError(
      await as('PATCH', `/Users/${user.id}`, patchOp({ op: 'replace', path: 'active', value: false })),
      404,
    );
    assertScimError(await as('DELETE', `/Users/${user.id}`), 404);
    const list = json(await as('GET', `/Users?filter=${encodeURIComponent(`userName eq "${user.userName}"`)}`));
    assert.equal(list.totalResults, 0);
    assert.equal(json(await as('GET', '/Users')).totalResults, 1, 'only their own administrator');
    assert.equal(json(await call('GET', `/Users/${user.id}`)).active, true, 'untouched');
  });

  it('a key without User Management is 403 on every user endpoint', async () => {
    const viewerKey = await scimKey(ctx(), org, org.roles.viewer);
    const user = await created();
    const as = (...args: Parameters<typeof call>) => scim(ctx(), viewerKey, ...args);
    assertScimError(await as('GET', '/Users'), 403);
    assertScimError(await as('GET', `/Users/${user.id}`), 403);
    assertScimError(await as('POST', '/Users', userBody(unique('no'))), 403);
    assertScimError(await as('PUT', `/Users/${user.id}`, userBody(user.userName)), 403);
    assertScimError(
      await as('PATCH', `/Users/${user.id}`, patchOp({ op: 'replace', path: 'active', value: false })),
      403,
    );
    assertScimError(await as('DELETE', `/Users/${user.id}`), 403);
  });

  it('a key may not disable someone holding more than it (the administrator)', async () => {
    const { roleWith } = await import('../../../../test/helpers/api-keys.ts');
    const managerRole = await roleWith(ctx(), org, ['user_management']);
    const managerKey = await scimKey(ctx(), org, managerRole);
    const res = await scim(
      ctx(),
      managerKey,
      'PATCH',
      `/Users/${org.admin.userId}`,
      patchOp({ op: 'replace', path: 'active', value: false }),
    );
    assertScimError(res, 403);
  });

  it('every SCIM route is in /openapi.json with an operationId and the SCIM tag', async () => {
    const doc = json(await ctx().inject({ method: 'GET', url: '/openapi.json' }));
    const ops = Object.entries(doc.paths as Record<string, Record<string, { operationId: string; tags: string[] }>>)
      .filter(([path]) => path.startsWith('/scim/v2/'))
      .flatMap(([path, methods]) => Object.entries(methods).map(([m, op]) => ({ path, m, op })));
    for (const { path, m, op } of ops) {
      assert.match(op.operationId, /^Scim/, `${m} ${path}`);
      assert.deepEqual(op.tags, ['SCIM'], `${m} ${path}`);
    }
    const ids = new Set(ops.map((o) => o.op.operationId));
    for (const id of [
      'ScimServiceProviderConfig',
      'ScimResourceTypes',
      'ScimSchemas',
      'ScimListUsers',
      'ScimCreateUser',
      'ScimGetUser',
      'ScimReplaceUser',
      'ScimPatchUser',
      'ScimDeleteUser',
    ])
      assert.ok(ids.has(id), id);
  });
});
