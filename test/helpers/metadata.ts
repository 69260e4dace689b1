import assert from 'node:assert/strict';
import type { TestContext } from './context.ts';
import type { TestOrg } from './factories.ts';

const rnd = () => Math.random().toString(36).slice(2, 8);

/** Test helpers that build definitions through the HTTP API, as an administrator would. */
export function metadataApi(ctx: TestContext, org: TestOrg) {
  const call = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, expect?: number) => {
    const res = await ctx.inject({ method, url, headers: org.admin.headers, payload: payload as object | undefined });
    if (expect !== undefined) assert.equal(res.statusCode, expect, `${method} ${url}: ${res.body}`);
    return res;
  };
  const api = {
    call,
    async vocabulary(name: string, values: (string | { valueName: string; parentValueId?: string })[]) {
      return (await call('POST', '/v1/metadata/vocabulary', { name: `${name}`, values }, 200)).json();
    },
    valueId(vocab: any, name: string): string {
      return vocab.metadataDocument.values.find((v: any) => v.valueName === name).valueId;
    },
    async attribute(body: Record<string, unknown>) {
      return (await call('POST', '/v1/metadata/attributes', body, 201)).json();
    },
    async group(name: string, attributeIds: string[]) {
      return (await call('POST', '/v1/metadata/groups', { name, attributeIds }, 201)).json();
    },
    async template(name: string, groupIds: string[], extra: Record<string, unknown> = {}) {
      return (await call('POST', '/v1/metadata/template', { name, groupIds, ...extra }, 201)).json();
    },
    /** A vocabulary pair for a two-level cascade: Colors and Shades under them. */
    async cascadeVocabularies() {
      const colors = await api.vocabulary(`Colors ${rnd()}`, ['Red', 'Blue']);
      const red = api.valueId(colors, 'Red');
      const blue = api.valueId(colors, 'Blue');
      const shades = await api.vocabulary(`Shades ${rnd()}`, [
        { valueName: 'Crimson', parentValueId: red },
        { valueName: 'Navy', parentValueId: blue },
      ]);
      return { colors, shades, red, blue };
    },
  };
  return api;
}

export { rnd };
