import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import sharp from 'sharp';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg } from '../../../../test/helpers/factories.ts';
import { securitySuite } from '../../../../test/helpers/security.ts';
import { startSmtp } from '../../../../test/helpers/smtp.ts';
import type { Worker } from '../../../core/jobs/worker.ts';
import { assetWorker, createAsset, defaultTemplate, jpeg, pathOf, uploadAsset } from '../assets.fixtures.ts';

const smtp = await startSmtp();
const { mails, port: smtpPort } = smtp;
after(() => smtp.close());

function multipartBody(fields: Record<string, string>, file: { name: string; type: string; data: Buffer }) {
  const boundary = `----tessera${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: ${file.type}\r\n\r\n`), file.data, Buffer.from(`\r\n--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

forEachEngine('assets: share by e-mail (real SMTP server)', (ctx) => {
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
    const res = await ctx().inject({ method: 'POST', url: '/v1/asset/share', headers: org.admin.headers, payload: { sender: { name: 'Ann' }, shareUsers: [{ email: 'bob@example.test', name: 'Bob' }, { email: 'cy@example.test' }], assets: [a.objectId], shareMessage: 'For you' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).message, 'Message queued for delivery');
    assert.equal(json(res).mailQueued, true);
    assert.equal(json(res).mailIds.length, 2);
    await worker.drain();
    assert.equal(mails.length, 2);
    const outbox = await ctx().deps.db.selectFrom('mail_outbox').select(['status', 'attempts']).where('id', 'in', json(res).mailIds).execute();
    assert.deepEqual(outbox.map((m) => [m.status, Number(m.attempts)]), [['sent', 1], ['sent', 1]]);
    const link = json(res).links[0].url as string;
    assert.ok(mails[0]!.body.includes(new URL(link).pathname));
    assert.equal((await ctx().inject({ method: 'GET', url: pathOf(link) })).statusCode, 200);
    const ev = await ctx().deps.db.selectFrom('events').select('type').where('org_id', '=', org.orgId).where('type', '=', 'asset.shared').execute();
    assert.equal(ev.length, 1);
    for (const [body, field] of [
      [{ shareUsers: [{ email: 'x@example.test' }], assets: [a.objectId] }, 'body.sender'],
      [{ sender: { name: 'A' }, assets: [a.objectId] }, 'body.shareUsers'],
      [{ sender: { name: 'A' }, shareUsers: [{ email: 'nope' }], assets: [a.objectId] }, 'body.shareUsers.0.email'],
      [{ sender: { name: 'A' }, shareUsers: [{ email: 'x@example.test' }], assets: [] }, 'body.assets'],
      [{ sender: { name: 'A' }, shareUsers: [{ email: 'x@example.test' }], assets: ['0190a4b2-0000-7000-8000-000000000000'] }, 'body.assets.0'],
    ] as const) {
      const bad = await ctx().inject({ method: 'POST', url: '/v1/asset/share', headers: org.admin.headers, payload: body });
      assert.equal(bad.statusCode, 400, bad.body);
      assert.equal(json(bad).details[0].field, field);
    }
  });
}, { env: { TESSERA_SMTP_URL: `smtp://127.0.0.1:${smtpPort}` } });

forEachEngine('assets: share without SMTP, technical metadata, preview replacement, form upload', (ctx) => {
  let org: TestOrg;
  let worker: Worker;
  before(async () => {
    org = await createTestOrg(ctx());
    worker = assetWorker(ctx());
  });
  after(async () => worker.stop());

  it('answers a share with its links and says no mail was sent when SMTP is not configured', async () => {
    const a = await uploadAsset(ctx(), org, await jpeg(20, 20), 'nomail.jpg');
    const res = await ctx().inject({ method: 'POST', url: '/v1/asset/share', headers: org.admin.headers, payload: { sender: { name: 'Ann' }, shareUsers: [{ email: 'bob@example.test' }], assets: [a.objectId] } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).mailQueued, false);
    assert.deepEqual(json(res).mailIds, []);
    assert.match(json(res).message, /no mail was sent/);
    assert.equal(json(res).links.length, 1);
  });

  it('sets technical metadata of federated assets only', async () => {
    const fed = await createAsset(ctx(), org, { filename: 'remote.tif', contentPath: 's3://their-bucket/path/remote.tif', skipTranscode: true });
    assert.equal(fed.url, 's3://their-bucket/path/remote.tif');
    const ok = await ctx().inject({ method: 'POST', url: `/v1/asset/${fed.objectId}/technical-metadata`, headers: org.admin.headers, payload: { tenovos_metadata: { fileName: 'remote.tif', MD5Checksum: 'abc' }, image_metadata: { imageWidth: 10 } } });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual(json(ok), { message: 'Success' });
    const asset = json(await ctx().inject({ method: 'GET', url: `/v1/asset/${fed.objectId}`, headers: org.admin.headers }));
    assert.equal(asset.technicalMetadata.tenovos_metadata.MD5Checksum, 'abc');
    assert.equal(asset.isFederated, true);
    const local = await createAsset(ctx(), org);
    const no = await ctx().inject({ method: 'POST', url: `/v1/asset/${local.objectId}/technical-metadata`, headers: org.admin.headers, payload: { image_metadata: {} } });
    assert.equal(no.statusCode, 400);
    assert.equal(json(no).message, 'Asset is not federated');
  });

  it('replaces the preview rendition with an uploaded image', async () => {
    const a = await uploadAsset(ctx(), org, await jpeg(1200, 900), 'orig.jpg');
    await worker.drain();
    const replacement = await sharp({ create: { width: 500, height: 100, channels: 3, background: '#00ff00' } }).png().toBuffer();
    const res = await ctx().inject({ method: 'POST', url: '/v1/asset/content/preview', headers: org.admin.headers, payload: { fileIds: [a.fileId], filename: 'preview.png', filesize: replacement.length } });
    assert.equal(res.statusCode, 200, res.body);
    const put = await ctx().inject({ method: 'PUT', url: pathOf(json(res).uploads[0].url), payload: replacement });
    assert.equal(put.statusCode, 200, put.body);
    await worker.drain();
    const asset = json(await ctx().inject({ method: 'GET', url: `/v1/asset/${a.objectId}`, headers: org.admin.headers }));
    const preview = await ctx().inject({ method: 'GET', url: pathOf(asset.renditions.imagePreview), headers: org.admin.headers });
    assert.deepEqual([(await sharp(preview.rawPayload).metadata()).width, (await sharp(preview.rawPayload).metadata()).height], [500, 100]);
    for (const [body, field] of [[{ filename: 'p.png', filesize: 1 }, 'body.fileIds'], [{ fileIds: [a.fileId], filesize: 1 }, 'body.filename'], [{ fileIds: [a.fileId], filename: 'p.png' }, 'body.filesize'], [{ fileIds: ['0190a4b2-0000-7000-8000-000000000000'], filename: 'p.png', filesize: 1 }, 'body.fileIds'], [{ fileIds: [a.fileId], filename: 'p.docx', filesize: 1 }, 'body.filename']] as const) {
      const bad = await ctx().inject({ method: 'POST', url: '/v1/asset/content/preview', headers: org.admin.headers, payload: body });
      assert.equal(bad.statusCode, 400, bad.body);
      assert.equal(json(bad).details[0].field, field);
    }
    // Upload URLs for every file named: at most 10,000 parts in all, whatever the size or count.
    const ids = ['0190a4b2-0000-7000-8000-000000000001', '0190a4b2-0000-7000-8000-000000000002'];
    for (const [fileIds, filesize, message] of [[ids.slice(0, 1), 1e15, /must be <= 5497558138880/], [ids.slice(0, 1), 2 * 1024 ** 4, /10000 parts/], [ids, 600 * 1024 ** 3, /with 2 files, must be at most/], [ids.slice(0, 1), '1e999', /out of range/]] as const) {
      const bad = await ctx().inject({ method: 'POST', url: '/v1/asset/content/preview', headers: org.admin.headers, payload: { fileIds, filename: 'p.png', filesize } });
      assert.equal(bad.statusCode, 400, bad.body);
      assert.equal(json(bad).details[0].field, 'body.filesize');
      assert.match(json(bad).details[0].message, message);
    }
  });

  it('a multipart body the parser cannot read is a 400 naming the body', async () => {
    for (const contentType of ['multipart/form-data; boundary=zzz', 'multipart/form-data']) {
      const res = await ctx().inject({ method: 'POST', url: '/v1/asset/upload', headers: { ...org.admin.headers, 'content-type': contentType }, payload: 'garbage' });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res).details[0].field, 'body');
      assert.match(json(res).details[0].message, /not well-formed multipart/);
    }
  });

  it('accepts a small file as multipart/form-data in one request', async () => {
    const { id } = await defaultTemplate(ctx(), org);
    const data = await jpeg(60, 40);
    const form = multipartBody({ metadataTemplateId: id, securityTemplateIds: JSON.stringify([org.defaultTemplateId]), metadata: JSON.stringify([{ name: 'Title', value: 'Form' }]) }, { name: 'form.jpg', type: 'image/jpeg', data });
    const res = await ctx().inject({ method: 'POST', url: '/v1/asset/upload', headers: { ...org.admin.headers, 'content-type': form.contentType }, payload: form.payload });
    assert.equal(res.statusCode, 200, res.body);
    const asset = json(await ctx().inject({ method: 'GET', url: `/v1/asset/${json(res).objectId}`, headers: org.admin.headers }));
    assert.equal(asset.fileSizeInBytes, data.length);
    assert.equal(asset.metadataDenormalized.title, 'Form');
    assert.equal(asset.filename, 'form.jpg');
    const wrong = multipartBody({ metadataTemplateId: id, securityTemplateIds: org.defaultTemplateId }, { name: 'fake.png', type: 'image/png', data });
    const bad = await ctx().inject({ method: 'POST', url: '/v1/asset/upload', headers: { ...org.admin.headers, 'content-type': wrong.contentType }, payload: wrong.payload });
    assert.equal(bad.statusCode, 400, bad.body);
  });

  securitySuite(ctx, 'POST /v1/asset/share', { method: 'POST', prepare: async (c, o) => ({ url: '/v1/asset/share', body: { sender: { name: 'A' }, shareUsers: [{ email: 'a@example.test' }], assets: [(await uploadAsset(c, o, await jpeg(10, 10), 's.jpg')).objectId] } }) });
  securitySuite(ctx, 'POST /v1/asset/{id}/technical-metadata', { method: 'POST', resource: true, prepare: async (c, o) => ({ url: `/v1/asset/${(await createAsset(c, o, { filename: 'f.tif', contentPath: 's3://b/f.tif' })).objectId}/technical-metadata`, body: { image_metadata: {} } }) });
  securitySuite(ctx, 'POST /v1/asset/content/preview', { method: 'POST', privileges: ['replace_mezzanine', 'upload'], prepare: async (c, o) => ({ url: '/v1/asset/content/preview', body: { fileIds: [(await uploadAsset(c, o, await jpeg(10, 10), 's.jpg')).fileId], filename: 'p.png', filesize: 10 } }) });
  securitySuite(ctx, 'POST /v1/asset/renditions', { method: 'POST', privileges: ['content_management'], prepare: async (c, o) => ({ url: '/v1/asset/renditions', body: { objectIds: [(await createAsset(c, o)).objectId] } }) });
});
void createTestUser;

