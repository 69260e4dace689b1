import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { unzipSync } from 'fflate';
import sharp from 'sharp';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg, type TestUser } from '../../../../test/helpers/factories.ts';
import { securitySuite } from '../../../../test/helpers/security.ts';
import { startSmtp } from '../../../../test/helpers/smtp.ts';
import { startWorker, type Worker } from '../../../core/jobs/worker.ts';
import { pathOf, uploadAsset } from '../../../../test/helpers/assets.ts';
import { assetJobHandlers } from '../../assets/index.ts';
import { createGroup, createTemplate } from '../../../../test/helpers/search.ts';
import { collectionJobHandlers } from '../index.ts';

const smtp = await startSmtp();
const { mails, port: smtpPort } = smtp;
after(() => smtp.close());

/** The share link in a mail (quoted-printable undone). */
function linkIn(body: string): string {
  const text = body
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  const m = /https?:\/\/[^\s"<>]+\/v1\/collection-share\/[^\s"<>]+/.exec(text);
  assert.ok(m, `a share link in ${text}`);
  return m[0];
}

function shareWorker(ctx: TestContext): Worker {
  return startWorker({
    db: ctx.deps.db,
    engine: ctx.deps.engine,
    clock: ctx.deps.clock,
    log: ctx.deps.log,
    signal: ctx.deps.jobs,
    handlers: { ...collectionJobHandlers(ctx.deps), ...assetJobHandlers(ctx.deps) },
    pollMs: 3_600_000,
  });
}

const rnd = () => Math.random().toString(36).slice(2, 8);

interface World {
  org: TestOrg;
  alice: TestUser;
  bob: TestUser;
  bobEmail: string;
  /** a1: Alice shares, Bob views; a2: Alice shares, Bob does not view; a3: Alice may not share (no Share); a4: hidden from Alice. */
  assets: { objectId: string; fileId: string; filename: string; bytes: Buffer }[];
  collectionId: string;
}

async function world(ctx: TestContext): Promise<World> {
  const org = await createTestOrg(ctx);
  const [ga, gb] = [await createGroup(ctx, org.orgId), await createGroup(ctx, org.orgId)];
  const t1 = await createTemplate(ctx, org.orgId, { [ga]: ['view', 'download', 'share'], [gb]: ['view'] });
  const t2 = await createTemplate(ctx, org.orgId, { [ga]: ['view', 'download', 'share'] });
  const t3 = await createTemplate(ctx, org.orgId, { [ga]: ['view', 'download'] });
  const t4 = await createTemplate(ctx, org.orgId, { [gb]: ['view', 'download', 'share'] });
  const alice = await createTestUser(ctx, org, { groupIds: [ga], privileges: ['collection'] });
  const bob = await createTestUser(ctx, org, { groupIds: [gb], privileges: ['collection'] });
  const big = await sharp({
    create: {
      width: 900,
      height: 900,
      channels: 3,
      background: '#000000',
      noise: { type: 'gaussian', mean: 128, sigma: 60 },
    },
  })
    .jpeg({ quality: 95 })
    .toBuffer();
  const small = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#336699' } })
    .jpeg()
    .toBuffer();
  const specs = [
    ['one.jpg', big, t1],
    ['two.jpg', small, t2],
    ['three.jpg', small, t3],
    ['four.jpg', small, t4],
  ] as const;
  const assets = [];
  for (const [filename, bytes, template] of specs) {
    const a = await uploadAsset(ctx, org, bytes, filename, { securityTemplateIds: [template] });
    assets.push({ objectId: a.objectId, fileId: a.fileId, filename, bytes });
  }
  const created = await ctx.inject({
    method: 'POST',
    url: '/v1/collection',
    headers: alice.headers,
    payload: {
      collectionType: 'private',
      name: `Share ${rnd()}`,
      collectionDocument: assets.slice(0, 3).map((a) => a.fileId),
    },
  });
  assert.equal(created.statusCode, 200, created.body);
  const collectionId = json(created).collectionId as string;
  // a4 is a member Alice cannot see (another curator could have added it).
  await ctx.deps.db
    .insertInto('collection_members')
    .values({ org_id: org.orgId, collection_id: collectionId, file_id: assets[3]!.fileId, position: 9, added_at: 0 })
    .execute();
  const bobEmail = (
    await ctx.deps.db.selectFrom('users').select('email').where('id', '=', bob.userId).executeTakeFirstOrThrow()
  ).email!;
  return { org, alice, bob, bobEmail, assets, collectionId };
}

const share = (ctx: TestContext, user: TestUser, id: string, body: unknown) =>
  ctx.inject({ method: 'POST', url: `/v1/collection/${id}/share`, headers: user.headers, payload: body });

