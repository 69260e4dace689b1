import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../test/helpers/factories.ts';
import { freePort } from '../../../../test/helpers/net.ts';
import { startSmtp } from '../../../../test/helpers/smtp.ts';
import type { Worker } from '../../../core/jobs/worker.ts';
import { assetWorker, jpeg, uploadAsset } from '../../../../test/helpers/assets.ts';
import { queueMail } from '../index.ts';

// The SMTP server's port is fixed before it listens, so the first attempts meet a refused connection.
const port = await freePort();

/** A real SMTP server on the fixed port that answers `refuse` to the first `times` MAIL FROM commands, then accepts. */
const flakySmtp = (options: { refuse: number; times: number }) => startSmtp({ port, ...options });

forEachEngine(
  'assets: mail outbox retries until the SMTP server accepts',
  (ctx) => {
    let org: TestOrg;
    let worker: Worker;
    before(async () => {
      org = await createTestOrg(ctx());
      worker = assetWorker(ctx());
    });
    after(async () => worker.stop());

    const outbox = (ids: string[]) =>
      ctx().deps.db.selectFrom('mail_outbox').selectAll().where('id', 'in', ids).execute();
    const job = (mailId: string) =>
      ctx()
        .deps.db.selectFrom('jobs')
        .select(['status', 'attempts'])
        .where('type', '=', 'mail.send')
        .where('payload', 'like', `%${mailId}%`)
        .executeTakeFirstOrThrow();

    it('keeps a share mail through a refused connection and a 4xx answer, then delivers it exactly once', async () => {
      const a = await uploadAsset(ctx(), org, await jpeg(20, 20), 'retry.jpg');
      const res = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/share',
        headers: org.admin.headers,
        payload: { sender: { name: 'Ann' }, shareUsers: [{ email: 'dee@example.test' }], assets: [a.objectId] },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(json(res).mailQueued, true);
      assert.equal(json(res).message, 'Message queued for delivery');
      const ids = json(res).mailIds as string[];

      // Nothing listens yet: connection refused; the mail stays queued with the attempt recorded.
      await worker.drain();
      let [row] = await outbox(ids);
      assert.equal(row!.status, 'queued');
      assert.equal(Number(row!.attempts), 1);
      assert.match(row!.last_error!, /ECONNREFUSED|connect/i);
      assert.equal((await job(ids[0]!)).status, 'pending');

      // The server is up but answers 451 once.
      const smtp = await flakySmtp({ refuse: 451, times: 1 });
      try {
        ctx().clock.advance(15 * 60_000);
        await worker.drain();
        [row] = await outbox(ids);
        assert.equal(smtp.refusals, 1);
        assert.equal(row!.status, 'queued');
        assert.equal(Number(row!.attempts), 2);
        assert.match(row!.last_error!, /451/);
        assert.equal(smtp.mails.length, 0);

        // Then it accepts: delivered once, recorded as sent; later drains send nothing more.
        ctx().clock.advance(15 * 60_000);
        await worker.drain();
        ctx().clock.advance(60 * 60_000);
        await worker.drain();
        [row] = await outbox(ids);
        assert.equal(row!.status, 'sent');
        assert.equal(Number(row!.attempts), 3);
        assert.equal(row!.last_error, null);
        assert.ok(row!.sent_at);
        assert.equal(smtp.mails.length, 1);
        assert.equal(smtp.mails[0]!.to, 'dee@example.test');
        assert.equal(smtp.mails[0]!.messageId, row!.message_id);
        assert.equal((await job(ids[0]!)).status, 'done');
      } finally {
        await smtp.close();
      }
    });

    it('marks a mail failed at once when the server refuses it for good (5xx)', async () => {
      const smtp = await flakySmtp({ refuse: 550, times: 1 });
      try {
        const id = await ctx()
          .deps.db.transaction()
          .execute((trx) =>
            queueMail(trx, ctx().clock.now(), {
              orgId: org.orgId,
              to: { name: 'Eve "E" Doe', address: 'eve@example.test' },
              subject: 'Hello',
              text: 'Hi',
            }),
          );
        ctx().deps.jobs.wake();
        await worker.drain();
        ctx().clock.advance(60 * 60_000);
        await worker.drain();
        const [row] = await outbox([id]);
        assert.equal(row!.status, 'failed');
        assert.equal(Number(row!.attempts), 1);
        assert.match(row!.last_error!, /550/);
        assert.equal(row!.to_address, '"Eve \\"E\\" Doe" <eve@example.test>');
        assert.equal((await job(id)).status, 'dead');
        assert.equal(smtp.mails.length, 0);
      } finally {
        await smtp.close();
      }
    });
  },
  { env: { TESSERA_SMTP_URL: `smtp://127.0.0.1:${port}` } },
);
