import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser } from '../../../../test/helpers/factories.ts';

// Issue 8, item 10: concurrent membership changes never answer 500, and what changes nothing records nothing.

forEachEngine('group membership races', (ctx) => {
  it('ten parallel add-to-group calls: one adds, nine get 409, one audit row and one event', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const group = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/security/groups',
        headers: org.admin.headers,
        payload: { groupName: 'Race' },
      }),
    );
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        ctx().inject({
          method: 'PATCH',
          url: `/v1/user/${user.userId}/add-to-group`,
          headers: org.admin.headers,
          payload: { userGroupId: group.groupId },
        }),
      ),
    );
    const codes = results.map((r) => r.statusCode).sort();
    assert.deepEqual(codes, [200, ...Array(9).fill(409)], results.map((r) => r.body).join('\n'));
    const audits = await ctx()
      .deps.db.selectFrom('audit_log')
      .select('id')
      .where('org_id', '=', org.orgId)
      .where('action', '=', 'user.group_added')
      .execute();
    assert.equal(audits.length, 1);
    const events = await ctx()
      .deps.db.selectFrom('events')
      .select('id')
      .where('org_id', '=', org.orgId)
      .where('type', '=', 'user.updated')
      .execute();
    assert.equal(events.length, 1);

    const removed = await Promise.all(
      Array.from({ length: 6 }, () =>
        ctx().inject({
          method: 'PATCH',
          url: `/v1/user/${user.userId}/remove-from-group`,
          headers: org.admin.headers,
          payload: { userGroupId: group.groupId },
        }),
      ),
    );
    assert.deepEqual(removed.map((r) => r.statusCode).sort(), [200, 409, 409, 409, 409, 409]);
    assert.equal(
      (
        await ctx()
          .deps.db.selectFrom('audit_log')
          .select('id')
          .where('org_id', '=', org.orgId)
          .where('action', '=', 'user.group_removed')
          .execute()
      ).length,
      1,
    );
  });

  it('parallel PATCHes setting the same groups: no 500, one change recorded', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        ctx().inject({
          method: 'PATCH',
          url: `/v1/user/${user.userId}`,
          headers: org.admin.headers,
          payload: { groups: [org.groups.everyone, org.groups.administrators] },
        }),
      ),
    );
    for (const r of results) assert.ok(r.statusCode === 200 || r.statusCode === 409, `${r.statusCode} ${r.body}`);
    assert.equal(
      (
        await ctx()
          .deps.db.selectFrom('audit_log')
          .select('id')
          .where('org_id', '=', org.orgId)
          .where('action', '=', 'user.updated')
          .execute()
      ).length,
      1,
    );
    assert.equal(
      (
        await ctx()
          .deps.db.selectFrom('events')
          .select('id')
          .where('org_id', '=', org.orgId)
          .where('type', '=', 'user.updated')
          .execute()
      ).length,
      1,
    );
  });

  it('a PATCH that changes nothing records nothing', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const before = json(
      await ctx().inject({ method: 'GET', url: `/v1/user/${user.userId}`, headers: org.admin.headers }),
    );
    ctx().clock.advance(1000);
    const res = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${user.userId}`,
      headers: org.admin.headers,
      payload: { firstName: before.firstName, groups: before.groups },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).lastUpdatedEpoch, before.lastUpdatedEpoch);
    assert.equal(
      (
        await ctx()
          .deps.db.selectFrom('audit_log')
          .select('id')
          .where('org_id', '=', org.orgId)
          .where('action', '=', 'user.updated')
          .execute()
      ).length,
      0,
    );
  });
});