forEachEngine(
  'collections: share by e-mail as a zip per recipient (real SMTP server)',
  (ctx) => {
    let w: World;
    let worker: Worker;
    before(async () => {
      w = await world(ctx());
      worker = shareWorker(ctx());
    });
    after(async () => worker.stop());

    it('mails each recipient a link to a zip of what they may see, within what the sharer may pass on', async () => {
      mails.length = 0;
      const external = `ext-${rnd()}@example.test`;
      const res = await share(ctx(), w.alice, w.collectionId, {
        sender: { name: 'Alice' },
        shareUsers: [{ email: w.bobEmail.toUpperCase(), name: 'Bob' }, { email: external }],
        shareMessage: 'For you',
      });
      assert.equal(res.statusCode, 202, res.body);
      const started = json(res);
      assert.equal(started.mail, 'queued');
      assert.deepEqual(started.links, [], "recipients' links go by mail only");
      assert.equal(mails.length, 0, 'no mail before the zips exist');
      await worker.drain();
      const action = json(
        await ctx().inject({ method: 'GET', url: `/v1/action/${started.actionId}`, headers: w.alice.headers }),
      );
      assert.equal(action.status, 'succeeded', JSON.stringify(action));
      assert.equal(action.type, 'collections.share');
      assert.deepEqual(
        { ...action.result, expiresEpoch: 0 },
        { collectionId: w.collectionId, recipients: 2, assets: 2, leftOut: 1, mailQueued: true, expiresEpoch: 0 },
      );
      assert.deepEqual(
        action.errors.map((e: { item: string }) => e.item),
        [w.assets[2]!.fileId],
        'only the member Alice sees but may not share is reported',
      );
      assert.equal(mails.length, 2);
      const names = async (to: string) => {
        const mail = mails.find((m) => m.to.toLowerCase() === to.toLowerCase());
        assert.ok(mail, `a mail to ${to}`);
        assert.match(mail.body, /For you/);
        const got = await ctx().inject({ method: 'GET', url: pathOf(linkIn(mail.body)) });
        assert.equal(got.statusCode, 200, got.body);
        assert.equal(got.headers['content-type'], 'application/zip');
        assert.match(String(got.headers['content-disposition']), /attachment/);
        return unzipSync(new Uint8Array(got.rawPayload));
      };
      const bobs = await names(w.bobEmail);
      assert.deepEqual(Object.keys(bobs), ['one.jpg'], 'Bob: shareable by Alice and viewable by Bob');
      assert.ok(Buffer.from(bobs['one.jpg']!).equals(w.assets[0]!.bytes), 'the bytes of the original');
      const theirs = await names(external);
      assert.deepEqual(Object.keys(theirs).sort(), ['one.jpg', 'two.jpg'], 'an outside address: what Alice may share');
      assert.ok(Buffer.from(theirs['two.jpg']!).equals(w.assets[1]!.bytes));
      const events = await ctx()
        .deps.db.selectFrom('events')
        .select(['type', 'body'])
        .where('org_id', '=', w.org.orgId)
        .where('type', 'in', ['collection.shared', 'collection.downloaded'])
        .execute();
      const shared = events.filter((e) => e.type === 'collection.shared').map((e) => JSON.parse(e.body).share);
      assert.deepEqual(
        shared.sort((a, b) => a.type.localeCompare(b.type)),
        [
          { type: 'External', recipients: [external] },
          { type: 'Internal', recipients: [w.bobEmail.toUpperCase()] },
        ],
      );
      assert.equal(events.filter((e) => e.type === 'collection.downloaded').length, 2);
      const got = json(
        await ctx().inject({ method: 'GET', url: `/v1/collection/${w.collectionId}`, headers: w.alice.headers }),
      );
      assert.ok(got.shareDocument.includes(started.actionId), 'the share is listed on the collection');
    });

    it('refuses a wrong or expired signature (403) and removes the zips after expiry', async () => {
      mails.length = 0;
      const res = await share(ctx(), w.alice, w.collectionId, {
        sender: { name: 'Alice' },
        shareUsers: [{ email: 'late@example.test' }],
        expiration: 120,
      });
      assert.equal(res.statusCode, 202, res.body);
      await worker.drain();
      const link = pathOf(linkIn(mails[0]!.body));
      assert.equal(
        (
          await ctx().inject({
            method: 'GET',
            url: link.replace(/signature=(.)/, (_, c: string) => `signature=${c === '0' ? '1' : '0'}`),
          })
        ).statusCode,
        403,
      );
      assert.equal(
        (await ctx().inject({ method: 'GET', url: link.replace(/\/0\?/, '/1?') })).statusCode,
        403,
        'the signature covers the recipient',
      );
      assert.equal((await ctx().inject({ method: 'GET', url: link })).statusCode, 200);
      ctx().clock.advance(121_000);
      const expired = await ctx().inject({ method: 'GET', url: link });
      assert.equal(expired.statusCode, 403, expired.body);
      assert.match(json(expired).message, /expired/);
      const shareId = json(res).actionId;
      assert.ok(await ctx().deps.blobs.head(`collection-shares/${shareId}/manifest.json`));
      ctx().clock.advance(60_000);
      await worker.drain();
      assert.equal(
        await ctx().deps.blobs.head(`collection-shares/${shareId}/manifest.json`),
        null,
        'cleaned up after expiry',
      );
    });

    it('rejects bad input naming the field; 404 for a collection the caller may not see; 403 when nothing may be shared', async () => {
      for (const [body, field] of [
        [{ shareUsers: [{ email: 'x@example.test' }] }, 'body.sender'],
        [{ sender: { name: 'A' } }, 'body.shareUsers'],
        [
          { sender: { name: 'A' }, shareUsers: [{ email: 'x@example.test' }, { email: 'nope' }] },
          'body.shareUsers.1.email',
        ],
        [{ sender: { name: 'A' }, shareUsers: [{ email: 'x@example.test' }], expiration: 5 }, 'body.expiration'],
      ] as const) {
        const bad = await share(ctx(), w.alice, w.collectionId, body);
        assert.equal(bad.statusCode, 400, bad.body);
        assert.equal(json(bad).details[0].field, field);
      }
      const body = { sender: { name: 'B' }, shareUsers: [{ email: 'x@example.test' }] };
      assert.equal(
        (await share(ctx(), w.bob, w.collectionId, body)).statusCode,
        404,
        "Bob cannot see Alice's private collection",
      );
      assert.equal((await share(ctx(), w.alice, '0190a4b2-0000-7000-8000-000000000000', body)).statusCode, 404);
      const onlyThree = json(
        await ctx().inject({
          method: 'POST',
          url: '/v1/collection',
          headers: w.alice.headers,
          payload: { collectionType: 'private', name: `No share ${rnd()}`, collectionDocument: [w.assets[2]!.fileId] },
        }),
      ).collectionId;
      const refused = await share(ctx(), w.alice, onlyThree, body);
      assert.equal(refused.statusCode, 403, refused.body);
      const empty = json(
        await ctx().inject({
          method: 'POST',
          url: '/v1/collection',
          headers: w.alice.headers,
          payload: { collectionType: 'private', name: `Empty ${rnd()}` },
        }),
      ).collectionId;
      const none = await share(ctx(), w.alice, empty, body);
      assert.equal(none.statusCode, 400, none.body);
      assert.equal(json(none).details[0].field, 'params.id');
    });

    securitySuite(ctx, 'POST /v1/collection/{id}/share', {
      method: 'POST',
      privileges: ['collection'],
      resource: true,
      prepare: async (c, org) => {
        const made = await c.inject({
          method: 'POST',
          url: '/v1/collection',
          headers: org.admin.headers,
          payload: { collectionType: 'secured', name: `sec ${rnd()}`, securityTemplateIds: [org.defaultTemplateId] },
        });
        return {
          url: `/v1/collection/${json(made).collectionId}/share`,
          body: { sender: { name: 'A' }, shareUsers: [{ email: 'a@example.test' }] },
        };
      },
    });
  },
  { env: { TESSERA_SMTP_URL: `smtp://127.0.0.1:${smtpPort}` } },
);

