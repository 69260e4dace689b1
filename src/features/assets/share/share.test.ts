import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg } from '../../../../test/helpers/factories.ts';
import { securitySuite } from '../../../../test/helpers/security.ts';
import { startSmtp } from '../../../../test/helpers/smtp.ts';
import type { Worker } from '../../../core/jobs/worker.ts';
import { assetWorker, jpeg, pathOf, uploadAsset } from '../../../../test/helpers/assets.ts';

const smtp = await startSmtp();
const { mails, port: smtpPort } = smtp;
after(() => smtp.close());

forEachEngine(
  'assets: share by e-mail (real SMTP server)',
  (ctx) => {
    let org: TestOrg;
    let worker: Worker;
    before(async () => {
      org = await createTestOrg(ctx());
      worker = assetWorker(ctx());
    });
    after(async () => worker.stop());

    it('mails a time-limited link per asset to each recipient and fires asset.shared', async () => {
      const a = await uploadAsset(ctx(), org, await jpeg(20, 20), 'shared.jpg');
      mails.length = 0;
      const res = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/share',
        headers: org.admin.headers,
        payload: {
          sender: { name: 'Ann' },
          shareUsers: [{ email: 'bob@example.test', name: 'Bob' }, { email: 'cy@example.test' }],
          assets: [a.objectId],
          shareMessage: 'For you',
        },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(json(res).message, 'Message queued for delivery');
      assert.equal(json(res).mailQueued, true);
      assert.equal(json(res).mailIds.length, 2);
      await worker.drain();
      assert.equal(mails.length, 2);
      const outbox = await ctx()
        .deps.db.selectFrom('mail_outbox')
        .select(['status', 'attempts'])
        .where('id', 'in', json(res).mailIds)
        .execute();
      assert.deepEqual(
        outbox.map((m) => [m.status, Number(m.attempts)]),
        [
          ['sent', 1],
          ['sent', 1],
        ],
      );
      const link = json(res).links[0].url as string;
      assert.ok(mails[0]!.body.includes(new URL(link).pathname));
      assert.equal((await ctx().inject({ method: 'GET', url: pathOf(link) })).statusCode, 200);
      const ev = await ctx()
        .deps.db.selectFrom('events')
        .select('type')
        .where('org_id', '=', org.orgId)
        .where('type', '=', 'asset.shared')
        .execute();
      assert.equal(ev.length, 1);
      for (const [body, field] of [
        [{ shareUsers: [{ email: 'x@example.test' }], assets: [a.objectId] }, 'body.sender'],
        [{ sender: { name: 'A' }, assets: [a.objectId] }, 'body.shareUsers'],
        [{ sender: { name: 'A' }, shareUsers: [{ email: 'nope' }], assets: [a.objectId] }, 'body.shareUsers.0.email'],
        [{ sender: { name: 'A' }, shareUsers: [{ email: 'x@example.test' }], assets: [] }, 'body.assets'],
        [
          {
            sender: { name: 'A' },
            shareUsers: [{ email: 'x@example.test' }],
            assets: ['0190a4b2-0000-7000-8000-000000000000'],
          },
          'body.assets.0',
        ],
      ] as const) {
        const bad = await ctx().inject({
          method: 'POST',
          url: '/v1/asset/share',
          headers: org.admin.headers,
          payload: body,
        });
        assert.equal(bad.statusCode, 400, bad.body);
        assert.equal(json(bad).details[0].field, field);
      }
    });
  },
  { env: { TESSERA_SMTP_URL: `smtp://127.0.0.1:${smtpPort}` } },
);