forEachEngine('assets: share mail rate limits (issue 23, defect 7)', (ctx) => {
  let worker: Worker;
  before(() => { worker = assetWorker(ctx()); });
  after(async () => worker.stop());
  const to = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ email: `r${i}-${tag}@example.test` }));
  const share = (headers: Record<string, string>, asset: string, n: number, tag: string) =>
    ctx().inject({ method: 'POST', url: '/v1/asset/share', headers, payload: { sender: { name: 'Anyone' }, shareUsers: to(n, tag), assets: [asset], shareMessage: 'text of their own' } });
  const queued = async (orgId: string) => Number((await ctx().deps.db.selectFrom('mail_outbox').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId).executeTakeFirstOrThrow()).n);

  it('limits share mail per user and per organization per hour: 429 with Retry-After naming the limit, nothing queued', async () => {
    const org = await createTestOrg(ctx());
    const other = await createTestUser(ctx(), org, { groupIds: [org.groups.administrators] });
    const a = await uploadAsset(ctx(), org, await jpeg(20, 20), 'limited.jpg');
    assert.equal((await share(org.admin.headers, a.objectId, 3, 'a1')).statusCode, 200);
    const overUser = await share(org.admin.headers, a.objectId, 3, 'a2');
    assert.equal(overUser.statusCode, 429, overUser.body);
    assert.ok(Number(overUser.headers['retry-after']) >= 1);
    assert.match(json(overUser).message, /at most 5 mails per user per hour \(TESSERA_SHARE_MAIL_PER_USER_PER_HOUR\)/);
    assert.equal(await queued(org.orgId), 3, 'a refused share queues nothing');
    assert.equal((await share(org.admin.headers, a.objectId, 2, 'a3')).statusCode, 200, 'up to the limit');
    // Another user of the same organization has their own allowance, within the organization's.
    const overOrg = await share(other.headers, a.objectId, 4, 'b1');
    assert.equal(overOrg.statusCode, 429, overOrg.body);
    assert.match(json(overOrg).message, /at most 8 mails per organization per hour \(TESSERA_SHARE_MAIL_PER_ORG_PER_HOUR\)/);
    assert.equal((await share(other.headers, a.objectId, 3, 'b2')).statusCode, 200);
    assert.equal(await queued(org.orgId), 8);
    // Other organizations are not affected, and the hour passes.
    const org2 = await createTestOrg(ctx());
    const b = await uploadAsset(ctx(), org2, await jpeg(20, 20), 'other.jpg');
    assert.equal((await share(org2.admin.headers, b.objectId, 5, 'c1')).statusCode, 200);
    ctx().clock.advance(3_600_001);
    assert.equal((await share(org.admin.headers, a.objectId, 5, 'a4')).statusCode, 200);
  });
}, { env: { TESSERA_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, TESSERA_SHARE_MAIL_PER_USER_PER_HOUR: '5', TESSERA_SHARE_MAIL_PER_ORG_PER_HOUR: '8' } });