forEachEngine('collections: share without SMTP answers with the links', (ctx) => {
  let w: World;
  let worker: Worker;
  before(async () => {
    w = await world(ctx());
    worker = shareWorker(ctx());
  });
  after(async () => worker.stop());

  it('returns one link per recipient, says no mail was sent, and the links work once the action succeeded', async () => {
    const res = await share(ctx(), w.alice, w.collectionId, {
      sender: { name: 'Alice' },
      shareUsers: [{ email: w.bobEmail }, { email: 'out@example.test' }],
    });
    assert.equal(res.statusCode, 202, res.body);
    const started = json(res);
    assert.equal(started.mail, 'not_configured');
    assert.equal(started.mailSent, false);
    assert.match(started.message, /no mail will be sent/);
    assert.deepEqual(
      started.links.map((l: { email: string }) => l.email),
      [w.bobEmail, 'out@example.test'],
    );
    const early = await ctx().inject({ method: 'GET', url: pathOf(started.links[0].url) });
    assert.equal(early.statusCode, 404, 'not ready before the action ran');
    await worker.drain();
    const action = json(
      await ctx().inject({ method: 'GET', url: `/v1/action/${started.actionId}`, headers: w.alice.headers }),
    );
    assert.equal(action.result.mailQueued, false);
    const zip = async (n: number) =>
      Object.keys(
        unzipSync(
          new Uint8Array((await ctx().inject({ method: 'GET', url: pathOf(started.links[n].url) })).rawPayload),
        ),
      ).sort();
    assert.deepEqual(await zip(0), ['one.jpg']);
    assert.deepEqual(await zip(1), ['one.jpg', 'two.jpg']);
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/action/${started.actionId}`, headers: w.bob.headers })).statusCode,
      404,
      "the action is its creator's",
    );
  });
});
