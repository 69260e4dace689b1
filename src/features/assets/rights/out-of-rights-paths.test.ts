import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { unzipSync } from 'fflate';
import { startWorker, type Worker } from '../../../core/jobs/worker.ts';
import { jpeg, pathOf, uploadAsset } from '../../../../test/helpers/assets.ts';
import { startEdge } from '../../../../test/helpers/cdn.ts';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createGroup, createTemplate } from '../../../../test/helpers/search.ts';
import { createTestOrg, createTestUser, type TestOrg, type TestUser } from '../../../../test/helpers/factories.ts';
import { collectionJobHandlers } from '../../collections/index.ts';
import { assetJobHandlers } from '../index.ts';

const DAY = 86_400_000;
/** MM/dd/yyyy, the system date attributes' format, of an epoch day. */
const us = (ms: number) => {
  const d = new Date(ms);
  return `${String(d.getUTCMonth() + 1).padStart(2, '0')}/${String(d.getUTCDate()).padStart(2, '0')}/${d.getUTCFullYear()}`;
};
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const rnd = () => Math.random().toString(36).slice(2, 8);

/**
 * Issue 29, part 4: the out-of-rights rule (allow / block / watermark) on the paths that serve bytes
 * with no one to exempt behind them — collection-share zips, the CDN edge's origin, story-board share
 * links and transformations (out-of-rights.test.ts covers downloads, renditions, exposed and share links).
 */
