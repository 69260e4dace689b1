// Numbers a search hands to bigint columns (issue 23, defect 13): date-range bounds with a fraction
// and scan cursors holding 1e300, 1e20 or 2^63 reached PostgreSQL and came back as a 500.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json } from './helpers/context.ts';
import { createTestOrg } from './helpers/factories.ts';

const cursor = (values: unknown[]) => Buffer.from(JSON.stringify(values)).toString('base64url');

forEachEngine('search numbers that no bigint holds are a 400 naming the field (issue 23, defect 13)', (ctx) => {
  it('dateRanges bounds: fractions and numbers past 2^53, as numbers or text', async () => {
    const org = await createTestOrg(ctx());
    for (const url of ['/v1/search', '/v1/search/keyword', '/v1/asset/scan']) {
      for (const field of ['createdEpoch', 'lastUpdatedEpoch', 'some_date']) {
        for (const [side, bound] of [
          ['from', 1.5],
          ['from', '1.5'],
          ['to', '9223372036854775808'],
          ['to', '1e20'],
          ['from', -0.5],
        ] as const) {
          const res = await ctx().inject({
            method: 'POST',
            url,
            headers: org.admin.headers,
            payload: { searchTerm: '*', dateRanges: [{ field, [side]: bound }] },
          });
          assert.equal(
            res.statusCode,
            400,
            `${url} ${field} ${side}=${JSON.stringify(bound)}: ${res.statusCode} ${res.body}`,
          );
          assert.match(res.body, new RegExp(`body\\.dateRanges\\.0\\.${side}`));
        }
      }
      const ok = await ctx().inject({
        method: 'POST',
        url,
        headers: org.admin.headers,
        payload: { searchTerm: '*', dateRanges: [{ field: 'createdEpoch', from: '1', to: '2026-01-31' }] },
      });
      assert.equal(ok.statusCode, 200, ok.body);
    }
  });

  it('scan cursors holding 1e300, 1e20, 2^63 or a fraction are refused as not ours', async () => {
    const org = await createTestOrg(ctx());
    const scan = (body: object) =>
      ctx().inject({
        method: 'POST',
        url: '/v1/asset/scan',
        headers: org.admin.headers,
        payload: { searchTerm: '*', ...body },
      });
    const cases: [object, unknown[]][] = [
      [{}, ['s1', 1e300]],
      [{}, ['s1', 1e20]],
      [{}, ['s1', 2 ** 63]],
      [{}, ['s1', 1.5]],
      [{}, ['s1', -1]],
      [{ sortBy: [{ metadataDefinitionSearchField: 'createdEpoch', order: 'asc' }] }, ['s1', 1e300, 1]],
      [{ sortBy: [{ metadataDefinitionSearchField: 'createdEpoch', order: 'asc' }] }, ['s1', 1e20, 1]],
      [{ sortBy: [{ metadataDefinitionSearchField: 'lastUpdatedEpoch' }] }, ['s1', 2 ** 63, 1]],
      [{ sortBy: [{ metadataDefinitionSearchField: 'lastUpdatedEpoch' }] }, ['s1', 1.5, 1]],
      [{ sortBy: [{ metadataDefinitionSearchField: 'filename' }] }, ['s1', 'a', 1e20]],
    ];
    for (const [body, values] of cases) {
      const res = await scan({ ...body, cursor: cursor(values) });
      assert.equal(
        res.statusCode,
        400,
        `${JSON.stringify(body)} ${JSON.stringify(values)}: ${res.statusCode} ${res.body}`,
      );
      assert.match(res.body, /body\.cursor/);
    }
    const first = await scan({ limit: 1 });
    assert.equal(first.statusCode, 200, first.body);
    const again = json(first).cursor;
    if (again)
      assert.equal((await scan({ limit: 1, cursor: again })).statusCode, 200, 'a cursor the server issued still works');
  });
});
