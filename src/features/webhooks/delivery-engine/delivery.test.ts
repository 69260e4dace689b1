import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { Value } from 'typebox/value';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../test/helpers/factories.ts';
import { startReceiver, type Receiver } from '../../../../test/helpers/receiver.ts';
import { envelopeSchema, isEventType, publishEvent } from '../../../core/events/index.ts';
import { newId } from '../../../core/ids.ts';
import { pruneDeliveryLog, runDeliveryOnce } from '../index.ts';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

async function endpoint(
  ctx: TestContext,
  org: TestOrg,
  url: string,
  over: Record<string, unknown> = {},
): Promise<{ id: string; secret: string }> {
  const res = await ctx.inject({
    method: 'POST',
    url: '/webhooks/endpoint',
    headers: org.admin.headers,
    payload: [{ description: 'Test receiver', url, eventTypes: ['*'], ...over }],
  });
  assert.equal(res.statusCode, 200, res.body);
  return json(res);
}

async function publishAsset(
  ctx: TestContext,
  org: TestOrg,
  type: 'asset.created' | 'asset.deleted' = 'asset.created',
): Promise<string> {
  const now = ctx.clock.now();
  return ctx.deps.db.transaction().execute((trx) =>
    publishEvent(trx, now, {
      orgId: org.orgId,
      type,
      actor: org.admin.userId,
      data: { asset: { id: newId(now), filename: 'photo.jpg', metadataTemplate: null, securityTemplates: [] } },
    }),
  );
}

const messagesOf = async (ctx: TestContext, org: TestOrg, endpointId: string) =>
  json(
    await ctx.inject({
      method: 'GET',
      url: `/webhooks/endpoint/${endpointId}/message/list`,
      headers: org.admin.headers,
    }),
  ).messages;

/** Every delivered body is valid against the catalog's schema of its event type. */
function assertValidPayload(body: string): any {
  const parsed = JSON.parse(body);
  assert.ok(isEventType(parsed.eventType), parsed.eventType);
  const errors = [...Value.Errors(envelopeSchema(parsed.eventType), parsed)];
  assert.deepEqual(errors, [], `${parsed.eventType} payload does not match its schema`);
  return parsed;
}