forEachEngine(
  'downloads out of rights on zips, the CDN, story boards and transformations (issue 29, part 4)',
  (ctx) => {
    let org: TestOrg;
    let worker: Worker;
    let user: TestUser;
    let edge: Awaited<ReturnType<typeof startEdge>>;
    /** View, Download and Share for the user (transformations need Share). */
    let sharing: string;
    before(async () => {
      org = await createTestOrg(ctx());
      worker = startWorker({
        db: ctx().deps.db,
        engine: ctx().deps.engine,
        clock: ctx().deps.clock,
        log: ctx().deps.log,
        signal: ctx().deps.jobs,
        handlers: { ...collectionJobHandlers(ctx().deps), ...assetJobHandlers(ctx().deps) },
        pollMs: 3_600_000,
      });
      const group = await createGroup(ctx(), org.orgId);
      sharing = await createTemplate(ctx(), org.orgId, { [group]: ['view', 'download', 'share'] });
      user = await createTestUser(ctx(), org, { privileges: ['download'], groupIds: [org.groups.everyone, group] });
      edge = await startEdge(ctx());
    });
    after(async () => {
      await worker.stop();
      await edge.close();
    });

    const get = (url: string, headers?: Record<string, string>) => ctx().inject({ method: 'GET', url, headers });
    async function setMode(mode: 'allow' | 'block' | 'watermark') {
      const res = await ctx().inject({
        method: 'PATCH',
        url: '/v1/rights/settings',
        headers: org.admin.headers,
        payload: { expiredDownloads: mode },
      });
      assert.equal(res.statusCode, 200, res.body);
    }
    async function setExpiry(id: string, ms: number) {
      const res = await ctx().inject({
        method: 'PATCH',
        url: `/v1/assets/asset/${id}`,
        headers: org.admin.headers,
        payload: { metadata: [{ name: 'Expiration Date', value: us(ms) }] },
      });
      assert.ok(res.statusCode < 300, res.body);
    }
    async function photo(name: string) {
      const a = await uploadAsset(ctx(), org, await jpeg(1600, 1200), name, {
        securityTemplateIds: [org.defaultTemplateId, sharing],
      });
      await worker.drain();
      return a;
    }
    function assertRefused(res: { statusCode: number; body: string }, date: string, what: string) {
      assert.equal(res.statusCode, 403, `${what}: ${res.body}`);
      const body = JSON.parse(res.body);
      assert.equal(body.code, 'rights_expired', `${what}: ${res.body}`);
      assert.ok(body.message.includes(date), `${what} names the date: ${body.message}`);
    }

    it('a collection-share zip holding an expired asset: served under allow, refused whole (naming the asset) under block and watermark, served again once renewed', async () => {
      const expired = await photo('lapsed.jpg');
      const current = await photo('current.jpg');
      const created = await ctx().inject({
        method: 'POST',
        url: '/v1/collection',
        headers: org.admin.headers,
        payload: {
          collectionType: 'private',
          name: `Rights ${rnd()}`,
          collectionDocument: [expired.fileId, current.fileId],
        },
      });
      assert.equal(created.statusCode, 200, created.body);
      const shared = await ctx().inject({
        method: 'POST',
        url: `/v1/collection/${json(created).collectionId}/share`,
        headers: org.admin.headers,
        payload: { sender: { name: 'Ann' }, shareUsers: [{ email: 'press@example.test' }] },
      });
      assert.equal(shared.statusCode, 202, shared.body);
      await worker.drain();
      const zipUrl = pathOf(json(shared).links[0].url as string);
      const entries = async () => {
        const res = await get(zipUrl);
        assert.equal(res.statusCode, 200, res.body);
        return Object.keys(unzipSync(new Uint8Array(res.rawPayload))).sort();
      };
      assert.deepEqual(await entries(), ['current.jpg', 'lapsed.jpg']);

      const now = ctx().clock.now();
      await setExpiry(expired.objectId, now - 2 * DAY);
      assert.deepEqual(await entries(), ['current.jpg', 'lapsed.jpg'], 'allow: served as before');
      await setMode('block');
      const refused = await get(zipUrl);
      assertRefused(refused, iso(now - 2 * DAY), 'the zip under block');
      assert.ok(json(refused).message.includes('lapsed.jpg'), json(refused).message);
      await setMode('watermark');
      assertRefused(await get(zipUrl), iso(now - 2 * DAY), 'the zip under watermark (a zip carries no mark)');
      await setExpiry(expired.objectId, now + 30 * DAY);
      assert.deepEqual(await entries(), ['current.jpg', 'lapsed.jpg'], 'renewed: served again at once');
      await setMode('allow');
    });

    it("the CDN edge's origin for a published asset: served under allow, 403 rights_expired and never cached under block and watermark", async () => {
      const name = `rights-${rnd()}`;
      const zone = await ctx().inject({
        method: 'POST',
        url: '/v1/cdn/configure',
        headers: org.admin.headers,
        payload: { name, region: 'de', url: `https://${name}.cdn.example.com` },
      });
      assert.equal(zone.statusCode, 200, zone.body);
      const a = await photo('published.jpg');
      const pub = await ctx().inject({
        method: 'POST',
        url: '/v1/cdn/publish',
        headers: org.admin.headers,
        payload: { assets: [a.objectId] },
      });
      assert.equal(pub.statusCode, 200, pub.body);
      const now = ctx().clock.now();
      await setExpiry(a.objectId, now - DAY);
      const url = `${edge.url}/${name}/${a.objectId}/published.jpg`;
      const fetchIt = async () => {
        const res = await fetch(url);
        return { statusCode: res.status, body: await res.text(), headers: res.headers };
      };
      await setMode('block');
      for (const attempt of ['first', 'second']) {
        const res = await fetchIt();
        assertRefused(res, iso(now - DAY), `the edge under block (${attempt} request)`);
        assert.notEqual(res.headers.get('cdn-cache'), 'HIT', 'a refusal is not cached');
      }
      await setMode('watermark');
      assertRefused(await fetchIt(), iso(now - DAY), 'the edge under watermark (the edge caches publicly)');
      await setMode('allow');
      const served = await fetch(url);
      assert.equal(served.status, 200);
      assert.equal(served.headers.get('content-type'), 'image/jpeg');
      await served.arrayBuffer();
    });

    it('a story-board share link made by an administrator (who is exempt) never hands out large renditions of an expired asset; thumbnails stay', async () => {
      const a = await photo('on-the-board.jpg');
      const board = await ctx().inject({
        method: 'POST',
        url: '/v1/storyboards',
        headers: org.admin.headers,
        payload: { title: 'Rights', status: 'published', blocks: [{ type: 'asset', assetId: a.objectId }] },
      });
      assert.equal(board.statusCode, 201, board.body);
      const link = await ctx().inject({
        method: 'POST',
        url: `/v1/storyboards/${json(board).id}/links`,
        headers: { ...org.admin.headers, 'content-type': 'application/json' },
        payload: {},
      });
      assert.equal(link.statusCode, 201, link.body);
      const page = new URL(json(link).url as string).pathname;
      const view = async () => {
        const res = await get(`${page}/view`);
        assert.equal(res.statusCode, 200, res.body);
        return json(res).blocks.find((b: { type: string }) => b.type === 'asset').asset.renditions as Record<
          string,
          string
        >;
      };
      const renditions = await view();
      assert.ok(renditions.imageThumb && renditions.mezzaninePreview, JSON.stringify(renditions));
      const now = ctx().clock.now();
      await setExpiry(a.objectId, now - 3 * DAY);
      assert.equal((await get(renditions.mezzaninePreview!)).statusCode, 200, 'allow: served as before');
      for (const mode of ['block', 'watermark'] as const) {
        await setMode(mode);
        assertRefused(await get(renditions.mezzaninePreview!), iso(now - 3 * DAY), `a large rendition under ${mode}`);
        if (renditions.imagePreviewLarge)
          assertRefused(await get(renditions.imagePreviewLarge), iso(now - 3 * DAY), `imagePreviewLarge under ${mode}`);
        assert.equal((await get(renditions.imageThumb!)).statusCode, 200, `the thumbnail under ${mode}`);
        assert.ok((await view()).imageThumb, 'the asset stays on the page');
        const own = await get(`/v1/asset/${a.objectId}/rendition/mezzaninePreview`, org.admin.headers);
        assert.equal(own.statusCode, 200, 'the administrator, signed in, is still exempt');
      }
      await setExpiry(a.objectId, now + 30 * DAY);
      assert.equal((await get(renditions.mezzaninePreview!)).statusCode, 200, 'renewed: served again at once');
      await setMode('allow');
    });

    it('transformations: refused when asked for under block (not for the exempt, nor from a thumbnail), and every link obeys the setting when served — refused under block, watermarked under watermark', async () => {
      const a = await photo('to-transform.jpg');
      const transform = async (headers: Record<string, string>, source = 'original') =>
        ctx().inject({
          method: 'POST',
          url: '/v1/asset/transform',
          headers,
          payload: {
            transformations: [{ objectId: a.objectId, source, transformations: [{ type: 'resize', width: 100 }] }],
          },
        });
      const fileOf = async (res: Awaited<ReturnType<typeof transform>>, headers = user.headers) => {
        assert.equal(res.statusCode, 202, res.body);
        await worker.drain();
        const action = json(await get(`/v1/action/${json(res).jobId}`, headers));
        assert.equal(action.status, 'succeeded', JSON.stringify(action));
        return pathOf(action.result.files[0].url as string);
      };
      const now = ctx().clock.now();
      const before = await fileOf(await transform(user.headers));
      const plain = await get(before);
      assert.equal(plain.statusCode, 200, plain.body);
      await setExpiry(a.objectId, now - DAY);
      assert.equal((await get(before)).statusCode, 200, 'allow: a link made before is served');
      const whileAllowed = await fileOf(await transform(user.headers));

      await setMode('block');
      assertRefused(await transform(user.headers), iso(now - DAY), 'asking for a transformation under block');
      const fromThumb = await fileOf(await transform(user.headers, 'imageThumb'));
      assert.equal((await get(fromThumb)).statusCode, 200, 'a transformation of the thumbnail is served');
      const byAdmin = await fileOf(await transform(org.admin.headers), org.admin.headers);
      for (const [url, what] of [
        [before, 'a link made before expiry'],
        [whileAllowed, 'a link made while allowed'],
        [byAdmin, "an exempt administrator's link (its holders are not exempt)"],
      ] as const)
        assertRefused(await get(url), iso(now - DAY), `${what} under block`);

      await setMode('watermark');
      const marked = await get(before);
      assert.equal(marked.statusCode, 200, marked.body);
      assert.equal(marked.headers['x-tessera-rights'], 'expired-watermarked');
      assert.equal(marked.headers['cache-control'], 'no-store');
      assert.notDeepEqual(marked.rawPayload, plain.rawPayload);
      const asked = await transform(user.headers);
      assert.equal(asked.statusCode, 202, 'an image may be asked for under watermark');
      assert.equal((await get(await fileOf(asked))).headers['x-tessera-rights'], 'expired-watermarked');

      await setExpiry(a.objectId, now + 30 * DAY);
      const renewed = await get(before);
      assert.equal(renewed.statusCode, 200);
      assert.deepEqual(renewed.rawPayload, plain.rawPayload, 'renewed: the file as made, at once');
      await setMode('allow');
    });
  },
);
