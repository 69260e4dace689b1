// Every documented route, fed malformed input: path parameters, query parameters and bodies of the
// wrong type, size or range. Whatever the input, the answer is never a 5xx, and an error is JSON.
// (It found: `?limit=1e999` and `"1e999"` written as text in a body passing the schemas' bounds as
// Infinity, a 500 for a multipart body without a boundary.)
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine } from './helpers/context.ts';
import { createTestOrg } from './helpers/factories.ts';

type Schema = { $ref?: string; type?: string | string[]; properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[]; oneOf?: Schema[]; allOf?: Schema[]; enum?: unknown[]; const?: unknown; format?: string; minimum?: number };
interface Operation { parameters?: { in: string; name: string }[]; requestBody?: { content?: Record<string, { schema?: Schema }> } }

/** Pages for a person's browser: their 400 is an HTML page on purpose. */
const HTML_PAGES = ['/v1/oauth2/authorize', '/adaptive-templates/launch/'];
/** Routes that end the caller's own sign-in or change its password: the rest of the run needs them. */
const ENDS_OWN_SESSION = /\/auth\/token$|\/auth\/sessions$|password/;

const BAD_VALUES: unknown[] = [null, -1, 1.5, 1e308, 2 ** 60, '1e999', '-1e999', '99999999999999999999', '', 'x'.repeat(20_000), 'a\u0000b', '\ud800', '../../etc/passwd', [], {}, [[[[[[]]]]]], true, '2026-13-45T99:99:99Z'];
const BAD_PATH_VALUES = ['abc', '0', '-1', '99999999999999999999', '1e999', '%00', '%ff%fe', 'a'.repeat(2000), '..%2f..%2f', '00000000-0000-0000-0000-000000000000'];
const BAD_QUERY_VALUES = ['', '-1', '1e999', '-1e999', '99999999999999999999', 'abc', '%00', 'x'.repeat(2000), '[]', '{}'];
const PLACEHOLDER_ID = '0190a4b2-0000-7000-8000-000000000000';

forEachEngine('every route refuses malformed input with a 4xx JSON error, never a 5xx', (ctx) => {
  it('path, query and body values of the wrong type, size or range', async () => {
    const org = await createTestOrg(ctx());
    const doc = JSON.parse((await ctx().inject({ method: 'GET', url: '/openapi.json' })).body) as { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };
    const resolve = (s: Schema | undefined): Schema | undefined => (s?.$ref ? resolve(doc.components.schemas[s.$ref.split('/').pop()!]) : s);
    // A plausible value for a schema: the body each mutation below starts from.
    const example = (raw: Schema | undefined, depth = 0): unknown => {
      const s = resolve(raw);
      if (!s || depth > 5) return null;
      if (s.anyOf ?? s.oneOf) return example((s.anyOf ?? s.oneOf)![0], depth + 1);
      if (s.allOf) return Object.assign({}, ...s.allOf.map((x) => example(x, depth + 1)));
      if (s.enum) return s.enum[0];
      if (s.const !== undefined) return s.const;
      const type = Array.isArray(s.type) ? s.type[0] : s.type;
      if (type === 'object' || s.properties) return Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, v]) => [k, example(v, depth + 1)]));
      if (type === 'array') return [example(s.items, depth + 1)];
      if (type === 'string') return s.format === 'email' ? 'someone@example.test' : s.format === 'uri' ? 'http://127.0.0.1:9/x' : 'x';
      if (type === 'integer' || type === 'number') return s.minimum ?? 1;
      return type === 'boolean' ? true : null;
    };
    const problems: string[] = [];
    let sent = 0;
    const send = async (method: string, url: string, payload?: string) => {
      sent += 1;
      const res = await ctx().inject({ method: method as 'GET', url, headers: { ...org.admin.headers, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) }, ...(payload === undefined ? {} : { payload }) });
      if (res.statusCode >= 500) problems.push(`${res.statusCode} ${method} ${url.slice(0, 120)} ${payload?.slice(0, 120) ?? ''} → ${res.body.slice(0, 160)}`);
      else if (res.statusCode >= 400 && !String(res.headers['content-type']).includes('json') && !HTML_PAGES.some((p) => url.startsWith(p))) problems.push(`not JSON: ${res.statusCode} ${method} ${url.slice(0, 120)}`);
    };

    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [verb, operation] of Object.entries(operations)) {
        if (!['get', 'post', 'put', 'patch', 'delete'].includes(verb) || ENDS_OWN_SESSION.test(path)) continue;
        const method = verb.toUpperCase();
        const at = (value: string) => path.replace(/\{[^}]+\}/g, value);
        const url = at(PLACEHOLDER_ID);
        if (path.includes('{')) for (const value of BAD_PATH_VALUES) await send(method, at(value));
        for (const { name } of (operation.parameters ?? []).filter((p) => p.in === 'query')) {
          for (const value of BAD_QUERY_VALUES) await send(method, `${url}?${name}=${encodeURIComponent(value)}`);
          await send(method, `${url}?${name}=1&${name}=2`);
        }
        if (method === 'GET' || method === 'DELETE') continue;
        for (const text of ['{not json', '', 'null', '1', '"text"', '[]', '{}', '[null]', '[{}]', '{"n":1e999}']) await send(method, url, text);
        const body = example(operation.requestBody?.content?.['application/json']?.schema);
        if (body === null || typeof body !== 'object') continue;
        const item = Array.isArray(body) ? body[0] : body;
        if (item === null || typeof item !== 'object' || Array.isArray(item)) continue;
        const wrap = (changed: object) => JSON.stringify(Array.isArray(body) ? [changed] : changed);
        await send(method, url, wrap(item));
        for (const [field, value] of Object.entries(item)) {
          for (const bad of BAD_VALUES) await send(method, url, wrap({ ...item, [field]: bad }));
          const inner = Array.isArray(value) ? value[0] : value;
          if (inner !== null && typeof inner === 'object' && !Array.isArray(inner)) {
            for (const key of Object.keys(inner)) {
              for (const bad of BAD_VALUES) {
                const changed = { ...inner, [key]: bad };
                await send(method, url, wrap({ ...item, [field]: Array.isArray(value) ? [changed] : changed }));
              }
            }
          }
        }
      }
    }
    assert.ok(sent > 5000, `only ${sent} requests were sent`);
    assert.deepEqual(problems, []);
  });
});
