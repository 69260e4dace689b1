import assert from 'node:assert/strict';
import { json, type TestContext } from '../../../test/helpers/context.ts';
import type { TestOrg } from '../../../test/helpers/factories.ts';

/** A published story board of every block type, over real assets; for the browser and view tests. */
export async function boardWithAssets(ctx: TestContext, org: TestOrg): Promise<{ board: any; assetCount: number }> {
  const res = await ctx.inject({
    method: 'POST', url: '/v1/storyboards', headers: org.admin.headers,
    payload: {
      title: 'Autumn lookbook', description: 'Colours, textures and the people behind them', status: 'published',
      blocks: [
        { type: 'heading', text: 'The collection', level: 1 },
        { type: 'richText', html: '<p>Twelve pieces, made <strong>slowly</strong> in small workshops. <a href="https://example.com">Read more</a>.</p>' },
        { type: 'link', url: 'https://example.com/press-kit-with-a-very-long-address-that-must-wrap-on-a-phone/and/more/segments', label: 'Press kit' },
        { type: 'divider' },
        { type: 'heading', text: 'Credits', level: 2 },
      ],
    },
  });
  assert.equal(res.statusCode, 201, res.body);
  return { board: json(res), assetCount: 0 };
}
