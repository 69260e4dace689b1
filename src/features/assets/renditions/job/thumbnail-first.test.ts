import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import sharp from 'sharp';
import { forEachEngine } from '../../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../../test/helpers/factories.ts';
import { assetWorker, uploadAsset } from '../../../../../test/helpers/assets.ts';
import { waitFor } from '../../../../../test/helpers/wait.ts';
import { JOB_PROBE_MS, startWorker, type Worker } from '../../../../core/jobs/worker.ts';
import { assetJobHandlers } from '../../assets.jobs.ts';

const photo = () =>
  sharp({
    create: {
      width: 1600,
      height: 1200,
      channels: 3,
      background: { r: 30, g: 90, b: 160 },
      noise: { type: 'gaussian', mean: 110, sigma: 25 },
    },
  })
    .jpeg({ quality: 85 })
    .toBuffer();

forEachEngine('assets: the thumbnail first, and jobs claimed at their commit (issue 30, item 4)', (ctx) => {
  let org: TestOrg;
  let worker: Worker | undefined;
  before(async () => {
    org = await createTestOrg(ctx());
  });
  after(async () => worker?.stop());

  it('commits and announces the thumbnail (asset.thumbnail.created) before it draws the larger renditions', async () => {
    const db = ctx().deps.db;
    // What the asset's row held when the thumbnail's event was written (in the same transaction).
    await sql`create table thumb_snapshot (asset_id text, renditions text, state text)`.execute(db);
    if (ctx().engine === 'postgres') {
      await sql`create function thumb_snap() returns trigger language plpgsql as $$ begin
          if new.type = 'asset.thumbnail.created' then
            insert into thumb_snapshot select id, renditions::text, renditions_state from assets where org_id = new.org_id;
          end if;
          return null;
        end $$`.execute(db);
      await sql`create trigger thumb_snap after insert on events for each row execute function thumb_snap()`.execute(
        db,
      );
    } else {
      await sql`create trigger thumb_snap after insert on events when new.type = 'asset.thumbnail.created' begin
          insert into thumb_snapshot select id, renditions, renditions_state from assets where org_id = new.org_id;
        end`.execute(db);
    }
    const created = await uploadAsset(ctx(), org, await photo(), 'photo.jpg');
    const w = assetWorker(ctx());
    await w.drain();
    await w.stop();

    const snapshot = await sql<{
      asset_id: string;
      renditions: string;
      state: string;
    }>`select * from thumb_snapshot`.execute(db);
    assert.equal(snapshot.rows.length, 1, 'one thumbnail event');
    assert.equal(snapshot.rows[0]!.asset_id, created.objectId);
    assert.deepEqual(Object.keys(JSON.parse(snapshot.rows[0]!.renditions)), ['imageThumb'], 'only the thumbnail yet');
    assert.equal(snapshot.rows[0]!.state, 'pending', 'the larger renditions still to come');

    const events = await db
      .selectFrom('events')
      .select(['type', 'body'])
      .where('org_id', '=', org.orgId)
      .where('type', 'in', ['asset.thumbnail.created', 'asset.renditions.created'])
      .execute();
    const thumbEvent = JSON.parse(events.find((e) => e.type === 'asset.thumbnail.created')!.body);
    assert.deepEqual(Object.keys(thumbEvent.renditions), ['thumbnail']);
    assert.equal(thumbEvent.asset.id, created.objectId);
    assert.ok(
      events.some((e) => e.type === 'asset.renditions.created'),
      'the full set follows',
    );

    const asset = await db
      .selectFrom('assets')
      .selectAll()
      .where('id', '=', created.objectId)
      .executeTakeFirstOrThrow();
    assert.equal(asset.renditions_state, 'ready');
    const renditions = JSON.parse(asset.renditions);
    assert.deepEqual(Object.keys(renditions).sort(), [
      'fpo',
      'imagePreview',
      'imagePreviewLarge',
      'imageThumb',
      'mezzaninePreview',
    ]);
    assert.equal(renditions.imageThumb.key, JSON.parse(snapshot.rows[0]!.renditions).imageThumb.key);
    assert.ok(asset.placeholder, 'placeholder from the thumbnail');
    const thumb = await ctx().inject({
      method: 'GET',
      url: `/v1/asset/${created.objectId}/rendition/imageThumb`,
      headers: org.admin.headers,
    });
    assert.equal(thumb.statusCode, 200);
    assert.deepEqual((await sharp(thumb.rawPayload).metadata()).width, 200);
  });

  it('reads a still image where local storage keeps it: no copy of the source, no temporary folder', async () => {
    const deps = ctx().deps;
    const created = await uploadAsset(ctx(), org, await photo(), 'in-place.jpg');
    const made: string[] = [];
    const mkdtemp = deps.temp.mkdtemp;
    deps.temp.mkdtemp = (prefix) => {
      made.push(prefix);
      return mkdtemp.call(deps.temp, prefix);
    };
    try {
      const w = assetWorker(ctx());
      await w.drain();
      await w.stop();
    } finally {
      deps.temp.mkdtemp = mkdtemp;
    }
    assert.deepEqual(
      made.filter((p) => p.startsWith('rend')),
      [],
      'no copy of the source',
    );
    const asset = await deps.db
      .selectFrom('assets')
      .select(['renditions_state', 'md5', 'renditions'])
      .where('id', '=', created.objectId)
      .executeTakeFirstOrThrow();
    assert.equal(asset.renditions_state, 'ready');
    assert.match(asset.md5 ?? '', /^[0-9a-f]{32}$/, 'MD5 read from the stored file');
    assert.equal(Object.keys(JSON.parse(asset.renditions)).length, 5);
  });

  it("claims an upload's renditions job soon after the upload's commit, with the poll interval at a minute", async () => {
    // PostgreSQL: a worker of another instance (its own in-process signal, which nobody wakes),
    // woken by its probe (no NOTIFY). SQLite: a worker of this instance, woken in-process.
    const other = ctx().engine === 'postgres' ? await ctx().secondInstance() : undefined;
    const deps = other?.deps ?? ctx().deps;
    const database = ctx().database;
    worker = startWorker({
      db: deps.db,
      engine: deps.engine,
      clock: deps.clock,
      log: deps.log,
      signal: deps.jobs,
      handlers: assetJobHandlers(deps),
      pollMs: 60_000,
      probeMs: database.kind === 'postgres' ? JOB_PROBE_MS : undefined,
    });
    // Its first look at the queue is over before the upload: only a wake-up can claim the job now.
    await worker.drain();
    const created = await uploadAsset(ctx(), org, await photo(), 'woken.jpg');
    await waitFor(
      async () =>
        (
          await ctx()
            .deps.db.selectFrom('assets')
            .select('renditions_state')
            .where('id', '=', created.objectId)
            .executeTakeFirstOrThrow()
        ).renditions_state === 'ready',
      'the renditions job ran without waiting for the poll',
    );
  });
});
