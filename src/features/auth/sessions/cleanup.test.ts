import assert from 'node:assert/strict';
import { it } from 'node:test';
import { decodeJwt } from 'jose';
import { forEachEngine } from '../../../../test/helpers/context.ts';
import { login } from '../../../../test/helpers/auth.ts';
import { createTestOrg } from '../../../../test/helpers/factories.ts';
import { startWorkers } from '../../../workers.ts';

forEachEngine('auth cleanup job', (ctx) => {
  it('a login schedules the hourly cleanup, which removes sessions ended a week ago with their refresh tokens', async () => {
    const org = await createTestOrg(ctx());
    const ended = await login(ctx(), org.admin);
    const endedId = String(decodeJwt(ended.session.accessToken).sid);
    await ctx().inject({
      method: 'DELETE',
      url: '/v1/auth/token',
      headers: { accesstoken: ended.session.accessToken },
    });
    const jobs = await ctx().deps.db.selectFrom('jobs').select(['id']).where('type', '=', 'auth.cleanup').execute();
    assert.equal(jobs.length, 1);
    await login(ctx(), org.admin);
    assert.equal(
      (await ctx().deps.db.selectFrom('jobs').select('id').where('type', '=', 'auth.cleanup').execute()).length,
      1,
      'once per hour',
    );
    ctx().clock.advance(8 * 24 * 3600_000);
    const live = await login(ctx(), org.admin);
    const worker = startWorkers(ctx().deps);
    try {
      assert.ok((await worker.drain()) >= 1);
    } finally {
      await worker.stop();
    }
    const rows = await ctx().deps.db.selectFrom('auth_sessions').select('id').where('org_id', '=', org.orgId).execute();
    assert.ok(!rows.some((r) => r.id === endedId), 'the ended session is gone');
    assert.equal(
      (
        await ctx()
          .deps.db.selectFrom('auth_refresh_tokens')
          .select('token_hash')
          .where('session_id', '=', endedId)
          .execute()
      ).length,
      0,
    );
    assert.ok(
      rows.some((r) => r.id === decodeJwt(live.session.accessToken).sid),
      'live sessions stay',
    );
  });
});
