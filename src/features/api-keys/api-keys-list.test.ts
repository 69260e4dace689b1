import assert from 'node:assert/strict';
import { it } from 'node:test';
import { LIST, REVOKE, createKey } from '../../../test/helpers/api-keys.ts';
import { forEachEngine, json, type TestContext } from '../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../test/helpers/factories.ts';

interface Listed {
  id: string;
  name: string;
  createdAt: string;
  revokedAt: string | null;
  expiresAt: string | null;
}

/** Deterministic PRNG (mulberry32), so a failing walk can be replayed from its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function page(ctx: TestContext, org: TestOrg, body: Record<string, unknown>) {
  const res = await ctx.inject({ method: 'POST', url: LIST, headers: org.admin.headers, payload: body });
  assert.equal(res.statusCode, 200, res.body);
  return json<{ apiKeys: Listed[]; pagination: { nextPageCursor: string | null; maxSize: number } }>(res);
}

forEachEngine('api keys: listing', (ctx) => {
  it('includeRevoked × includeExpired truth table over active, revoked, expired, revoked+expired keys', async () => {
    const org = await createTestOrg(ctx());
    const soon = ctx().clock.now() + 1;
    const active = await createKey(ctx(), org, { name: 'active', expiresAt: soon + 60_000 });
    const revoked = await createKey(ctx(), org, { name: 'revoked' });
    await createKey(ctx(), org, { name: 'expired', expiresAt: soon });
    const both = await createKey(ctx(), org, { name: 'revoked+expired', expiresAt: soon });
    for (const { id } of [revoked, both])
      await ctx().inject({ method: 'POST', url: REVOKE, headers: org.admin.headers, payload: { id } });
    ctx().clock.set(soon);
    assert.ok(active);
    const table: [boolean | undefined, boolean | undefined, string[]][] = [
      [undefined, undefined, ['active']],
      [false, false, ['active']],
      [true, false, ['active', 'revoked']],
      [false, true, ['active', 'expired']],
      [true, true, ['active', 'expired', 'revoked', 'revoked+expired']],
    ];
    for (const [includeRevoked, includeExpired, expected] of table) {
      const body = json(
        await ctx().inject({
          method: 'POST',
          url: LIST,
          headers: org.admin.headers,
          payload: { includeRevoked, includeExpired },
        }),
      );
      assert.deepEqual(
        body.apiKeys.map((k: Listed) => k.name).sort(),
        expected,
        `includeRevoked=${includeRevoked} includeExpired=${includeExpired}`,
      );
    }
  });

  for (const flags of [{ includeRevoked: true, includeExpired: true }, {}]) {
    const all = 'includeRevoked' in flags;
    it(`paging while keys are created, revoked and expire: no duplicates, no key skipped (${all ? 'all keys' : 'active keys'}, property over seeds)`, async () => {
      for (const seed of [1, 2, 3, 4, 5, 6]) {
        const random = prng(seed * 7919 + (all ? 1 : 0));
        const org = await createTestOrg(ctx());
        const initial = new Set<string>();
        const expiry = new Map<string, number | null>();
        const revoked = new Set<string>();
        const make = async (label: string) => {
          // Often several keys in one millisecond, so the id breaks ties in the cursor.
          if (random() < 0.5) ctx().clock.advance(1);
          const expiresAt = random() < 0.3 ? ctx().clock.now() + 1 + Math.floor(random() * 40) : undefined;
          const created = await createKey(ctx(), org, { name: label, expiresAt });
          expiry.set(created.id, expiresAt ?? null);
          return created.id;
        };
        for (let i = 0; i < 30; i++) initial.add(await make(`initial-${i}`));

        const seen: Listed[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const result = await page(ctx(), org, {
            ...flags,
            maxSize: 1 + Math.floor(random() * 7),
            pageCursor: cursor,
          });
          const now = ctx().clock.now();
          for (const key of result.apiKeys) {
            if (!all) {
              assert.equal(key.revokedAt, null, 'a revoked key listed without includeRevoked');
              assert.ok(
                key.expiresAt === null || Date.parse(key.expiresAt) > now,
                'an expired key listed without includeExpired',
              );
            }
          }
          seen.push(...result.apiKeys);
          cursor = result.pagination.nextPageCursor ?? undefined;
          pages += 1;
          // Between pages: new keys, revocations, time passing.
          for (let n = Math.floor(random() * 3); n > 0; n--) await make(`during-${pages}-${n}`);
          if (random() < 0.6) {
            const ids = [...expiry.keys()];
            const victim = ids[Math.floor(random() * ids.length)]!;
            await ctx().inject({ method: 'POST', url: REVOKE, headers: org.admin.headers, payload: { id: victim } });
            revoked.add(victim);
          }
          ctx().clock.advance(Math.floor(random() * 3));
        } while (cursor && pages < 200);
        assert.ok(!cursor, 'the walk ends');

        const ids = seen.map((k) => k.id);
        assert.equal(new Set(ids).size, ids.length, `seed ${seed}: duplicates`);
        const order = seen.map((k) => [Date.parse(k.createdAt), k.id] as const);
        for (let i = 1; i < order.length; i++) {
          const [a, b] = [order[i - 1]!, order[i]!];
          assert.ok(a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]), `seed ${seed}: out of order at ${i}`);
        }
        const end = ctx().clock.now();
        const mustAppear = [...initial].filter(
          (id) => all || (!revoked.has(id) && (expiry.get(id) === null || expiry.get(id)! > end)),
        );
        const listed = new Set(ids);
        assert.deepEqual(
          mustAppear.filter((id) => !listed.has(id)),
          [],
          `seed ${seed}: skipped keys`,
        );
      }
    });
  }
});
