// Issue 14: the compile-once helper, the write detector behind local invalidation, the revision
// cache's race rule, and the indexes the hot queries use (query plans on both engines).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { forEachEngine } from './helpers/context.ts';
import { createTestOrg } from './helpers/factories.ts';
import { prepared } from '../src/core/db/prepared.ts';
import { RevisionCache } from '../src/core/db/revision-cache.ts';
import { IDENTITY_TABLES, writesTo, type RevisionFeed } from '../src/core/db/revision.ts';
import { findUserProfile } from '../src/features/identity/identity.repo.ts';
import { findSessionWithUser } from '../src/features/auth/sessions/sessions.repo.ts';

describe('writesTo (local invalidation trigger)', () => {
  it('flags writes to identity tables, in either quoting, and nothing else', () => {
    for (const text of [
      'update "users" set "status" = ? where "id" = ?',
      'delete from "user_groups" where "user_id" = $1',
      'insert into "security_template_grants" ("a") values (?)',
      'UPDATE auth_sessions SET revoked_at = 1',
      '  update "api_keys" set "revoked_at" = ?',
    ]) {
      assert.ok(writesTo(text, IDENTITY_TABLES), text);
    }
    for (const text of [
      'select * from "users"',
      'update "webhook_messages" set "status" = ?',
      'insert into "events" ("id") values (?)',
      'delete from "jobs"',
      'with x as (select 1) select * from x',
    ]) {
      assert.ok(!writesTo(text, IDENTITY_TABLES), text);
    }
  });
});

class FakeFeed implements RevisionFeed {
  generation = 1;
  contentGeneration = 1;
  assertFresh() {}
  async check() {}
  async close() {}
}

describe('RevisionCache', () => {
  const clock = { now: () => 1000 };
  it('serves an entry until the generation moves or its deadline passes', async () => {
    const feed = new FakeFeed();
    const cache = new RevisionCache<string>(feed, clock);
    let loads = 0;
    const load = async () => ({ value: `v${++loads}`, validUntil: 2000 });
    assert.equal(await cache.get('k', load), 'v1');
    assert.equal(await cache.get('k', load), 'v1');
    feed.generation += 1;
    assert.equal(await cache.get('k', load), 'v2');
    const expired = new RevisionCache<string>(feed, { now: () => 2000 });
    assert.equal(await expired.get('k', load), 'v3');
    assert.equal(await expired.get('k', load), 'v4', 'an entry past its deadline is never served');
  });

  it('peek answers a current entry synchronously, and nothing once the generation moves or the deadline passes', async () => {
    const feed = new FakeFeed();
    let now = 1000;
    const cache = new RevisionCache<string>(feed, { now: () => now });
    assert.equal(cache.peek('k'), undefined, 'nothing loaded yet');
    assert.equal(await cache.get('k', async () => ({ value: 'v1', validUntil: 2000 })), 'v1');
    assert.equal(cache.peek('k'), 'v1');
    feed.generation += 1;
    assert.equal(cache.peek('k'), undefined, 'stale after an identity change');
    assert.equal(cache.size, 0, 'and dropped');
    assert.equal(await cache.get('k', async () => ({ value: 'v2', validUntil: 2000 })), 'v2');
    now = 2000;
    assert.equal(cache.peek('k'), undefined, 'never served past its deadline');
    assert.equal(await cache.get('k', async () => null), null, 'a failed load leaves nothing to peek');
    assert.equal(cache.peek('k'), undefined);
  });

  it('does not keep a load that raced with a change, and shares concurrent loads', async () => {
    const feed = new FakeFeed();
    const cache = new RevisionCache<string>(feed, clock);
    let release!: () => void;
    let loads = 0;
    const slow = () =>
      new Promise<{ value: string; validUntil: number }>((resolve) => {
        loads += 1;
        release = () => resolve({ value: 'stale', validUntil: 5000 });
      });
    const a = cache.get('k', slow);
    const b = cache.get('k', slow);
    feed.generation += 1; // a change commits while the load reads the old rows
    release();
    assert.equal(await a, 'stale');
    assert.equal(await b, 'stale');
    assert.equal(loads, 1);
    assert.equal(await cache.get('k', async () => ({ value: 'fresh', validUntil: 5000 })), 'fresh');
  });

  it('holds at most its bound', async () => {
    const cache = new RevisionCache<number>(new FakeFeed(), clock, 3);
    for (let i = 0; i < 10; i++) await cache.get(`k${i}`, async () => ({ value: i, validUntil: 5000 }));
    assert.equal(cache.size, 3);
  });

  it('holds at most its weight bound, oldest dropped first, and never keeps what alone exceeds it', async () => {
    const cache = new RevisionCache<string>(new FakeFeed(), clock, 100, { maxWeight: 10, weigh: (v) => v.length });
    const put = (k: string, v: string) => cache.get(k, async () => ({ value: v, validUntil: 5000 }));
    await put('a', 'xxxx');
    await put('b', 'xxxx');
    await put('c', 'xxxx');
    assert.equal(cache.size, 2);
    assert.equal(cache.totalWeight, 8);
    let loads = 0;
    assert.equal(
      await cache.get('a', async () => ({ value: `a${++loads}`, validUntil: 5000 })),
      'a1',
      'the oldest went first',
    );
    await put('huge', 'x'.repeat(11));
    assert.ok(cache.totalWeight <= 10);
    let hugeLoads = 0;
    await cache.get('huge', async () => ({ value: `${++hugeLoads}`, validUntil: 5000 }));
    assert.equal(hugeLoads, 1, 'an entry heavier than the bound was not kept');
  });

  it("with revision 'content', follows the content generation (which moves on identity changes too)", async () => {
    const feed = new FakeFeed();
    const cache = new RevisionCache<string>(feed, clock, 10, { revision: 'content' });
    let loads = 0;
    const load = async () => ({ value: `v${++loads}`, validUntil: 5000 });
    assert.equal(await cache.get('k', load), 'v1');
    feed.generation += 1; // an identity move alone (a real feed moves contentGeneration with it)
    assert.equal(await cache.get('k', load), 'v1');
    feed.contentGeneration += 1;
    assert.equal(await cache.get('k', load), 'v2');
  });
});

