import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Worker } from '../../../core/jobs/worker.ts';
import { assetWorker, jpeg, pathOf, uploadAsset } from '../../../../test/helpers/assets.ts';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg, type TestUser } from '../../../../test/helpers/factories.ts';

const DAY = 86_400_000;
/** MM/dd/yyyy, the system date attributes' format, of an epoch day. */
const us = (ms: number) => {
  const d = new Date(ms);
  return `${String(d.getUTCMonth() + 1).padStart(2, '0')}/${String(d.getUTCDate()).padStart(2, '0')}/${d.getUTCFullYear()}`;
};

forEachEngine('downloads out of rights (issue 29, part 4: the organization setting)', (ctx) => {
  let org: TestOrg;
  let worker: Worker;
  let user: TestUser;
  let manager: TestUser;
  before(async () => {
    org = await createTestOrg(ctx());
    worker = assetWorker(ctx());
    user = await createTestUser(ctx(), org, { privileges: ['download'], groupIds: [org.groups.everyone] });
    manager = await createTestUser(ctx(), org, {
      privileges: ['download', 'quota_management'],
      groupIds: [org.groups.everyone],
    });
  });
  after(async () => worker.stop());

  async function setMode(mode: string, headers = org.admin.headers) {
    return ctx().inject({ method: 'PATCH', url: '/v1/rights/settings', headers, payload: { expiredDownloads: mode } });
  }
  async function setDates(id: string, metadata: { name: string; value: unknown }[]) {
    const res = await ctx().inject({
      method: 'PATCH',
      url: `/v1/assets/asset/${id}`,
      headers: org.admin.headers,
      payload: { metadata },
    });
    assert.ok(res.statusCode < 300, res.body);
  }
  async function photo(name: string) {
    const a = await uploadAsset(ctx(), org, await jpeg(1600, 1200), name);
    await worker.drain();
    return a.objectId;
  }
  const get = (url: string, headers?: Record<string, string>) => ctx().inject({ method: 'GET', url, headers });
  async function downloadLink(id: string, headers: Record<string, string>) {
    return get(`/v1/asset/${id}/content`, headers);
  }
  async function exposed(id: string, headers: Record<string, string>) {
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/asset/expose',
      headers,
      payload: [
        {
          id,
          components: [
            { componentType: 'object', componentRef: 'original' },
            { componentType: 'rendition', componentRef: ['imageThumb', 'mezzaninePreview'] },
          ],
        },
      ],
    });
    assert.equal(res.statusCode, 200, res.body);
    const byRef = new Map<string, string>();
    for (const c of json(res)[0].components) byRef.set(c.componentRef, pathOf(c.url));
    return byRef;
  }
  async function shareLink(id: string) {
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/asset/share',
      headers: org.admin.headers,
      payload: { sender: { name: 'Ann' }, shareUsers: [{ email: 'bob@example.test' }], assets: [id] },
    });
    assert.equal(res.statusCode, 200, res.body);
    return pathOf(json(res).links[0].url as string);
  }
  function assertRefused(res: { statusCode: number; body: string }, date: string, what: string) {
    assert.equal(res.statusCode, 403, `${what}: ${res.body}`);
    const body = JSON.parse(res.body);
    assert.equal(body.code, 'rights_expired', what);
    assert.ok(body.message.includes(date), `${what} names the date: ${body.message}`);
  }

  it('has an organization setting: allow by default, set by Quota Management, refused to others, bad values named', async () => {
    const read = await get('/v1/rights/settings', org.admin.headers);
    assert.equal(read.statusCode, 200, read.body);
    assert.deepEqual(json(read), { expiredDownloads: 'allow', updatedEpoch: null });
    assert.equal((await setMode('block', user.headers)).statusCode, 403);
    assert.equal((await get('/v1/rights/settings', user.headers)).statusCode, 403);
    const bad = await setMode('hide');
    assert.equal(bad.statusCode, 400, bad.body);
    assert.ok(bad.body.includes('expiredDownloads'), bad.body);
    const set = await setMode('block', manager.headers);
    assert.equal(set.statusCode, 200, set.body);
    assert.equal(json(set).expiredDownloads, 'block');
    assert.equal(json(await get('/v1/rights/settings', org.admin.headers)).expiredDownloads, 'block');
    const audited = await ctx()
      .deps.db.selectFrom('audit_log')
      .select('action')
      .where('org_id', '=', org.orgId)
      .where('action', '=', 'rights_settings.updated')
      .execute();
    assert.equal(audited.length, 1);
    assert.equal((await setMode('allow')).statusCode, 200);
  });

  it('under block refuses the original, large renditions, exposed and share links of an expired asset; thumbnails stay; administrators and rights managers still download; a new expiry date serves again at once', async () => {
    const id = await photo('expired.jpg');
    const now = ctx().clock.now();
    // Links made while the right was current, and while the organization allowed everything.
    const oldLink = pathOf(json(await downloadLink(id, user.headers)).presignedURL);
    const oldExposed = await exposed(id, user.headers);
    const oldShare = await shareLink(id);
    const expired = us(now - 3 * DAY);
    const expiredIso = new Date(now - 3 * DAY).toISOString().slice(0, 10);
    await setDates(id, [{ name: 'Expiration Date', value: expired }]);

    // allow (the default): everything as before.
    assert.equal((await get(oldLink)).statusCode, 200);
    assert.equal((await get(oldExposed.get('mezzaninePreview')!)).statusCode, 200);
    assert.equal((await get(oldShare)).statusCode, 200);
    assert.equal((await get(`/v1/asset/${id}/rendition/mezzaninePreview`, user.headers)).statusCode, 200);
    assert.equal((await downloadLink(id, user.headers)).statusCode, 200);

    assert.equal((await setMode('block')).statusCode, 200);
    assertRefused(await downloadLink(id, user.headers), expiredIso, 'a new download link');
    assertRefused(await get(oldLink), expiredIso, 'a download link made before');
    assertRefused(await get(oldExposed.get('original')!), expiredIso, 'an exposed original');
    assertRefused(await get(oldExposed.get('mezzaninePreview')!), expiredIso, 'an exposed large rendition');
    assertRefused(await get(oldShare), expiredIso, 'a share link');
    assertRefused(
      await get(`/v1/asset/${id}/rendition/mezzaninePreview`, user.headers),
      expiredIso,
      'a large rendition',
    );
    assertRefused(
      await get(`/v1/asset/${id}/rendition/imagePreviewLarge`, user.headers),
      expiredIso,
      'imagePreviewLarge',
    );
    // Thumbnails and previews stay, so the asset can be found and judged.
    assert.equal((await get(oldExposed.get('imageThumb')!)).statusCode, 200);
    assert.equal((await get(`/v1/asset/${id}/rendition/imageThumb`, user.headers)).statusCode, 200);
    assert.equal((await get(`/v1/asset/${id}/rendition/imagePreview`, user.headers)).statusCode, 200);
    // An administrator, and a holder of Quota Management, still download (and their links serve).
    for (const who of [org.admin, manager]) {
      const link = await downloadLink(id, who.headers);
      assert.equal(link.statusCode, 200, link.body);
      assert.equal((await get(pathOf(json(link).presignedURL))).statusCode, 200);
      assert.equal((await get(`/v1/asset/${id}/rendition/mezzaninePreview`, who.headers)).statusCode, 200);
    }
    const adminExposed = await exposed(id, org.admin.headers);
    assert.equal((await get(adminExposed.get('original')!)).statusCode, 200);

    // The right renewed: served again at once, by every link made before.
    await setDates(id, [{ name: 'Expiration Date', value: us(now + 30 * DAY) }]);
    assert.equal((await get(oldLink)).statusCode, 200);
    assert.equal((await get(oldExposed.get('mezzaninePreview')!)).statusCode, 200);
    assert.equal((await get(oldShare)).statusCode, 200);
    assert.equal((await downloadLink(id, user.headers)).statusCode, 200);

    // Expired again, and the organization back to allow: served.
    await setDates(id, [{ name: 'Expiration Date', value: expired }]);
    assert.equal((await get(oldLink)).statusCode, 403);
    assert.equal((await setMode('allow')).statusCode, 200);
    assert.equal((await get(oldLink)).statusCode, 200);
    assert.equal((await get(oldShare)).statusCode, 200);
  });

  it('treats a right that has not started like an expired one; the expiry day itself is still within the right', async () => {
    const id = await photo('future.jpg');
    const now = ctx().clock.now();
    const link = pathOf(json(await downloadLink(id, user.headers)).presignedURL);
    const starts = now + 10 * DAY;
    await setDates(id, [{ name: 'Rights Start Date', value: us(starts) }]);
    assert.equal((await setMode('block')).statusCode, 200);
    const refused = await get(link);
    assertRefused(refused, new Date(starts).toISOString().slice(0, 10), 'a right starting later');
    assert.ok(JSON.parse(refused.body).message.includes('Rights Start Date'));
    assert.equal((await get(`/v1/asset/${id}/rendition/imageThumb`, user.headers)).statusCode, 200);
    // Started today, expiring today: within the right.
    await setDates(id, [
      { name: 'Rights Start Date', value: us(now) },
      { name: 'Expiration Date', value: us(now) },
    ]);
    assert.equal((await get(link)).statusCode, 200);
    assert.equal((await setMode('allow')).statusCode, 200);
  });

  it('under watermark serves images with the text drawn across them, never cached', async () => {
    const id = await photo('marked.jpg');
    const now = ctx().clock.now();
    const link = pathOf(json(await downloadLink(id, user.headers)).presignedURL);
    const plain = await get(link);
    assert.equal(plain.statusCode, 200);
    await setDates(id, [{ name: 'Expiration Date', value: us(now - DAY) }]);
    assert.equal((await setMode('watermark')).statusCode, 200);
    const marked = await get(link);
    assert.equal(marked.statusCode, 200, marked.body);
    assert.equal(marked.headers['cache-control'], 'no-store');
    assert.match(String(marked.headers['content-type']), /^image\/jpeg/);
    assert.notDeepEqual(marked.rawPayload, plain.rawPayload);
    const large = await get(`/v1/asset/${id}/rendition/mezzaninePreview`, user.headers);
    assert.equal(large.statusCode, 200);
    assert.equal(large.headers['cache-control'], 'no-store');
    // The administrator gets the original as stored.
    const own = await get(pathOf(json(await downloadLink(id, org.admin.headers)).presignedURL));
    assert.deepEqual(own.rawPayload, plain.rawPayload);
    assert.equal((await setMode('allow')).statusCode, 200);
  });
});
