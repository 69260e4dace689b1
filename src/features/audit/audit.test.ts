import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { it } from 'node:test';
import { sql } from 'kysely';
import { audit } from '../../core/audit.ts';
import { auditVerify } from '../../cli.ts';
import { createKey, REVOKE } from '../../../test/helpers/api-keys.ts';
import { createAsset, defaultTemplate, jpeg, pathOf, uploadAsset } from '../../../test/helpers/assets.ts';
import { impersonationHeaders, login } from '../../../test/helpers/auth.ts';
import { forEachEngine, json, type TestContext } from '../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg } from '../../../test/helpers/factories.ts';
import { createGroup, createTemplate } from '../../../test/helpers/permissions.ts';
import { pruneOrg, sealOrg, verifyChain } from './index.ts';

interface Entry {
  id: string;
  seq: number;
  at: string;
  operation: string | null;
  action: string;
  target: { type: string; id: string | null };
  actor: { userId: string | null; impersonatorId: string | null; apiKeyId: string | null; via: string | null };
  data: Record<string, any>;
  origin?: { ip: string | null; userAgent: string | null; requestId: string | null };
}

async function trail(ctx: TestContext, org: TestOrg, query = ''): Promise<Entry[]> {
  const res = await ctx.inject({ method: 'GET', url: `/v1/audit?limit=1000${query}`, headers: org.admin.headers });
  assert.equal(res.statusCode, 200, res.body);
  return json<{ items: Entry[] }>(res).items;
}

/** Edits a sealed row the way someone with database access would: the append-only trigger dropped first. */
async function tamper(ctx: TestContext, id: string, data: string): Promise<void> {
  const db = ctx.deps.db;
  await sql`drop trigger tessera_audit_append_only${sql.raw(ctx.engine === 'postgres' ? ' on audit_log' : '')}`.execute(
    db,
  );
  await db.updateTable('audit_log').set({ data }).where('id', '=', id).execute();
}

