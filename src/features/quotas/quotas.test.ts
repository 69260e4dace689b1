import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createHash } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { createTestContext, ENGINES, forEachEngine, json, type TestContext } from '../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg } from '../../../test/helpers/factories.ts';
import { assetWorker, createAsset, jpeg, pathOf, uploadAsset } from '../../../test/helpers/assets.ts';
import { createKey } from '../../../test/helpers/api-keys.ts';
import { startSmtp } from '../../../test/helpers/smtp.ts';
import { defaultTemplateId } from '../metadata/index.ts';
import type { Worker } from '../../core/jobs/worker.ts';
import type { App } from '../../core/http/app-types.ts';

const smtp = await startSmtp();
after(() => smtp.close());

/** A multipart/form-data body for POST /v1/asset/upload: fields first, then the file. */
function form(fields: Record<string, string>, file: { name: string; type: string; bytes: Buffer }) {
  const boundary = `----tessera${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields))
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  parts.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: ${file.type}\r\n\r\n`,
    ),
    file.bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { payload: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** A text file of exactly `size` bytes whose content differs by `n` (distinct SHA-256 each). */
function textOf(n: number, size = 1000): Buffer {
  const head = `file ${n} `;
  return Buffer.from(head + 'x'.repeat(size - head.length));
}

async function formUpload(
  app: App | TestContext,
  org: TestOrg,
  bytes: Buffer,
  name: string,
  headers = org.admin.headers,
) {
  const body = form(
    {
      metadataTemplateId: (await defaultTemplateIdOf(app, org))!,
      securityTemplateIds: org.defaultTemplateId,
      metadata: '[]',
    },
    { name, type: name.endsWith('.jpg') ? 'image/jpeg' : 'text/plain', bytes },
  );
  return app.inject({
    method: 'POST',
    url: '/v1/asset/upload',
    headers: { ...headers, 'content-type': body.contentType },
    payload: body.payload,
  }) as Promise<LightMyRequestResponse>;
}

let templateIds = new Map<string, string>();
async function defaultTemplateIdOf(app: App | TestContext, org: TestOrg): Promise<string> {
  let id = templateIds.get(org.orgId);
  if (!id) {
    const ctx = app as TestContext;
    id = (await defaultTemplateId((ctx.deps ?? current!.deps).db, org.orgId))!;
    templateIds.set(org.orgId, id);
  }
  return id;
}
let current: TestContext | undefined;

async function setQuotas(ctx: TestContext, org: TestOrg, body: Record<string, unknown>) {
  const res = await ctx.inject({ method: 'PATCH', url: '/v1/quotas', headers: org.admin.headers, payload: body });
  assert.equal(res.statusCode, 200, res.body);
  return json(res);
}

async function quotas(ctx: TestContext, org: TestOrg) {
  const res = await ctx.inject({ method: 'GET', url: '/v1/quotas', headers: org.admin.headers });
  assert.equal(res.statusCode, 200, res.body);
  return json(res);
}

async function assetCount(ctx: TestContext, org: TestOrg): Promise<number> {
  const row = await ctx.deps.db
    .selectFrom('assets')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', org.orgId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

const contentKeyOf = (org: TestOrg, bytes: Buffer) => {
  const sha = createHash('sha256').update(bytes).digest('hex');
  return `content/${org.orgId}/${sha.slice(0, 2)}/${sha}`;
};

forEachEngine(
  'quotas and limits',
  (ctx) => {
    let worker: Worker;
    before(() => {
      current = ctx();
      templateIds = new Map();
      worker = assetWorker(ctx());
    });
    after(() => worker.stop());

    it('GET /v1/quotas: no limits by default, usage counts bytes and assets; Quota Management or Audit Log reads it', async () => {
      const org = await createTestOrg(ctx());
      const bytes = await jpeg(40, 30);
      await uploadAsset(ctx(), org, bytes, 'a.jpg');
      await createAsset(ctx(), org, {});
      const q = await quotas(ctx(), org);
      assert.deepEqual(q.usage, { storageBytes: bytes.length, assets: 2 });
      assert.equal(q.quotas.storageBytes.limit, null);
      assert.equal(q.quotas.storageBytes.source, 'default');
      assert.equal(q.quotas.storageBytes.used, bytes.length);
      assert.equal(q.quotas.assets.used, 2);
      assert.equal(q.quotas.uploadsPerUserPerHour.used, 0);
      assert.equal(q.quotas.shareMailPerHour.limit, 1000, 'the server default TESSERA_SHARE_MAIL_PER_ORG_PER_HOUR');
      const auditor = await createTestUser(ctx(), org, { privileges: ['audit_log'] });
      assert.equal(
        (await ctx().inject({ method: 'GET', url: '/v1/quotas', headers: auditor.headers })).statusCode,
        200,
      );
      const nobody = await createTestUser(ctx(), org, { privileges: ['upload'] });
      const refused = await ctx().inject({ method: 'GET', url: '/v1/quotas', headers: nobody.headers });
      assert.equal(refused.statusCode, 403, refused.body);
      // Audit Log reads, only Quota Management sets.
      const set = await ctx().inject({
        method: 'PATCH',
        url: '/v1/quotas',
        headers: auditor.headers,
        payload: { assets: 1 },
      });
      assert.equal(set.statusCode, 403, set.body);
      // Another organization's usage is its own.
      const other = await createTestOrg(ctx());
      assert.deepEqual((await quotas(ctx(), other)).usage, { storageBytes: 0, assets: 0 });
    });

    it('PATCH /v1/quotas: sets, clears to the default, 0 is no limit; bad input is a 400 naming the field; audited', async () => {
      const org = await createTestOrg(ctx());
      const q = await setQuotas(ctx(), org, { storageBytes: 5000, assets: 0 });
      assert.equal(q.quotas.storageBytes.limit, 5000);
      assert.equal(q.quotas.storageBytes.source, 'organization');
      assert.equal(q.quotas.assets.limit, null);
      assert.equal(q.quotas.assets.organizationValue, 0);
      const cleared = await setQuotas(ctx(), org, { storageBytes: null });
      assert.equal(cleared.quotas.storageBytes.limit, null);
      assert.equal(cleared.quotas.storageBytes.source, 'default');
      for (const [payload, field] of [
        [{}, 'body'],
        [{ assets: -1 }, 'body.assets'],
        [{ assets: 1.5 }, 'body.assets'],
        [{ storageBytes: 'many' }, 'body.storageBytes'],
        // Unknown fields are dropped by the validator (as everywhere): what is left names nothing.
        [{ unknown: 1 }, 'body'],
        // A __proto__ key is refused by the JSON parser itself (400 invalid_json).
        ['{"__proto__": {"assets": 1}}', null],
        [{ constructor: 1 }, 'body'],
      ] as const) {
        const res = await ctx().inject({
          method: 'PATCH',
          url: '/v1/quotas',
          headers: { ...org.admin.headers, 'content-type': 'application/json' },
          payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
        });
        assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`);
        if (field === null) continue;
        assert.ok(
          json(res).details?.some((d: { field: string }) => d.field === field) || json(res).message.startsWith(field),
          `${field} named in ${res.body}`,
        );
      }
      const rows = await ctx()
        .deps.db.selectFrom('audit_log')
        .select(['action', 'data'])
        .where('org_id', '=', org.orgId)
        .where('action', '=', 'quotas.updated')
        .execute();
      assert.equal(rows.length, 2);
    });

    it('storage: a form upload past the quota is a 413 naming the quota, its limit and use, and keeps no asset and no blob', async () => {
      const org = await createTestOrg(ctx());
      const first = textOf(1, 1000);
      const second = textOf(2, 1000);
      await setQuotas(ctx(), org, { storageBytes: 1500 });
      const ok = await formUpload(ctx(), org, first, 'one.txt');
      assert.equal(ok.statusCode, 200, ok.body);
      const before = await assetCount(ctx(), org);
      const refused = await formUpload(ctx(), org, second, 'two.txt');
      assert.equal(refused.statusCode, 413, refused.body);
      const body = json(refused);
      assert.equal(body.code, 'payload_too_large');
      assert.deepEqual(body.quota, { name: 'storageBytes', limit: 1500, used: 1000, requested: 1000 });
      assert.match(body.message, /storageBytes/);
      assert.equal(await assetCount(ctx(), org), before, 'no asset row');
      assert.equal(await ctx().deps.blobs.head(contentKeyOf(org, second)), null, 'no content blob');
      assert.deepEqual((await quotas(ctx(), org)).usage, { storageBytes: 1000, assets: 1 });
    });

    it('storage: a declared size is refused at create; undeclared bytes past the quota are refused on arrival and deleted', async () => {
      const org = await createTestOrg(ctx());
      await setQuotas(ctx(), org, { storageBytes: 1500 });
      const declared = await ctx().inject({
        method: 'POST',
        url: '/v1/asset',
        headers: org.admin.headers,
        payload: {
          metadataTemplateId: await defaultTemplateIdOf(ctx(), org),
          securityTemplateIds: [org.defaultTemplateId],
          metadata: [],
          filename: 'big.txt',
          filesize: 2000,
        },
      });
      assert.equal(declared.statusCode, 413, declared.body);
      assert.equal(json(declared).quota.name, 'storageBytes');
      assert.equal(await assetCount(ctx(), org), 0);
      // Declared and within the quota: counted from the create call on, given back when cancelled.
      const held = await createAsset(ctx(), org, { filename: 'held.txt', filesize: 1200 });
      assert.equal((await quotas(ctx(), org)).usage.storageBytes, 1200);
      const cancel = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/complete',
        headers: org.admin.headers,
        payload: { action: 'cancel', fileId: held.fileId },
      });
      assert.equal(cancel.statusCode, 200, cancel.body);
      assert.equal((await quotas(ctx(), org)).usage.storageBytes, 0);
      // Undeclared: the bytes decide when they arrive.
      const open = await createAsset(ctx(), org, { filename: 'open.txt' });
      const bytes = textOf(3, 1600);
      const put = await ctx().inject({
        method: 'PUT',
        url: pathOf(open.url!),
        payload: bytes,
        headers: { 'content-type': 'text/plain' },
      });
      assert.equal(put.statusCode, 413, put.body);
      assert.deepEqual(json(put).quota, { name: 'storageBytes', limit: 1500, used: 0, requested: 1600 });
      assert.equal(await ctx().deps.blobs.head(contentKeyOf(org, bytes)), null);
      const row = await ctx()
        .deps.db.selectFrom('assets')
        .select(['content_state', 'size'])
        .where('id', '=', open.objectId)
        .executeTakeFirstOrThrow();
      assert.equal(row.content_state, 'pending', 'the upload stays open for smaller content');
      assert.equal((await quotas(ctx(), org)).usage.storageBytes, 0);
      // Smaller content to the same URL is taken.
      const small = textOf(4, 500);
      const put2 = await ctx().inject({
        method: 'PUT',
        url: pathOf(open.url!),
        payload: small,
        headers: { 'content-type': 'text/plain' },
      });
      assert.equal(put2.statusCode, 200, put2.body);
      assert.equal((await quotas(ctx(), org)).usage.storageBytes, 500);
    });

    it('storage: concurrent uploads through two app instances never take the organization past its quota', async () => {
      const org = await createTestOrg(ctx());
      const second = await ctx().secondInstance();
      // Room for exactly three of the eight 1000-byte files.
      await setQuotas(ctx(), org, { storageBytes: 3500 });
      const files = Array.from({ length: 8 }, (_, i) => textOf(100 + i, 1000));
      const answers = await Promise.all(
        files.map((bytes, i) =>
          i % 2 === 0 ? formUpload(ctx(), org, bytes, `f${i}.txt`) : formUpload(second.app, org, bytes, `f${i}.txt`),
        ),
      );
      const ok = answers.filter((a) => a.statusCode === 200);
      const refused = answers.filter((a) => a.statusCode !== 200);
      assert.equal(ok.length, 3, answers.map((a) => `${a.statusCode} ${a.body}`).join('\n'));
      for (const r of refused) {
        // 413 by the quota; on SQLite a writer that found the database busy may be told to retry (503).
        assert.ok([413, 503].includes(r.statusCode), r.body);
        if (r.statusCode === 413) assert.equal(json(r).quota.name, 'storageBytes');
      }
      const usage = (await quotas(ctx(), org)).usage;
      assert.deepEqual(usage, { storageBytes: 3000, assets: 3 });
      assert.equal(await assetCount(ctx(), org), 3, 'refused uploads left no asset');
      let blobs = 0;
      for (const f of files) if (await ctx().deps.blobs.head(contentKeyOf(org, f))) blobs++;
      assert.equal(blobs, 3, 'refused uploads left no blob');
    });

    it('assets: the asset quota refuses a create (409) and a bulk create past it, whole; versions do not count; a purge gives room back', async () => {
      const org = await createTestOrg(ctx());
      await setQuotas(ctx(), org, { assets: 2 });
      const a = await uploadAsset(ctx(), org, await jpeg(20, 20), 'a.jpg');
      await createAsset(ctx(), org, {});
      const third = await ctx().inject({
        method: 'POST',
        url: '/v1/asset',
        headers: org.admin.headers,
        payload: {
          metadataTemplateId: await defaultTemplateIdOf(ctx(), org),
          securityTemplateIds: [org.defaultTemplateId],
          metadata: [],
        },
      });
      assert.equal(third.statusCode, 409, third.body);
      assert.deepEqual(json(third).quota, { name: 'assets', limit: 2, used: 2, requested: 1 });
      // A new version of an existing asset is not a new asset.
      const version = await createAsset(ctx(), org, { filename: 'a2.jpg', originalFileId: a.originalFileId });
      assert.equal(version.versionNumber, 2);
      await setQuotas(ctx(), org, { assets: 3 });
      const bulk = await ctx().inject({
        method: 'POST',
        url: '/v1/assets/bulk',
        headers: org.admin.headers,
        payload: {
          assets: [0, 1].map(() => ({
            metadataTemplateId: templateIds.get(org.orgId),
            securityTemplateIds: [org.defaultTemplateId],
            metadata: [],
          })),
        },
      });
      assert.equal(bulk.statusCode, 409, bulk.body);
      assert.equal(json(bulk).quota.name, 'assets');
      assert.equal((await quotas(ctx(), org)).usage.assets, 2, 'nothing of the bulk request was created');
      // Purged assets give their room (and bytes) back.
      const del = await ctx().inject({
        method: 'POST',
        url: `/v1/asset/${a.objectId}/delete`,
        headers: org.admin.headers,
        payload: { action: 'delete' },
      });
      assert.ok(del.statusCode < 300, del.body);
      const purge = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/purge',
        headers: org.admin.headers,
        payload: { objectIds: [a.objectId] },
      });
      assert.equal(purge.statusCode, 200, purge.body);
      await worker.drain();
      assert.deepEqual((await quotas(ctx(), org)).usage, { storageBytes: 0, assets: 1 });
    });

    it('uploads per user per hour: the next upload is a 429 with Retry-After to the next hour; other users and metadata-only assets are not counted', async () => {
      const org = await createTestOrg(ctx());
      await setQuotas(ctx(), org, { uploadsPerUserPerHour: 2 });
      const hourStart = Math.floor(ctx().clock.now() / 3_600_000) * 3_600_000;
      await createAsset(ctx(), org, { filename: 'u1.jpg' });
      await createAsset(ctx(), org, {});
      await createAsset(ctx(), org, { filename: 'u2.jpg' });
      const before = await assetCount(ctx(), org);
      const third = await formUpload(ctx(), org, textOf(7), 'u3.txt');
      assert.equal(third.statusCode, 429, third.body);
      assert.deepEqual(json(third).quota, { name: 'uploadsPerUserPerHour', limit: 2, used: 2, requested: 1 });
      const retry = Number(third.headers['retry-after']);
      assert.equal(retry, Math.ceil((hourStart + 3_600_000 - ctx().clock.now()) / 1000));
      assert.equal(await assetCount(ctx(), org), before);
      const q = await quotas(ctx(), org);
      assert.equal(q.quotas.uploadsPerUserPerHour.used, 2);
      assert.deepEqual(q.quotas.uploadsPerUserPerHour.subjects, [{ id: org.admin.userId, used: 2 }]);
      const colleague = await createTestUser(ctx(), org, { privileges: ['upload'], groupIds: [] });
      const theirs = await formUpload(ctx(), org, textOf(8), 'c.txt', colleague.headers);
      assert.notEqual(theirs.statusCode, 429, theirs.body);
      ctx().clock.advance(hourStart + 3_600_000 - ctx().clock.now());
      await createAsset(ctx(), org, { filename: 'next-hour.jpg' });
    });

    it('API requests per key per minute: counted in the database across instances; 429 with Retry-After; other keys unaffected', async () => {
      const org = await createTestOrg(ctx());
      const second = await ctx().secondInstance();
      await setQuotas(ctx(), org, { apiRequestsPerKeyPerMinute: 3 });
      // Both instances are past their one-second limits cache.
      ctx().clock.advance(2000);
      const key = await createKey(ctx(), org);
      const other = await createKey(ctx(), org);
      const minuteStart = Math.floor(ctx().clock.now() / 60_000) * 60_000;
      const call = (app: App | TestContext, k: string) =>
        app.inject({ method: 'GET', url: '/v1/user', headers: { 'x-api-key': k } }) as Promise<LightMyRequestResponse>;
      assert.equal((await call(ctx(), key.key)).statusCode, 200);
      const b = await call(second.app, key.key);
      assert.equal(b.statusCode, 200, b.body);
      assert.equal(b.headers['ratelimit-remaining'], '1');
      assert.equal((await call(ctx(), key.key)).statusCode, 200);
      const refused = await call(second.app, key.key);
      assert.equal(refused.statusCode, 429, refused.body);
      assert.equal(json(refused).quota.name, 'apiRequestsPerKeyPerMinute');
      assert.equal(json(refused).quota.limit, 3);
      assert.equal(
        Number(refused.headers['retry-after']),
        Math.ceil((minuteStart + 60_000 - ctx().clock.now()) / 1000),
      );
      assert.equal((await call(ctx(), other.key)).statusCode, 200, 'another key has its own count');
      // A person's own token is not an API key.
      assert.equal(
        (await ctx().inject({ method: 'GET', url: '/v1/user', headers: org.admin.headers })).statusCode,
        200,
      );
      ctx().clock.advance(minuteStart + 60_000 - ctx().clock.now());
      assert.equal((await call(second.app, key.key)).statusCode, 200, 'a new minute');
    });
  },
  { env: { TESSERA_SMTP_URL: `smtp://127.0.0.1:${smtp.port}` } },
);

describe('quotas: share mail per hour follows the organization', () => {
  for (const engine of ENGINES) {
    it(`refuses a share past the organization's shareMailPerHour with 429 naming it [${engine.name}]`, {
      skip: engine.skip,
    }, async () => {
      const ctx = await createTestContext(engine.name, {
        env: { TESSERA_SMTP_URL: `smtp://127.0.0.1:${smtp.port}` },
      });
      try {
        current = ctx;
        const org = await createTestOrg(ctx);
        const asset = await uploadAsset(ctx, org, await jpeg(10, 10), 's.jpg');
        await setQuotas(ctx, org, { shareMailPerHour: 2 });
        const share = (emails: string[]) =>
          ctx.inject({
            method: 'POST',
            url: '/v1/asset/share',
            headers: org.admin.headers,
            payload: {
              sender: { name: 'A' },
              shareUsers: emails.map((email) => ({ email })),
              assets: [asset.objectId],
            },
          });
        assert.equal((await share(['a@example.test'])).statusCode, 200);
        const refused = await share(['b@example.test', 'c@example.test']);
        assert.equal(refused.statusCode, 429, refused.body);
        assert.ok(Number(refused.headers['retry-after']) > 0);
        assert.deepEqual(json(refused).quota, { name: 'shareMailPerHour', limit: 2, used: 1, requested: 2 });
        assert.equal((await quotas(ctx, org)).quotas.shareMailPerHour.used, 1);
      } finally {
        await ctx.close();
      }
    });
  }
});