forEachEngine('hot queries', (ctx) => {
  it('prepared: compiled once, values substituted, constants kept, misuse refused', async () => {
    const org = await createTestOrg(ctx());
    let builds = 0;
    const q = prepared<{ orgId: string; id: string }>()((db, p) => {
      builds += 1;
      return db
        .selectFrom('users')
        .select(['id', 'username'])
        .where('org_id', '=', p.orgId)
        .where('id', '=', p.id)
        .where('status', '=', 'enabled');
    });
    const rows = await q.execute(ctx().deps.db, { orgId: org.orgId, id: org.adminUserId });
    assert.equal(rows[0]?.username, org.admin.username);
    assert.deepEqual(await q.execute(ctx().deps.db, { orgId: 'other', id: org.adminUserId }), []);
    await ctx()
      .deps.db.transaction()
      .execute(async (trx) => {
        assert.equal((await q.execute(trx, { orgId: org.orgId, id: org.adminUserId })).length, 1);
      });
    assert.equal(builds, 1);
    const spliced = prepared<{ id: string }>()((db, p) =>
      db
        .selectFrom('users')
        .select('id')
        .where(sql.raw(`id = '${p.id}'`) as never),
    );
    await assert.rejects(spliced.execute(ctx().deps.db, { id: 'x' }), /spliced|not used as a value/);
  });

  it('the hot queries use indexes (no full scan), on this engine', async () => {
    const db = ctx().deps.db;
    const org = await createTestOrg(ctx());
    assert.ok(await findUserProfile(db, org.orgId, org.adminUserId));
    assert.equal(await findSessionWithUser(db, '00000000-0000-7000-8000-000000000000'), undefined);
    const hot = [
      ['user profile', (await import('../src/features/identity/identity.repo.ts')).userProfileQuery.compiled(db)],
      [
        'session + user',
        (await import('../src/features/auth/sessions/sessions.repo.ts')).sessionWithUserQuery.compiled(db),
      ],
      ['user principal', (await import('../src/features/identity/principal.ts')).userPrincipalQuery.compiled(db)],
      // An asset view's load (features/assets/views/asset-views.ts): the row, its security, the definitions version.
      [
        'asset by objectId or fileId',
        (await import('../src/features/assets/assets.repo.ts')).visibleAssetQuery.compiled(db),
      ],
      ['asset security', (await import('../src/features/assets/assets.repo.ts')).securityOfOneQuery.compiled(db)],
      [
        'metadata definitions version',
        (await import('../src/features/metadata/definitions/template-cache.ts')).versionQuery.compiled(db),
      ],
    ] as const;
    for (const [name, compiled] of hot) {
      const parameters = compiled.parameters.map((p) => (typeof p === 'string' && p.startsWith('\u0000') ? 'x' : p));
      if (ctx().engine === 'sqlite') {
        const plan = await db.executeQuery<{ detail: string }>({
          ...compiled,
          sql: `explain query plan ${compiled.sql}`,
          parameters,
        });
        const scans = plan.rows
          .map((r) => r.detail)
          .filter((d) => /^SCAN /.test(d) && !/USING (COVERING )?INDEX/.test(d));
        assert.deepEqual(scans, [], `${name}: ${plan.rows.map((r) => r.detail).join(' | ')}`);
      } else {
        await db.connection().execute(async (conn) => {
          await sql`set enable_seqscan = off`.execute(conn);
          const plan = await conn.executeQuery<{ 'QUERY PLAN': string }>({
            ...compiled,
            sql: `explain ${compiled.sql}`,
            parameters,
          });
          await sql`reset enable_seqscan`.execute(conn);
          const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
          assert.ok(!/Seq Scan/.test(text), `${name}:\n${text}`);
        });
      }
    }
  });
});