forEachEngine('audit trail', (ctx) => {
  it('records changes, sensitive reads, sign-ins, impersonation, API-key and webhook-secret operations with who, what and where', async () => {
    const org = await createTestOrg(ctx());
    const headers = { ...org.admin.headers, 'user-agent': 'audit-test/1.0', 'x-request-id': 'req-audit-0001' };
    // a change reported by an event (asset), with the request's origin
    const template = await defaultTemplate(ctx(), org);
    const asset = await uploadAsset(ctx(), org, await jpeg(), 'audited.jpg', {}, headers);
    const patch = await ctx().inject({
      method: 'PATCH',
      url: `/v1/asset/${asset.objectId}`,
      headers,
      payload: { metadata: [{ metadataDefinitionId: template.attr('title'), metadataDefinitionValue: 'New title' }] },
    });
    // a download and an expose (sensitive reads)
    const content = await ctx().inject({ method: 'GET', url: `/v1/asset/${asset.objectId}/content`, headers });
    assert.equal(content.statusCode, 200, content.body);
    const bytes = await ctx().inject({
      method: 'GET',
      url: pathOf(json(content).presignedURL),
      headers: { 'user-agent': 'fetcher/2.0' },
    });
    assert.equal(bytes.statusCode, 200);
    const exposed = await ctx().inject({
      method: 'POST',
      url: '/v1/asset/expose',
      headers,
      payload: [{ id: asset.objectId, components: [{ componentType: 'object', componentRef: 'original' }] }],
    });
    assert.equal(exposed.statusCode, 200, exposed.body);
    // sign-in success and failure
    const user = await createTestUser(ctx(), org, { privileges: ['download'] });
    await login(ctx(), user);
    const bad = await ctx().inject({
      method: 'POST',
      url: '/v1/auth/token',
      payload: { username: user.username, password: 'not-the-password-1' },
    });
    assert.equal(bad.statusCode, 401);
    // impersonation, then a request made while impersonating
    const acting = await impersonationHeaders(ctx(), org.admin, user.username);
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/asset/${asset.objectId}/content`, headers: acting })).statusCode,
      200,
    );
    // API keys: create, a request with it, revoke
    const key = await createKey(ctx(), org, { roleId: org.roles.administrator });
    await ctx().inject({
      method: 'POST',
      url: '/v1/asset/expose',
      headers: { 'x-api-key': key.key },
      payload: [{ id: asset.objectId, components: [{ componentType: 'rendition', componentRef: 'thumbnail' }] }],
    });
    assert.equal(
      (await ctx().inject({ method: 'POST', url: REVOKE, headers: org.admin.headers, payload: { id: key.id } }))
        .statusCode,
      200,
    );
    // a webhook secret rotation (the secret itself never recorded)
    const hook = await ctx().inject({
      method: 'POST',
      url: '/webhooks/endpoint',
      headers: org.admin.headers,
      payload: [{ description: 'audit receiver', url: 'http://127.0.0.1:9/hook', eventTypes: ['*'] }],
    });
    assert.equal(hook.statusCode, 200, hook.body);
    const endpointId = json(hook).id as string;
    const rotated = await ctx().inject({
      method: 'POST',
      url: `/webhooks/endpoint/${endpointId}/secret/rotate`,
      headers: org.admin.headers,
      payload: {},
    });
    assert.equal(rotated.statusCode, 200, rotated.body);

    const rows = await trail(ctx(), org);
    const find = (action: string, pred: (e: Entry) => boolean = () => true) => {
      const e = rows.find((r) => r.action === action && pred(r));
      assert.ok(e, `${action} recorded; have ${[...new Set(rows.map((r) => r.action))].join(', ')}`);
      return e;
    };
    const created = find('asset.created');
    assert.equal(created.target.id, asset.objectId);
    assert.equal(created.actor.userId, org.admin.userId);
    if (patch.statusCode === 200) {
      const changed = rows.find((r) => r.operation === 'UpdateAsset' && r.target.id === asset.objectId);
      assert.ok(changed, 'the metadata change is recorded under its operationId');
    }
    const link = find(
      'asset.download_link',
      (e) => e.operation === 'GetAssetContent' && e.actor.impersonatorId === null,
    );
    assert.equal(link.target.id, asset.objectId);
    // the bytes served through the link: the download itself, from the fetcher's side
    const served = find('asset.downloaded', (e) => e.operation === 'GetSignedContent');
    assert.equal(served.actor.userId, org.admin.userId);
    assert.equal(served.origin?.userAgent, 'fetcher/2.0');
    const download = link;
    assert.equal(download.origin?.userAgent, 'audit-test/1.0');
    assert.equal(download.origin?.requestId, 'req-audit-0001');
    assert.ok(download.origin?.ip);
    const expose = find('asset.exposed', (e) => e.actor.apiKeyId === null);
    assert.equal(expose.operation, 'GetAssetUrl');
    assert.deepEqual(expose.data.assets[0].components, ['original']);
    assert.ok(!JSON.stringify(expose).includes('signature'), 'no capability URL in the trail');
    find('auth.signin', (e) => e.actor.userId === user.userId);
    const failed = find('auth.signin_failed', (e) => e.target.id === user.userId);
    assert.equal(failed.data.reason, 'wrong_password');
    assert.ok(!JSON.stringify(failed).includes('not-the-password-1'), 'the attempted password is never recorded');
    find('auth.impersonate');
    const asUser = find('asset.download_link', (e) => e.actor.impersonatorId === org.admin.userId);
    assert.equal(asUser.actor.userId, user.userId);
    assert.equal(asUser.actor.via, 'impersonation');
    find('api_key.created', (e) => e.target.id === key.id);
    find('api_key.revoked', (e) => e.target.id === key.id);
    const byKey = find('asset.exposed', (e) => e.actor.apiKeyId === key.id);
    assert.equal(byKey.actor.via, 'api_key');
    find('webhook_endpoint.secret_rotated', (e) => e.target.id === endpointId);
    assert.ok(!JSON.stringify(rows).includes(key.key), 'an API key never appears');
    assert.ok(!JSON.stringify(rows).includes(json(rotated).secret ?? 'none-such'), 'a webhook secret never appears');
    // every row is chained
    const report = await verifyChain(ctx().deps.db, ctx().deps.keys, org.orgId);
    assert.equal(report.ok, true, JSON.stringify(report));
    assert.equal(report.checked, rows.length);
  });

  it('filters by actor, object, operation and time; pages by keyset; exports CSV and JSON; Audit Log only', async () => {
    const org = await createTestOrg(ctx());
    const other = await createTestUser(ctx(), org, { privileges: ['upload'] });
    const t0 = ctx().clock.now();
    for (let i = 0; i < 7; i++) await createAsset(ctx(), org, { filename: `a${i}.jpg` });
    ctx().clock.advance(60_000);
    const mine = await createAsset(ctx(), org, { filename: 'other.jpg' }, other.headers);
    const all = await trail(ctx(), org);
    assert.ok(all.length >= 8);
    // actor
    const byOther = await trail(ctx(), org, `&actor=${other.userId}`);
    assert.ok(byOther.length >= 1 && byOther.every((e) => e.actor.userId === other.userId));
    // object
    const byObject = await trail(ctx(), org, `&object=${mine.objectId}`);
    assert.ok(
      byObject.length >= 1 &&
        byObject.every((e) => e.target.id === mine.objectId || JSON.stringify(e.data).includes(mine.objectId)),
    );
    // operation (operationId or action)
    assert.ok((await trail(ctx(), org, '&operation=CreateAsset')).length >= 8);
    assert.equal(
      (await trail(ctx(), org, '&operation=asset.created')).length,
      all.filter((e) => e.action === 'asset.created').length,
    );
    // time
    const later = await trail(ctx(), org, `&from=${encodeURIComponent(new Date(t0 + 30_000).toISOString())}`);
    assert.ok(later.length >= 1 && later.every((e) => Date.parse(e.at) >= t0 + 30_000));
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/audit?from=yesterday', headers: org.admin.headers })).statusCode,
      400,
    );
    const bad = json(await ctx().inject({ method: 'GET', url: '/v1/audit?cursor=nope', headers: org.admin.headers }));
    assert.equal(bad.details[0].field, 'querystring.cursor');
    // keyset pages: newest first, no duplicates, nothing skipped
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const res = await ctx().inject({
        method: 'GET',
        url: `/v1/audit?limit=3${cursor ? `&cursor=${cursor}` : ''}`,
        headers: org.admin.headers,
      });
      const body = json<{ items: Entry[]; next: string | null }>(res);
      seen.push(...body.items.map((e) => e.seq));
      cursor = body.next;
    } while (cursor);
    assert.deepEqual(
      seen,
      all.map((e) => e.seq),
    );
    assert.deepEqual(
      seen,
      [...seen].sort((a, b) => b - a),
    );
    // exports
    const csv = await ctx().inject({ method: 'GET', url: '/v1/audit/export?format=csv', headers: org.admin.headers });
    assert.equal(csv.statusCode, 200);
    assert.match(String(csv.headers['content-type']), /text\/csv/);
    assert.match(String(csv.headers['content-disposition']), /attachment/);
    const lines = csv.body.trim().split('\r\n');
    assert.equal(
      lines[0],
      'seq,at,actor_user_id,impersonator_id,api_key_id,oauth_client_id,via,operation,action,target_type,target_id,ip,user_agent,request_id,data,hash,prev_hash',
    );
    assert.equal(lines.length, all.length + 1);
    const exported = JSON.parse(
      (await ctx().inject({ method: 'GET', url: `/v1/audit/export?actor=${other.userId}`, headers: org.admin.headers }))
        .body,
    ) as Entry[];
    assert.deepEqual(
      exported.map((e) => e.id),
      byOther.map((e) => e.id),
    );
    // only holders of Audit Log
    for (const url of ['/v1/audit', '/v1/audit/export', '/v1/audit/verify']) {
      assert.equal((await ctx().inject({ method: 'GET', url, headers: other.headers })).statusCode, 403, url);
    }
    // another organization sees none of it
    const stranger = await createTestOrg(ctx());
    assert.equal((await trail(ctx(), stranger, `&object=${mine.objectId}`)).length, 0);
    const verify = json(await ctx().inject({ method: 'GET', url: '/v1/audit/verify', headers: org.admin.headers }));
    assert.equal(verify.ok, true);
  });

  it("shows an asset's history to whoever may view it; a hidden asset is a 404", async () => {
    const org = await createTestOrg(ctx());
    const group = await createGroup(ctx(), org);
    const viewer = await createTestUser(ctx(), org, { groupIds: [group] });
    const visible = await createAsset(ctx(), org, {
      filename: 'v.jpg',
      securityTemplateIds: [await createTemplate(ctx(), org, [[group, ['view']]])],
    });
    const hidden = await createAsset(ctx(), org, { filename: 'h.jpg' });
    const res = await ctx().inject({
      method: 'GET',
      url: `/v1/asset/${visible.objectId}/history`,
      headers: viewer.headers,
    });
    assert.equal(res.statusCode, 200, res.body);
    const items = json<{ items: Entry[] }>(res).items;
    assert.ok(items.some((e) => e.action === 'asset.registered' && e.operation === 'CreateAsset'));
    assert.ok(
      items.every((e) => e.origin === undefined),
      'addresses only for Audit Log holders',
    );
    const auditor = await createTestUser(ctx(), org, { groupIds: [group], privileges: ['audit_log'] });
    const full = await ctx().inject({
      method: 'GET',
      url: `/v1/asset/${visible.objectId}/history`,
      headers: auditor.headers,
    });
    assert.equal(full.statusCode, 200, full.body);
    assert.ok(json<{ items: Entry[] }>(full).items[0]!.origin);
    const missing = await ctx().inject({
      method: 'GET',
      url: `/v1/asset/${hidden.objectId}/history`,
      headers: viewer.headers,
    });
    assert.equal(missing.statusCode, 404);
    const none = await ctx().inject({
      method: 'GET',
      url: '/v1/asset/00000000-0000-4000-8000-000000000000/history',
      headers: viewer.headers,
    });
    assert.equal(none.statusCode, 404);
    assert.equal(none.json().code, missing.json().code);
  });

  it('verifies the chain; an edited, deleted or forged row breaks it at that link (also through `tessera audit verify`)', async () => {
    const org = await createTestOrg(ctx());
    const db = ctx().deps.db;
    for (let i = 0; i < 12; i++)
      await audit(db, {
        orgId: org.orgId,
        at: ctx().clock.now() + i,
        actorId: null,
        action: 'test.row',
        targetType: 'thing',
        targetId: `t${i}`,
        data: { i },
      });
    await sealOrg(db, ctx().deps.engine, ctx().deps.keys, org.orgId);
    const good = await auditVerify(ctx().deps, ['--org', org.orgId]);
    assert.equal(good.ok, true, good.text);
    assert.match(good.text, /ok, \d+ row\(s\) verified/);
    // a sealed row cannot simply be updated
    const rows = await db
      .selectFrom('audit_log')
      .select(['id', 'seq', 'data'])
      .where('org_id', '=', org.orgId)
      .orderBy('seq')
      .execute();
    await assert.rejects(
      db.updateTable('audit_log').set({ data: '{}' }).where('id', '=', rows[5]!.id).execute(),
      /append-only/,
    );
    // an edited row (trigger dropped, as a database owner could)
    await tamper(ctx(), rows[5]!.id, '{"i":500}');
    const edited = await verifyChain(db, ctx().deps.keys, org.orgId);
    assert.equal(edited.ok, false);
    assert.deepEqual(edited.broken, { seq: rows[5]!.seq, id: rows[5]!.id, reason: 'row_altered' });
    assert.equal(edited.checked, 5);
    const cli = await auditVerify(ctx().deps, ['--org', org.orgId]);
    assert.equal(cli.ok, false);
    assert.match(cli.text, new RegExp(`BROKEN at seq ${rows[5]!.seq} \\(row ${rows[5]!.id}\\): row_altered`));
    // restored, then a row removed from the middle
    await db.updateTable('audit_log').set({ data: rows[5]!.data }).where('id', '=', rows[5]!.id).execute();
    assert.equal((await verifyChain(db, ctx().deps.keys, org.orgId)).ok, true);
    await db.deleteFrom('audit_log').where('id', '=', rows[8]!.id).execute();
    assert.deepEqual((await verifyChain(db, ctx().deps.keys, org.orgId)).broken, {
      seq: rows[8]!.seq,
      id: null,
      reason: 'missing_row',
    });
    // the last row removed
    const org2 = await createTestOrg(ctx());
    for (let i = 0; i < 3; i++)
      await audit(db, {
        orgId: org2.orgId,
        at: ctx().clock.now(),
        actorId: null,
        action: 'test.row',
        targetType: 'thing',
        data: {},
      });
    await sealOrg(db, ctx().deps.engine, ctx().deps.keys, org2.orgId);
    const last = await db
      .selectFrom('audit_log')
      .select(['id', 'seq'])
      .where('org_id', '=', org2.orgId)
      .orderBy('seq', 'desc')
      .executeTakeFirstOrThrow();
    await db.deleteFrom('audit_log').where('id', '=', last.id).execute();
    assert.equal((await verifyChain(db, ctx().deps.keys, org2.orgId)).broken?.reason, 'missing_row');
  });

  it('does not fork under concurrent writers and sealers (two instances)', async () => {
    const org = await createTestOrg(ctx());
    // Two instances on PostgreSQL; SQLite's lock waits block the process, so there one instance's
    // transactions interleave (the SIGKILL test below runs a second process on SQLite).
    const second = ctx().engine === 'postgres' ? await ctx().secondInstance() : ctx();
    const writers = Array.from({ length: 12 }, (_, w) =>
      (w % 2 ? second.deps : ctx().deps).db.transaction().execute(async (trx) => {
        for (let i = 0; i < 5; i++)
          await audit(trx, {
            orgId: org.orgId,
            at: ctx().clock.now(),
            actorId: null,
            action: 'test.concurrent',
            targetType: 'thing',
            targetId: `w${w}-${i}`,
            data: {},
          });
      }),
    );
    const sealers = Array.from({ length: 6 }, (_, s) => {
      const d = s % 2 ? second.deps : ctx().deps;
      return sealOrg(d.db, d.engine, d.keys, org.orgId);
    });
    await Promise.all([...writers, ...sealers]);
    await sealOrg(ctx().deps.db, ctx().deps.engine, ctx().deps.keys, org.orgId);
    const seqs = (
      await ctx().deps.db.selectFrom('audit_log').select('seq').where('org_id', '=', org.orgId).orderBy('seq').execute()
    ).map((r) => Number(r.seq));
    assert.deepEqual(
      seqs,
      Array.from({ length: seqs.length }, (_, i) => i + 1),
    );
    assert.ok(seqs.length >= 60);
    const report = await verifyChain(ctx().deps.db, ctx().deps.keys, org.orgId);
    assert.equal(report.ok, true, JSON.stringify(report));
  });

  it('keeps verifying after retention prunes old rows (from the recorded anchor)', async () => {
    const org = await createTestOrg(ctx());
    const db = ctx().deps.db;
    const t = ctx().clock.now();
    for (let i = 0; i < 10; i++)
      await audit(db, {
        orgId: org.orgId,
        at: t - (10 - i) * 86_400_000,
        actorId: null,
        action: 'test.old',
        targetType: 'thing',
        targetId: `o${i}`,
        data: {},
      });
    await sealOrg(db, ctx().deps.engine, ctx().deps.keys, org.orgId);
    const removed = await pruneOrg(ctx().deps, org.orgId, t - 5 * 86_400_000);
    assert.ok(removed >= 5, `removed ${removed}`);
    const report = await verifyChain(db, ctx().deps.keys, org.orgId);
    assert.equal(report.ok, true, JSON.stringify(report));
    assert.ok(report.anchorSeq >= 5);
    assert.equal(report.firstSeq, report.anchorSeq + 1);
    assert.equal(
      (
        await db
          .selectFrom('audit_objects')
          .select('object_id')
          .where('org_id', '=', org.orgId)
          .where('object_id', '=', 'o0')
          .execute()
      ).length,
      0,
    );
    // the anchor row itself is gone: a forged anchor breaks verification
    await db.updateTable('audit_heads').set({ anchor_hash: 'forged' }).where('org_id', '=', org.orgId).execute();
    assert.equal((await verifyChain(db, ctx().deps.keys, org.orgId)).broken?.reason, 'previous_hash_mismatch');
  });

  it('verifies after a writer process is killed with SIGKILL mid-write', async () => {
    const org = await createTestOrg(ctx());
    const env = {
      ...process.env,
      TESSERA_DATA_DIR: ctx().dataDir,
      TESSERA_SECRET_KEY: ctx().config.secretKey ?? '',
      TESSERA_LOG_LEVEL: 'silent',
      AUDIT_ORG: org.orgId,
      ...(ctx().engine === 'postgres' ? { DATABASE_URL: (ctx().database as { url: string }).url } : {}),
    };
    const child = spawn(process.execPath, ['test/helpers/audit-writer.ts'], {
      env,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    child.on('message', (m: { written: number; sealed: number }) => {
      // well into the run: rows are being written and sealed at the same time
      if (m.written >= 300 && m.sealed >= 50) child.kill('SIGKILL');
    });
    const end = await exited;
    assert.equal(end.signal, 'SIGKILL', `the writer exited by itself (${end.code})`);
    const before = await verifyChain(ctx().deps.db, ctx().deps.keys, org.orgId);
    assert.equal(before.ok, true, JSON.stringify(before));
    await sealOrg(ctx().deps.db, ctx().deps.engine, ctx().deps.keys, org.orgId);
    const after = await verifyChain(ctx().deps.db, ctx().deps.keys, org.orgId);
    assert.equal(after.ok, true, JSON.stringify(after));
    assert.equal(after.unsealed, 0);
    // whole transactions only: every committed write of ten is there
    const count = Number(
      (
        await ctx()
          .deps.db.selectFrom('audit_log')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('org_id', '=', org.orgId)
          .where('action', '=', 'test.write')
          .executeTakeFirstOrThrow()
      ).n,
    );
    assert.equal(count % 10, 0);
    assert.ok(count >= 300);
  });
});