forEachEngine('webhook delivery', (ctx) => {
  const receivers: Receiver[] = [];
  const receiver = async (...args: Parameters<typeof startReceiver>) => {
    const r = await startReceiver(...args);
    receivers.push(r);
    return r;
  };
  const resetClock = () => ctx().clock.set(Date.now());

  it('delivers a committed event signed per Standard Webhooks (verified by the standardwebhooks library)', async () => {
    resetClock();
    const org = await createTestOrg(ctx());
    const rx = await receiver();
    const { id, secret } = await endpoint(ctx(), org, rx.url, { eventTypes: ['asset.*'] });
    const eventId = await publishAsset(ctx(), org);
    await runDeliveryOnce(ctx().deps);
    assert.equal(rx.received.length, 1);
    const [hit] = rx.received;
    const verified = new Webhook(secret).verify(hit!.body, hit!.headers as Record<string, string>) as any;
    assert.equal(verified.eventType, 'asset.created');
    const body = assertValidPayload(hit!.body);
    assert.equal(body.event.id, eventId);
    assert.match(body.event.id, /^asset-created-[0-9a-f-]{36}$/);
    assert.equal(body.event.user.id, org.admin.userId);
    assert.equal(body.asset.filename, 'photo.jpg');
    const [message] = await messagesOf(ctx(), org, id);
    assert.equal(hit!.headers['webhook-id'], message.id);
    assert.equal(message.status, 'succeeded');
    assert.equal(hit!.headers['content-type'], 'application/json');
    assert.equal(hit!.headers['webhook-timestamp'], String(Math.floor(ctx().clock.now() / 1000)));
    const attempts = json(
      await ctx().inject({ method: 'GET', url: `/webhooks/endpoint/${id}/attempt/list`, headers: org.admin.headers }),
    ).attempts;
    assert.equal(attempts.length, 1);
    assert.equal(attempts[0].success, true);
    assert.equal(attempts[0].statusCode, 200);
    assert.equal(attempts[0].responseBody, 'ok');
    assert.equal(attempts[0].messageId, message.id);
  });

  it('delivers only matching event types of the same organization, and nothing to disabled endpoints', async () => {
    resetClock();
    const org = await createTestOrg(ctx());
    const other = await createTestOrg(ctx());
    const assets = await receiver();
    const users = await receiver();
    const off = await receiver();
    const stranger = await receiver();
    await endpoint(ctx(), org, assets.url, { eventTypes: ['asset.deleted'] });
    await endpoint(ctx(), org, users.url, { eventTypes: ['user.*'] });
    await endpoint(ctx(), org, off.url, { eventTypes: ['*'], disabled: true });
    await endpoint(ctx(), other, stranger.url, { eventTypes: ['*'] });
    await publishAsset(ctx(), org, 'asset.created');
    await publishAsset(ctx(), org, 'asset.deleted');
    await runDeliveryOnce(ctx().deps);
    assert.deepEqual(
      assets.received.map((r) => JSON.parse(r.body).eventType),
      ['asset.deleted'],
    );
    assert.equal(users.received.length, 0);
    assert.equal(off.received.length, 0);
    assert.equal(stranger.received.length, 0);
  });

  it('an endpoint receives only events that happened after it subscribed', async () => {
    resetClock();
    const org = await createTestOrg(ctx());
    await publishAsset(ctx(), org);
    ctx().clock.advance(1);
    const rx = await receiver();
    await endpoint(ctx(), org, rx.url);
    ctx().clock.advance(1);
    await publishAsset(ctx(), org);
    await runDeliveryOnce(ctx().deps);
    assert.equal(rx.received.length, 1);
  });

  it('a rolled-back transaction emits nothing', async () => {
    resetClock();
    const org = await createTestOrg(ctx());
    const rx = await receiver();
    await endpoint(ctx(), org, rx.url);
    await assert.rejects(
      ctx()
        .deps.db.transaction()
        .execute(async (trx) => {
          await publishEvent(trx, ctx().clock.now(), {
            orgId: org.orgId,
            type: 'asset.created',
            actor: null,
            data: { asset: { id: newId(), filename: 'x.png', metadataTemplate: null, securityTemplates: [] } },
          });
          throw new Error('the change failed');
        }),
      /the change failed/,
    );
    // Through the API too: a duplicate username rolls the user creation back.
    const dup = await ctx().inject({
      method: 'POST',
      url: '/v1/user',
      headers: org.admin.headers,
      payload: {
        firstName: 'A',
        lastName: 'B',
        friendlyName: 'C',
        email: 'dup@example.test',
        username: org.admin.username,
        password: 'long enough pw',
        accountType: 'local',
        userRoleId: org.roles.viewer,
        groups: [org.groups.everyone],
      },
    });
    assert.equal(dup.statusCode, 409);
    await runDeliveryOnce(ctx().deps);
    assert.equal(rx.received.length, 0);
    assert.equal(
      (await ctx().deps.db.selectFrom('events').select('id').where('org_id', '=', org.orgId).execute()).length,
      0,
    );
  });

  it('identity changes publish user.* and security.template.* events in their transactions', async () => {
    resetClock();
    const org = await createTestOrg(ctx());
    const rx = await receiver();
    const { secret } = await endpoint(ctx(), org, rx.url, { eventTypes: ['user.*', 'security.template.*'] });
    const created = await ctx().inject({
      method: 'POST',
      url: '/v1/user',
      headers: org.admin.headers,
      payload: {
        firstName: 'Ada',
        lastName: 'Lovelace',
        friendlyName: 'Ada',
        email: 'ada@example.test',
        username: `ada-${newId()}`.slice(0, 40),
        password: 'long enough pw',
        accountType: 'local',
        userRoleId: org.roles.viewer,
        groups: [org.groups.everyone],
      },
    });
    assert.equal(created.statusCode, 200, created.body);
    const userId = json(created).userId;
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/user/${userId}`,
          headers: org.admin.headers,
          payload: { firstName: 'Augusta' },
        })
      ).statusCode,
      200,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/user/${userId}/add-to-group`,
          headers: org.admin.headers,
          payload: { userGroupId: org.groups.administrators },
        })
      ).statusCode,
      200,
    );
    const template = await ctx().inject({
      method: 'POST',
      url: '/v1/security/template',
      headers: org.admin.headers,
      payload: {
        templateName: `T ${newId()}`,
        securityDenormalized: [{ groupId: org.groups.everyone, permissions: ['6c1f0c1e-5b1a-4e1a-9a51-000000000001'] }],
      },
    });
    assert.equal(template.statusCode, 201, template.body);
    const templateId = json(template).templateId;
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/security/template/${templateId}`,
          headers: org.admin.headers,
          payload: {
            securityDenormalized: [
              { groupId: org.groups.everyone, permissions: ['6c1f0c1e-5b1a-4e1a-9a51-000000000002'] },
            ],
          },
        })
      ).statusCode,
      200,
    );
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `/v1/security/template/${templateId}`, headers: org.admin.headers }))
        .statusCode,
      204,
    );
    await runDeliveryOnce(ctx().deps);
    const bodies = rx.received.map((r) => {
      new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
      return assertValidPayload(r.body);
    });
    const types = bodies.map((b) => b.eventType).sort();
    assert.deepEqual(types, [
      'security.template.created',
      'security.template.deleted',
      'security.template.updated',
      'user.created',
      'user.updated',
      'user.updated',
    ]);
    const made = bodies.find((b) => b.eventType === 'user.created');
    assert.equal(made.user.id, userId);
    assert.equal(made.user.role.id, org.roles.viewer);
    assert.deepEqual(
      made.user.groups.map((g: { id: string }) => g.id),
      [org.groups.everyone],
    );
    const groupsAfter = bodies
      .filter((b) => b.eventType === 'user.updated')
      .map((b) => b.user.groups.length)
      .sort();
    assert.deepEqual(groupsAfter, [1, 2]);
    const updated = bodies.find((b) => b.eventType === 'security.template.updated');
    assert.deepEqual(updated.securityTemplate.groups[0].permissions, { added: ['Download'], removed: ['View'] });
    assert.equal(updated.securityTemplate.groups[0].id, org.groups.everyone);
    const createdTemplate = bodies.find((b) => b.eventType === 'security.template.created');
    assert.deepEqual(createdTemplate.securityTemplate.groups[0].permissions, { added: ['View'], removed: [] });
  });

  it('retries on the full schedule with jitter, keeps the webhook-id, then fails the message and emits message.attempt.exhausted', async () => {
    resetClock();
    const org = await createTestOrg(ctx());
    const failing = await receiver((_req, res) => {
      res.statusCode = 500;
      res.end('boom'.repeat(1000));
    });
    const ops = await receiver();
    const { id } = await endpoint(ctx(), org, failing.url, { eventTypes: ['asset.created'] });
    const opsEndpoint = await endpoint(ctx(), org, ops.url, { eventTypes: ['message.attempt.exhausted'] });
    await publishAsset(ctx(), org);
    const schedule = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR];
    await runDeliveryOnce(ctx().deps);
    for (const [step, delay] of schedule.entries()) {
      const [message] = await messagesOf(ctx(), org, id);
      assert.equal(message.status, 'pending');
      const wait = Date.parse(message.nextAttemptDate) - ctx().clock.now();
      assert.ok(wait >= delay && wait <= delay * 1.1 + 1, `waits ${wait} ms for a ${delay} ms step`);
      ctx().clock.advance(wait - 1);
      await runDeliveryOnce(ctx().deps);
      assert.equal((await messagesOf(ctx(), org, id))[0].attempts, step + 1, 'not attempted early');
      ctx().clock.advance(1);
      await runDeliveryOnce(ctx().deps);
    }
    assert.equal(failing.received.length, 8);
    assert.equal(new Set(failing.received.map((r) => r.headers['webhook-id'])).size, 1);
    const [message] = await messagesOf(ctx(), org, id);
    assert.equal(message.status, 'failed');
    assert.equal(message.attempts, 8);
    assert.equal(message.lastStatusCode, 500);
    assert.equal(message.nextAttemptDate, null);
    assert.equal(ops.received.length, 1);
    const notice = assertValidPayload(ops.received[0]!.body);
    assert.equal(notice.eventType, 'message.attempt.exhausted');
    assert.equal(notice.message.id, message.id);
    assert.equal(notice.message.endpointId, id);
    assert.equal(notice.message.attempts, 8);
    const attempts = json(
      await ctx().inject({
        method: 'GET',
        url: `/webhooks/endpoint/${id}/attempt/list?limit=3`,
        headers: org.admin.headers,
      }),
    );
    assert.equal(attempts.attempts.length, 3);
    assert.equal(attempts.attempts[0].attempt, 8);
    assert.equal(attempts.attempts[0].errorClass, 'http_status');
    assert.equal(attempts.attempts[0].responseBody.length, 1024);
    const rest = json(
      await ctx().inject({
        method: 'GET',
        url: `/webhooks/endpoint/${id}/attempt/list?after=${attempts.pagination.nextCursor}`,
        headers: org.admin.headers,
      }),
    );
    assert.equal(rest.attempts.length, 5);

    // Resend: same webhook-id, fresh schedule; recover: every failed message since a time.
    failing.respond((_req, res) => res.end('fine now'));
    const resent = await ctx().inject({
      method: 'POST',
      url: `/webhooks/endpoint/${id}/message/${message.id}/resend`,
      headers: org.admin.headers,
    });
    assert.equal(resent.statusCode, 202, resent.body);
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: `/webhooks/endpoint/${id}/message/${message.id}/resend`,
          headers: org.admin.headers,
        })
      ).statusCode,
      409,
    );
    await runDeliveryOnce(ctx().deps);
    assert.equal(failing.received.length, 9);
    assert.equal(failing.received[8]!.headers['webhook-id'], message.id);
    assert.equal((await messagesOf(ctx(), org, id))[0].status, 'succeeded');
    assert.equal(ops.received.length, 1, 'an exhaustion notice is not itself retried into another notice');
    void opsEndpoint;
  });

  it('recovers all failed messages since a time', async () => {
    resetClock();
    const org = await createTestOrg(ctx());
    const rx = await receiver((_req, res) => {
      res.statusCode = 503;
      res.setHeader('retry-after', '1');
      res.end();
    });
    const { id } = await endpoint(ctx(), org, rx.url, { eventTypes: ['asset.*'] });
    const start = ctx().clock.now();
    await publishAsset(ctx(), org);
    await publishAsset(ctx(), org);
    for (let i = 0; i < 9; i++) {
      await runDeliveryOnce(ctx().deps);
      ctx().clock.advance(11 * HOUR);
    }
    const failed = (await messagesOf(ctx(), org, id)).filter((m: { status: string }) => m.status === 'failed');
    assert.equal(failed.length, 2);
    const dry = await ctx().inject({
      method: 'POST',
      url: `/webhooks/endpoint/${id}/recover`,
      headers: org.admin.headers,
      payload: { since: new Date(start).toISOString(), dryRun: true },
    });
    assert.deepEqual(json(dry), { recovered: 2 });
    const none = await ctx().inject({
      method: 'POST',
      url: `/webhooks/endpoint/${id}/recover`,
      headers: org.admin.headers,
      payload: { since: start + 1 },
    });
    assert.deepEqual(json(none), { recovered: 0 });
    rx.respond((_req, res) => res.end());
    const rec = await ctx().inject({
      method: 'POST',
      url: `/webhooks/endpoint/${id}/recover`,
      headers: org.admin.headers,
      payload: { since: new Date(start).toISOString() },
    });
    assert.equal(rec.statusCode, 202);
    assert.deepEqual(json(rec), { recovered: 2 });
    await runDeliveryOnce(ctx().deps);
    assert.ok((await messagesOf(ctx(), org, id)).every((m: { status: string }) => m.status === 'succeeded'));
    const bad = await ctx().inject({
      method: 'POST',
      url: `/webhooks/endpoint/${id}/recover`,
      headers: org.admin.headers,
      payload: { since: 'yesterday' },
    });
    assert.equal(bad.statusCode, 400);
  });

  it('honours Retry-After when it asks for longer than the schedule', async () => {
    resetClock();
    const org = await createTestOrg(ctx());
    const rx = await receiver((_req, res) => {
      res.statusCode = 429;
      res.setHeader('retry-after', '120');
      res.end();
    });
    const { id } = await endpoint(ctx(), org, rx.url, { eventTypes: ['asset.*'] });
    await publishAsset(ctx(), org);
    await runDeliveryOnce(ctx().deps);
    const [message] = await messagesOf(ctx(), org, id);
    assert.equal(Date.parse(message.nextAttemptDate) - ctx().clock.now(), 120 * SECOND);
  });

  it('stops retrying when the receiver answers webhook-delivery: abort-message', async () => {
    resetClock();
    const org = await createTestOrg(ctx());
    const rx = await receiver((_req, res) => {
      res.statusCode = 400;
      res.setHeader('webhook-delivery', 'abort-message');
      res.end();
    });
    const { id } = await endpoint(ctx(), org, rx.url, { eventTypes: ['asset.*'] });
    await publishAsset(ctx(), org);
    await runDeliveryOnce(ctx().deps);
    const [message] = await messagesOf(ctx(), org, id);
    assert.equal(message.status, 'failed');
    assert.equal(message.attempts, 1);
    ctx().clock.advance(DAY);
    await runDeliveryOnce(ctx().deps);
    assert.equal(rx.received.length, 1);
  });

  it('disables an endpoint that failed continuously for 5 days and emits endpoint.disabled', async () => {
    resetClock();
    const org = await createTestOrg(ctx());
    const dead = await receiver((_req, res) => {
      res.statusCode = 502;
      res.end();
    });
    const ops = await receiver();
    const { id } = await endpoint(ctx(), org, dead.url, { eventTypes: ['asset.*'] });
    await endpoint(ctx(), org, ops.url, { eventTypes: ['endpoint.disabled'] });
    const start = ctx().clock.now();
    await publishAsset(ctx(), org);
    await runDeliveryOnce(ctx().deps);
    // A success in between restarts the 5-day count.
    ctx().clock.advance(DAY);
    dead.respond((_req, res) => res.end());
    await publishAsset(ctx(), org);
    await runDeliveryOnce(ctx().deps);
    dead.respond((_req, res) => {
      res.statusCode = 502;
      res.end();
    });
    ctx().clock.advance(HOUR);
    const failingFrom = ctx().clock.now();
    for (let day = 1; day <= 6; day++) {
      await publishAsset(ctx(), org);
      await runDeliveryOnce(ctx().deps);
      const endpointNow = json(
        await ctx().inject({ method: 'GET', url: `/webhooks/endpoint/${id}`, headers: org.admin.headers }),
      );
      const expectDisabled = ctx().clock.now() - failingFrom >= 5 * DAY;
      assert.equal(endpointNow.disabled, expectDisabled, `day ${day}`);
      if (expectDisabled) break;
      ctx().clock.advance(DAY);
    }
    assert.ok(ctx().clock.now() - start >= 5 * DAY);
    const endpointNow = json(
      await ctx().inject({ method: 'GET', url: `/webhooks/endpoint/${id}`, headers: org.admin.headers }),
    );
    assert.match(endpointNow.disabledReason, /5 days/);
    assert.equal(ops.received.length, 1);
    const notice = assertValidPayload(ops.received[0]!.body);
    assert.equal(notice.endpoint.id, id);
    assert.equal(notice.endpoint.failingSince, new Date(failingFrom).toISOString());
    // Disabled: no more attempts; its pending messages are marked failed (recoverable once re-enabled).
    const before = dead.received.length;
    ctx().clock.advance(DAY);
    await publishAsset(ctx(), org);
    await runDeliveryOnce(ctx().deps);
    assert.equal(dead.received.length, before);
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/webhooks/endpoint/${id}`,
          headers: org.admin.headers,
          payload: { disabled: false },
        })
      ).statusCode,
      204,
    );
    dead.respond((_req, res) => res.end());
    const rec = json(
      await ctx().inject({
        method: 'POST',
        url: `/webhooks/endpoint/${id}/recover`,
        headers: org.admin.headers,
        payload: { since: start },
      }),
    );
    assert.ok(rec.recovered >= 1);
    await runDeliveryOnce(ctx().deps);
    assert.ok(dead.received.length > before);
  });

  it('disables an endpoint at once when its receiver answers 410 Gone', async () => {
    resetClock();
    const org = await createTestOrg(ctx());
    const gone = await receiver((_req, res) => {
      res.statusCode = 410;
      res.end();
    });
    const ops = await receiver();
    const { id } = await endpoint(ctx(), org, gone.url, { eventTypes: ['asset.*'] });
    await endpoint(ctx(), org, ops.url, { eventTypes: ['endpoint.disabled'] });
    await publishAsset(ctx(), org);
    await runDeliveryOnce(ctx().deps);
    const state = json(
      await ctx().inject({ method: 'GET', url: `/webhooks/endpoint/${id}`, headers: org.admin.headers }),
    );
    assert.equal(state.disabled, true);
    assert.match(state.disabledReason, /410/);
    assert.equal(assertValidPayload(ops.received[0]!.body).endpoint.reason, 'the receiver answered 410 Gone');
  });

  it('enforces the per-endpoint rate limit without slowing other endpoints', async () => {
    resetClock();
    const org = await createTestOrg(ctx());
    const limited = await receiver();
    const free = await receiver();
    await endpoint(ctx(), org, limited.url, { eventTypes: ['asset.*'], rateLimit: 2 });
    await endpoint(ctx(), org, free.url, { eventTypes: ['asset.*'] });
    for (let i = 0; i < 6; i++) await publishAsset(ctx(), org);
    await runDeliveryOnce(ctx().deps);
    assert.equal(free.received.length, 6);
    assert.equal(limited.received.length, 1, 'a burst of a tenth of a second (at least one message)');
    let seconds = 0;
    while (limited.received.length < 6 && seconds < 10) {
      ctx().clock.advance(SECOND);
      seconds += 1;
      await runDeliveryOnce(ctx().deps);
      assert.ok(
        limited.received.length <= 1 + 2 * seconds,
        `${limited.received.length} messages after ${seconds} s at 2/s`,
      );
    }
    assert.equal(limited.received.length, 6);
    assert.ok(seconds >= 3);
    assert.equal(new Set(limited.received.map((r) => r.headers['webhook-id'])).size, 6);
  });

  it('sends both signatures during a secret rotation overlap, then only the new one', async () => {
    resetClock();
    const org = await createTestOrg(ctx());
    const rx = await receiver();
    const { id, secret: oldSecret } = await endpoint(ctx(), org, rx.url, { eventTypes: ['asset.*'] });
    const rotated = json(
      await ctx().inject({
        method: 'POST',
        url: `/webhooks/endpoint/${id}/secret/rotate`,
        headers: org.admin.headers,
        payload: { overlapSeconds: 60 },
      }),
    );
    await publishAsset(ctx(), org);
    await runDeliveryOnce(ctx().deps);
    const during = rx.received[0]!;
    assert.equal(String(during.headers['webhook-signature']).split(' ').length, 2);
    new Webhook(oldSecret).verify(during.body, during.headers as Record<string, string>);
    new Webhook(rotated.key).verify(during.body, during.headers as Record<string, string>);
    ctx().clock.advance(61 * SECOND);
    await publishAsset(ctx(), org);
    await runDeliveryOnce(ctx().deps);
    const afterwards = rx.received[1]!;
    assert.equal(String(afterwards.headers['webhook-signature']).split(' ').length, 1);
    new Webhook(rotated.key).verify(afterwards.body, afterwards.headers as Record<string, string>);
    assert.throws(() => new Webhook(oldSecret).verify(afterwards.body, afterwards.headers as Record<string, string>));
  });

  it('authenticates with OAuth client credentials: one cached token, refreshed once on a 401', async () => {
    resetClock();
    const org = await createTestOrg(ctx());
    let issued = 0;
    const tokenRequests: { auth: string | undefined; body: string }[] = [];
    const tokenServer = await receiver((req, res) => {
      issued += 1;
      tokenRequests.push({ auth: req.headers.authorization, body: req.body });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ access_token: `tok-${issued}`, token_type: 'Bearer', expires_in: 3600 }));
    });
    let accepted = 'tok-1';
    const rx = await receiver((req, res) => {
      res.statusCode = req.headers.authorization === `Bearer ${accepted}` ? 200 : 401;
      res.end();
    });
    const { id } = await endpoint(ctx(), org, rx.url, { eventTypes: ['asset.*'] });
    const put = await ctx().inject({
      method: 'PUT',
      url: `/webhooks/endpoint/oauth/${id}`,
      headers: org.admin.headers,
      payload: {
        clientId: 'tessera',
        clientSecret: 's3cret',
        tokenUrl: tokenServer.url,
        scope: ['hooks'],
        extraParams: { audience: 'receiver' },
      },
    });
    assert.equal(put.statusCode, 204, put.body);
    for (let i = 0; i < 3; i++) await publishAsset(ctx(), org);
    await runDeliveryOnce(ctx().deps);
    assert.equal(rx.received.length, 3);
    assert.equal(issued, 1, 'one token for all three deliveries');
    assert.equal(tokenRequests[0]!.auth, `Basic ${Buffer.from('tessera:s3cret').toString('base64')}`);
    const form = new URLSearchParams(tokenRequests[0]!.body);
    assert.equal(form.get('grant_type'), 'client_credentials');
    assert.equal(form.get('scope'), 'hooks');
    assert.equal(form.get('audience'), 'receiver');
    accepted = 'tok-2';
    await publishAsset(ctx(), org);
    await runDeliveryOnce(ctx().deps);
    assert.equal(issued, 2, 'refreshed exactly once after the 401');
    assert.deepEqual(
      rx.received.slice(3).map((r) => r.headers.authorization),
      ['Bearer tok-1', 'Bearer tok-2'],
    );
    const messages = await messagesOf(ctx(), org, id);
    assert.ok(messages.every((m: { status: string }) => m.status === 'succeeded'));
  });

  it('records the other outcomes when an endpoint is deleted while its message is in flight', async () => {
    resetClock();
    const org = await createTestOrg(ctx());
    let doomedId = '';
    const doomed = await receiver(async (_req, res) => {
      await ctx().inject({ method: 'DELETE', url: `/webhooks/endpoint/${doomedId}`, headers: org.admin.headers });
      res.end();
    });
    const healthy = await receiver();
    doomedId = (await endpoint(ctx(), org, doomed.url, { eventTypes: ['asset.*'] })).id;
    const { id } = await endpoint(ctx(), org, healthy.url, { eventTypes: ['asset.*'] });
    await publishAsset(ctx(), org);
    await runDeliveryOnce(ctx().deps);
    assert.equal(doomed.received.length, 1);
    assert.equal((await messagesOf(ctx(), org, id))[0].status, 'succeeded');
    assert.equal(
      (await ctx().deps.db.selectFrom('webhook_messages').select('id').where('endpoint_id', '=', doomedId).execute())
        .length,
      0,
    );
  });

  it('prunes the delivery log after 90 days, keeping what is still to be delivered', async () => {
    resetClock();
    const org = await createTestOrg(ctx());
    const ok = await receiver();
    const down = await receiver((_req, res) => {
      res.statusCode = 500;
      res.end();
    });
    const done = await endpoint(ctx(), org, ok.url, { eventTypes: ['asset.*'] });
    const open = await endpoint(ctx(), org, down.url, { eventTypes: ['asset.deleted'] });
    await publishAsset(ctx(), org, 'asset.created');
    await publishAsset(ctx(), org, 'asset.deleted');
    await runDeliveryOnce(ctx().deps);
    ctx().clock.advance(91 * DAY);
    await pruneDeliveryLog(ctx().deps.db, ctx().clock.now());
    const left = await ctx()
      .deps.db.selectFrom('webhook_messages')
      .select(['endpoint_id', 'status'])
      .where('org_id', '=', org.orgId)
      .execute();
    assert.deepEqual(
      left.map((m) => [m.endpoint_id === open.id, m.status]),
      [[true, 'pending']],
    );
    assert.equal(
      (await ctx().deps.db.selectFrom('webhook_attempts').select('id').where('endpoint_id', '=', done.id).execute())
        .length,
      0,
    );
    const events = await ctx().deps.db.selectFrom('events').select('type').where('org_id', '=', org.orgId).execute();
    assert.deepEqual(
      events.map((e) => e.type),
      ['asset.deleted'],
    );
  });

  it('two instances on one PostgreSQL database share the work without sending anything twice', async (t) => {
    if (ctx().engine !== 'postgres')
      return t.skip('SQLite is single-writer: several delivering instances is a PostgreSQL deployment');
    resetClock();
    const org = await createTestOrg(ctx());
    const rx = await receiver();
    await endpoint(ctx(), org, rx.url, { eventTypes: ['asset.*'] });
    const second = await ctx().secondInstance();
    for (let i = 0; i < 10; i++) {
      await ctx()
        .deps.db.transaction()
        .execute(async (trx) => {
          for (let j = 0; j < 20; j++)
            await publishEvent(trx, ctx().clock.now(), {
              orgId: org.orgId,
              type: 'asset.created',
              actor: null,
              data: { asset: { id: newId(), filename: 'p.jpg', metadataTemplate: null, securityTemplates: [] } },
            });
        });
    }
    const [a, b] = await Promise.all([runDeliveryOnce(ctx().deps), runDeliveryOnce(second.deps)]);
    assert.equal(rx.received.length, 200);
    assert.equal(new Set(rx.received.map((r) => r.headers['webhook-id'])).size, 200);
    assert.equal(a.fannedOut + b.fannedOut >= 200, true);
  });

  it('closes its receivers', async () => {
    for (const r of receivers) await r.close();
  });
});
