import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { it } from 'node:test';
import { redactUrl } from '../../src/core/log.ts';
import { startWorker } from '../../src/core/jobs/worker.ts';
import { assetJobHandlers } from '../../src/features/assets/index.ts';
import { collectionJobHandlers } from '../../src/features/collections/index.ts';
import { createAsset, jpeg, pathOf, uploadAsset } from '../helpers/assets.ts';
import { forEachEngine, json } from '../helpers/context.ts';
import { createTestOrg } from '../helpers/factories.ts';

/**
 * Issue 23, defect 12d: capability URLs (signed upload and content URLs, collection-share zip
 * links, public story-board tokens in paths) were written to the access log in full at the
 * default level. The log keeps the URL's shape and redacts the secret part, like any other secret.
 */
const lines: string[] = [];
const sink = new Writable({
  write(chunk, _encoding, done) {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    done();
  },
});

forEachEngine(
  'security: capability URLs are redacted in the access log (defect 12d)',
  (ctx) => {
    it('signed upload, content and collection-share URLs and story-board tokens never reach the log at the default level', async () => {
      const org = await createTestOrg(ctx());
      const secrets: string[] = [];
      const paths: string[] = [];
      const signature = (url: string) => new URL(url, 'http://x').searchParams.get('signature')!;
      // A signed upload URL (PUT) and a content link (GET).
      const created = await createAsset(ctx(), org, { filename: 'a.jpg' });
      secrets.push(signature(created.url!));
      assert.equal(
        (
          await ctx().inject({
            method: 'PUT',
            url: pathOf(created.url!),
            payload: await jpeg(8, 8),
            headers: { 'content-type': 'image/jpeg' },
          })
        ).statusCode,
        200,
      );
      const link = await ctx().inject({
        method: 'GET',
        url: `/v1/asset/${created.objectId}/url`,
        headers: org.admin.headers,
      });
      const worker = startWorker({
        db: ctx().deps.db,
        engine: ctx().deps.engine,
        clock: ctx().deps.clock,
        log: ctx().deps.log,
        signal: ctx().deps.jobs,
        handlers: { ...collectionJobHandlers(ctx().deps), ...assetJobHandlers(ctx().deps) },
        pollMs: 3_600_000,
      });
      try {
        if (link.statusCode === 200) {
          const url = (json(link).url ?? json(link).downloadUrl ?? json(link)) as string;
          if (typeof url === 'string' && url.includes('signature=')) {
            secrets.push(signature(url));
            paths.push(pathOf(url));
          }
        }
        // A collection-share zip link.
        const b = await uploadAsset(ctx(), org, await jpeg(8, 8), 'b.jpg');
        const c = await ctx().inject({
          method: 'POST',
          url: '/v1/collection',
          headers: org.admin.headers,
          payload: {
            collectionType: 'secured',
            name: `s ${Math.random()}`,
            securityTemplateIds: [org.defaultTemplateId],
            collectionDocument: [b.fileId],
          },
        });
        const started = await ctx().inject({
          method: 'POST',
          url: `/v1/collection/${json(c).collectionId}/share`,
          headers: org.admin.headers,
          payload: { sender: { name: 'A' }, shareUsers: [{ email: 'out@example.test' }] },
        });
        assert.equal(started.statusCode, 202, started.body);
        await worker.drain();
        const zip = json(started).links[0].url as string;
        secrets.push(signature(zip));
        paths.push(pathOf(zip));
      } finally {
        await worker.stop();
      }
      // A public story-board link: the token is in the path.
      const board = await ctx().inject({
        method: 'POST',
        url: '/v1/storyboards',
        headers: org.admin.headers,
        payload: { title: 'B', status: 'published', blocks: [{ type: 'heading', text: 'Hi' }] },
      });
      const shared = await ctx().inject({
        method: 'POST',
        url: `/v1/storyboards/${json(board).id}/links`,
        headers: { ...org.admin.headers, 'content-type': 'application/json' },
        payload: {},
      });
      assert.equal(shared.statusCode, 201, shared.body);
      secrets.push(json(shared).token);
      const page = new URL(json(shared).url).pathname;
      paths.push(page, `${page}/view`, `${page}/assets/${created.objectId}/imageThumb`);
      for (const path of paths) assert.ok((await ctx().inject({ method: 'GET', url: path })).statusCode < 500, path);

      assert.ok(secrets.length >= 3, `secrets: ${secrets.length}`);
      const log = lines.join('\n');
      // The requests were logged (their shape is kept) ...
      assert.match(log, /"url":"\/v1\/uploads\/[^"]*signature=\[redacted\]/);
      assert.match(log, /"url":"[^"]*\/shared\/storyboards\/\[redacted\]/);
      assert.match(log, /"url":"[^"]*collection-share[^"]*signature=\[redacted\]/);
      // ... and no secret appears anywhere in it.
      for (const secret of secrets) assert.ok(!log.includes(secret), `the log holds ${secret}`);
    });

    it('redactUrl keeps the shape: only signature-like query values and story-board tokens go', () => {
      assert.equal(
        redactUrl('/v1/uploads/u1?expires=10&signature=abc'),
        '/v1/uploads/u1?expires=10&signature=[redacted]',
      );
      assert.equal(
        redactUrl('/shared/storyboards/tok123/assets/a/imageThumb?x=1'),
        '/shared/storyboards/[redacted]/assets/a/imageThumb?x=1',
      );
      assert.equal(
        redactUrl('/v1/asset/1?Token=t&X-Amz-Signature=s&page=2'),
        '/v1/asset/1?Token=[redacted]&X-Amz-Signature=[redacted]&page=2',
      );
      assert.equal(redactUrl('/v1/search?q=signature'), '/v1/search?q=signature');
    });
  },
  { env: { TESSERA_LOG_LEVEL: 'info' }, logTo: sink },
);