forEachEngine('assets: share without SMTP', (ctx) => {
  let org: TestOrg;
  let worker: Worker;
  before(async () => {
    org = await createTestOrg(ctx());
    worker = assetWorker(ctx());
  });
  after(async () => worker.stop());

  it('answers a share with its links and says no mail was sent when SMTP is not configured', async () => {
    const a = await uploadAsset(ctx(), org, await jpeg(20, 20), 'nomail.jpg');
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/asset/share',
      headers: org.admin.headers,
      payload: { sender: { name: 'Ann' }, shareUsers: [{ email: 'bob@example.test' }], assets: [a.objectId] },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).mailQueued, false);
    assert.deepEqual(json(res).mailIds, []);
    assert.match(json(res).message, /no mail was sent/);
    assert.equal(json(res).links.length, 1);
  });

  securitySuite(ctx, 'POST /v1/asset/share', {
    method: 'POST',
    prepare: async (c, o) => ({
      url: '/v1/asset/share',
      body: {
        sender: { name: 'A' },
        shareUsers: [{ email: 'a@example.test' }],
        assets: [(await uploadAsset(c, o, await jpeg(10, 10), 's.jpg')).objectId],
      },
    }),
  });
});
void createTestUser;

forEachEngine(
  'assets: share mail rate limits (issue 23, defect 7)',
  (ctx) => {
    let worker: Worker;
    before(() => {
      worker = assetWorker(ctx());
    });
    after(async () => worker.stop());
    const to = (n: number, tag: string) =>
      Array.from({ length: n }, (_, i) => ({ email: `r${i}-${tag}@example.test` }));
    const share = (headers: Record<string, string>, asset: string, n: number, tag: string) =>
      ctx().inject({
        method: 'POST',
        url: '/v1/asset/share',
        headers,
        payload: {
          sender: { name: 'Anyone' },
          shareUsers: to(n, tag),
          assets: [asset],
          shareMessage: 'text of their own',
        },
      });
    const queued = async (orgId: string) =>
      Number(
        (
          await ctx()
            .deps.db.selectFrom('mail_outbox')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('org_id', '=', orgId)
            .executeTakeFirstOrThrow()
        ).n,
      );

    it('limits share mail per user and per organization per hour: 429 with Retry-After naming the limit, nothing queued', async () => {
      const org = await createTestOrg(ctx());
      const other = await createTestUser(ctx(), org, {
        privileges: ['download'],
        groupIds: [org.groups.administrators],
      }); // sharing needs the Download privilege (the permission table)
      const a = await uploadAsset(ctx(), org, await jpeg(20, 20), 'limited.jpg');
      assert.equal((await share(org.admin.headers, a.objectId, 3, 'a1')).statusCode, 200);
      const overUser = await share(org.admin.headers, a.objectId, 3, 'a2');
      assert.equal(overUser.statusCode, 429, overUser.body);
      assert.ok(Number(overUser.headers['retry-after']) >= 1);
      assert.match(
        json(overUser).message,
        /at most 5 mails per user per hour \(TESSERA_SHARE_MAIL_PER_USER_PER_HOUR\)/,
      );
      assert.equal(await queued(org.orgId), 3, 'a refused share queues nothing');
      assert.equal((await share(org.admin.headers, a.objectId, 2, 'a3')).statusCode, 200, 'up to the limit');
      // Another user of the same organization has their own allowance, within the organization's.
      const overOrg = await share(other.headers, a.objectId, 4, 'b1');
      assert.equal(overOrg.statusCode, 429, overOrg.body);
      assert.match(
        json(overOrg).message,
        /at most 8 mails per organization per hour \(TESSERA_SHARE_MAIL_PER_ORG_PER_HOUR\)/,
      );
      assert.equal((await share(other.headers, a.objectId, 3, 'b2')).statusCode, 200);
      assert.equal(await queued(org.orgId), 8);
      // Other organizations are not affected, and the hour passes.
      const org2 = await createTestOrg(ctx());
      const b = await uploadAsset(ctx(), org2, await jpeg(20, 20), 'other.jpg');
      assert.equal((await share(org2.admin.headers, b.objectId, 5, 'c1')).statusCode, 200);
      ctx().clock.advance(3_600_001);
      assert.equal((await share(org.admin.headers, a.objectId, 5, 'a4')).statusCode, 200);
    });
  },
  {
    env: {
      TESSERA_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
      TESSERA_SHARE_MAIL_PER_USER_PER_HOUR: '5',
      TESSERA_SHARE_MAIL_PER_ORG_PER_HOUR: '8',
    },
  },
);
