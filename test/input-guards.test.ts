import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json } from './helpers/context.ts';
import { LIST } from './helpers/api-keys.ts';
import { createTestOrg } from './helpers/factories.ts';

// Issue 8, item 9: input no column can hold is a 400 naming the field on both engines (PostgreSQL answered 500).

function assertField(res: { statusCode: number; body: string }, field: string, pattern: RegExp): void {
  assert.equal(res.statusCode, 400, res.body);
  const body = JSON.parse(res.body);
  assert.equal(body.code, 'validation_failed');
  assert.equal(body.details[0].field, field, res.body);
  assert.match(body.details[0].message, pattern);
}

forEachEngine('input no column can hold', (ctx) => {
  it('a NUL character in the unauthenticated login body is a 400 naming the field', async () => {
    assertField(
      await ctx().inject({
        method: 'POST',
        url: '/v1/auth/token',
        payload: { username: 'ad\u0000min', password: 'whatever-it-is' },
      }),
      'body.username',
      /NUL/,
    );
    assertField(
      await ctx().inject({
        method: 'POST',
        url: '/v1/auth/token',
        payload: { username: 'admin', password: 'x\u0000y-long-enough' },
      }),
      'body.password',
      /NUL/,
    );
  });

  it('a NUL character in the OAuth login form is a 400, not a 500', async () => {
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/oauth2/authorize',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ username: 'a\u0000b', password: 'p', csrf: 'x', decision: 'allow' }).toString(),
    });
    assertField(res, 'body.username', /NUL/);
  });

  it('a NUL character in names and profile fields is a 400 naming the field', async () => {
    const org = await createTestOrg(ctx());
    assertField(
      await ctx().inject({
        method: 'PATCH',
        url: `/v1/user/${org.admin.userId}`,
        headers: org.admin.headers,
        payload: { firstName: 'A\u0000' },
      }),
      'body.firstName',
      /NUL/,
    );
    assertField(
      await ctx().inject({
        method: 'POST',
        url: '/v1/security/groups',
        headers: org.admin.headers,
        payload: { groupName: 'G\u0000' },
      }),
      'body.groupName',
      /NUL/,
    );
    assertField(
      await ctx().inject({
        method: 'POST',
        url: '/v1/roles',
        headers: org.admin.headers,
        payload: { name: 'R', privileges: ['up\u0000load'] },
      }),
      'body.privileges.0',
      /NUL/,
    );
    assertField(
      await ctx().inject({ method: 'GET', url: '/v1/roles/privileges?filter=en%00abled', headers: org.admin.headers }),
      'query.filter',
      /NUL/,
    );
  });

  it('list-api-keys cursors holding fractions or huge numbers are refused', async () => {
    const org = await createTestOrg(ctx());
    for (const values of [
      [1.5, '01a2082c-5ea1-7911-b418-8f733df68092'],
      [1e300, 'x'],
      [2 ** 60, 'x'],
      [1, 'a\u0000b'],
    ]) {
      const cursor = Buffer.from(JSON.stringify(values)).toString('base64url');
      assertField(
        await ctx().inject({ method: 'POST', url: LIST, headers: org.admin.headers, payload: { pageCursor: cursor } }),
        'body.pageCursor',
        /cursor/,
      );
    }
  });

  it('recover with until: 1e300 (or since beyond 2^53) is a 400 naming the field', async () => {
    const org = await createTestOrg(ctx());
    const created = await ctx().inject({
      method: 'POST',
      url: '/webhooks/endpoint',
      headers: org.admin.headers,
      payload: [{ description: 'Guard', url: 'http://127.0.0.1:9/hook', eventTypes: ['user.*'] }],
    });
    assert.ok(created.statusCode < 300, created.body);
    const id = json(created)[0]?.id ?? json(created).id ?? json(created).endpoints?.[0]?.id;
    assert.ok(id, created.body);
    assertField(
      await ctx().inject({
        method: 'POST',
        url: `/webhooks/endpoint/${id}/recover`,
        headers: org.admin.headers,
        payload: { since: 0, until: 1e300 },
      }),
      'body.until',
      /out of range/,
    );
    assertField(
      await ctx().inject({
        method: 'POST',
        url: `/webhooks/endpoint/${id}/recover`,
        headers: org.admin.headers,
        payload: { since: 2 ** 60 },
      }),
      'body.since',
      /out of range/,
    );
  });

  it('query numbers no column can hold (1e999, beyond 2^53) are a 400 naming the parameter, not a 500', async () => {
    const org = await createTestOrg(ctx());
    const cases = [
      ['/v1/metadata/templates?limit=1e999', 'query.limit'],
      ['/v1/metadata/templates?from=99999999999999999999', 'query.from'],
      ['/v1/metadata/groups?from=1e999', 'query.from'],
      [`/v1/user/search/${org.admin.username}?limit=1e999`, 'query.limit'],
      ['/v1/saved-searches?from=99999999999999999999', 'query.from'],
      ['/v1/asset/recycle-bin?limit=1e999', 'query.limit'],
      ['/v1/storyboards?limit=1e999', 'query.limit'],
      ['/webhooks/endpoint/list?limit=1e999', 'query.limit'],
    ] as const;
    for (const [url, field] of cases)
      assertField(await ctx().inject({ method: 'GET', url, headers: org.admin.headers }), field, /out of range/);
    // In range they are served as before.
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/metadata/templates?limit=5&from=0', headers: org.admin.headers }))
        .statusCode,
      200,
    );
  });

  it('a JSON number that parses as Infinity (1e999) is a 400 naming the field', async () => {
    const org = await createTestOrg(ctx());
    const created = await ctx().inject({
      method: 'POST',
      url: '/webhooks/endpoint',
      headers: org.admin.headers,
      payload: [{ description: 'Guard', url: 'http://127.0.0.1:9/hook', eventTypes: ['user.*'] }],
    });
    const id = json(created)[0]?.id ?? json(created).id ?? json(created).endpoints?.[0]?.id;
    assert.ok(id, created.body);
    const res = await ctx().inject({
      method: 'POST',
      url: `/webhooks/endpoint/${id}/recover`,
      headers: { ...org.admin.headers, 'content-type': 'application/json' },
      payload: '{"since":0,"until":1e999}',
    });
    assertField(res, 'body.until', /out of range/);
  });

  it('a body number written as text ("1e999") is checked after validation turns it into a number', async () => {
    const org = await createTestOrg(ctx());
    const endpoint = { description: 'Guard', url: 'http://127.0.0.1:9/hook', eventTypes: ['user.*'] };
    assertField(
      await ctx().inject({
        method: 'POST',
        url: '/webhooks/endpoint',
        headers: org.admin.headers,
        payload: [{ ...endpoint, timeoutSeconds: '1e999' }],
      }),
      'body.0.timeoutSeconds',
      /out of range/,
    );
    const created = await ctx().inject({
      method: 'POST',
      url: '/webhooks/endpoint',
      headers: org.admin.headers,
      payload: [endpoint],
    });
    const id = json(created)[0]?.id ?? json(created).id ?? json(created).endpoints?.[0]?.id;
    for (const field of ['timeoutSeconds', 'rateLimit']) {
      assertField(
        await ctx().inject({
          method: 'PATCH',
          url: `/webhooks/endpoint/${id}`,
          headers: org.admin.headers,
          payload: { [field]: '-1e999' },
        }),
        `body.${field}`,
        /out of range/,
      );
    }
    // Nothing was stored: the endpoint still reads back (an Infinity stored on SQLite broke every later read).
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/webhooks/endpoint/${id}`, headers: org.admin.headers })).statusCode,
      200,
    );
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/webhooks/endpoint/list', headers: org.admin.headers })).statusCode,
      200,
    );
  });
});
