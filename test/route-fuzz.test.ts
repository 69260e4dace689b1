// Every documented route, fed malformed input: path parameters, query parameters and bodies of the
// wrong type, size or range. Whatever the input, the answer is never a 5xx, and an error is JSON.
// (It found: `?limit=1e999` and `"1e999"` written as text in a body passing the schemas' bounds as
// Infinity, a 500 for a multipart body without a boundary.) A second pass sends every name an
// object answers to by inheritance (`__proto__`, `constructor` …) into every path parameter, query
// parameter and string body field: a 4xx, or a 2xx where the name is plain data (a search text, a
// user's name), and the process alive and whole afterwards (issue 23, defect 1: an `excludes` path
// through `__proto__` deleted Object.prototype.hasOwnProperty and the server ended).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine, type TestContext } from './helpers/context.ts';
import { createTestOrg, type TestOrg } from './helpers/factories.ts';
import { PROTOTYPE_NAMES } from '../src/core/lookup.ts';
import { jpeg, uploadAsset } from './helpers/assets.ts';
import { documented } from './helpers/documented.ts';

/** Pages for a person's browser: their 400 is an HTML page on purpose. */
const HTML_PAGES = [
  '/v1/oauth2/authorize',
  '/v1/oauth2/logout',
  '/adaptive-templates/launch/',
  '/v1/sso/callback',
  '/v1/sso/logged-out',
];
/** Single sign-on's start link (a browser page too); the provider administration next to it answers JSON. */
const isHtmlPage = (url: string) =>
  HTML_PAGES.some((p) => url.startsWith(p)) || /^\/v1\/sso\/providers\/[^/?]+\/signin(\?|$)/.test(url);
const BAD_VALUES: unknown[] = [
  null,
  -1,
  1.5,
  1e308,
  2 ** 60,
  '1e999',
  '-1e999',
  '99999999999999999999',
  '',
  'x'.repeat(20_000),
  'a\u0000b',
  '\ud800',
  '../../etc/passwd',
  [],
  {},
  [[[[[[]]]]]],
  true,
  '2026-13-45T99:99:99Z',
];
const BAD_PATH_VALUES = [
  'abc',
  '0',
  '-1',
  '99999999999999999999',
  '1e999',
  '%00',
  '%ff%fe',
  'a'.repeat(2000),
  '..%2f..%2f',
  '00000000-0000-0000-0000-000000000000',
];
const BAD_QUERY_VALUES = [
  '',
  '-1',
  '1e999',
  '-1e999',
  '99999999999999999999',
  'abc',
  '%00',
  'x'.repeat(2000),
  '[]',
  '{}',
];
const PLACEHOLDER_ID = '0190a4b2-0000-7000-8000-000000000000';
const WHOLE_BODY_NAMES = new Set<string>(['__proto__', 'constructor', 'toString']);

/** Sends requests as the organization's administrator; collects every 5xx and every non-JSON error. */
function sender(ctx: () => TestContext, org: () => TestOrg) {
  const problems: string[] = [];
  let sent = 0;
  const send = async (method: string, url: string, payload?: string) => {
    sent += 1;
    const res = await ctx().inject({
      method: method as 'GET',
      url,
      headers: { ...org().admin.headers, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(payload === undefined ? {} : { payload }),
    });
    if (res.statusCode >= 500)
      problems.push(
        `${res.statusCode} ${method} ${url.slice(0, 120)} ${payload?.slice(0, 120) ?? ''} → ${res.body.slice(0, 160)}`,
      );
    else if (res.statusCode >= 400 && !String(res.headers['content-type']).includes('json') && !isHtmlPage(url))
      problems.push(`not JSON: ${res.statusCode} ${method} ${url.slice(0, 120)}`);
  };
  return { send, problems, sent: () => sent };
}

/**
 * Every string in `value` (object values and array items, nested), each replaced in turn by `by`:
 * per string, the whole value so changed, and the path to it alone (`{sortBy: [{field: by}]}`), so
 * that the name reaches its code even where another example field would be refused first.
 */
function withEachString(value: unknown, by: string, depth = 0): { whole: unknown; alone: unknown }[] {
  if (typeof value === 'string') return [{ whole: by, alone: by }];
  if (value === null || typeof value !== 'object' || depth > 4) return [];
  if (Array.isArray(value)) {
    return value.flatMap((item, i) =>
      withEachString(item, by, depth + 1).map(({ whole, alone }) => ({
        whole: value.map((v, j) => (i === j ? whole : v)),
        alone: [alone],
      })),
    );
  }
  return Object.entries(value).flatMap(([key, inner]) =>
    withEachString(inner, by, depth + 1).map(({ whole, alone }) => ({
      whole: { ...value, [key]: whole },
      alone: { [key]: alone },
    })),
  );
}

forEachEngine('every route refuses malformed input with a 4xx JSON error, never a 5xx', (ctx) => {
  // Anything thrown outside a request (the prototype-name defect ended the process after its 200).
  const crashes: unknown[] = [];
  const record = (error: unknown) => crashes.push(error);
  before(() => {
    process.on('uncaughtException', record);
    process.on('unhandledRejection', record);
  });
  after(() => {
    process.off('uncaughtException', record);
    process.off('unhandledRejection', record);
  });

  it('path, query and body values of the wrong type, size or range', async () => {
    const org = await createTestOrg(ctx());
    const { operations } = await documented(ctx());
    const { send, problems, sent: sentCount } = sender(ctx, () => org);

    for (const { path, method, operation, body } of operations) {
      const at = (value: string) => path.replace(/\{[^}]+\}/g, value);
      const url = at(PLACEHOLDER_ID);
      if (path.includes('{')) for (const value of BAD_PATH_VALUES) await send(method, at(value));
      for (const { name } of (operation.parameters ?? []).filter((p) => p.in === 'query')) {
        for (const value of BAD_QUERY_VALUES) await send(method, `${url}?${name}=${encodeURIComponent(value)}`);
        await send(method, `${url}?${name}=1&${name}=2`);
      }
      if (method === 'GET' || method === 'DELETE') continue;
      for (const text of ['{not json', '', 'null', '1', '"text"', '[]', '{}', '[null]', '[{}]', '{"n":1e999}'])
        await send(method, url, text);
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
    assert.ok(sentCount() > 5000, `only ${sentCount()} requests were sent`);
    assert.deepEqual(problems, []);
  });

  it('prototype names (__proto__, constructor, toString …) in every path parameter, query parameter and string body field: a 4xx or 2xx, and the process whole afterwards', async () => {
    const org = await createTestOrg(ctx());
    const { operations } = await documented(ctx());
    const { send, problems, sent } = sender(ctx, () => org);
    // A real asset, so that searches have a result to apply `excludes` to and rendition routes
    // reach a record's renditions: its id stands in every path parameter not being fuzzed.
    const assetId = (await uploadAsset(ctx(), org, await jpeg(), 'fuzz.jpg')).objectId;
    const pristine = new Map(
      Object.getOwnPropertyNames(Object.prototype).map((n) => [
        n,
        Object.getOwnPropertyDescriptor(Object.prototype, n)!.value,
      ]),
    );
    for (const { path, method, operation, body } of operations) {
      const params = path.match(/\{[^}]+\}/g) ?? [];
      const queries = (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      const url = path.replace(/\{[^}]+\}/g, assetId);
      const payload =
        method === 'GET' || method === 'DELETE' || body === null || typeof body !== 'object' ? undefined : body;
      for (const name of PROTOTYPE_NAMES) {
        // Each path parameter in turn, the others a well-formed id.
        for (const param of params)
          await send(
            method,
            path.replace(/\{[^}]+\}/g, (p) => (p === param ? name : assetId)),
            payload === undefined ? undefined : JSON.stringify(payload),
          );
        for (const query of queries) await send(method, `${url}?${query}=${encodeURIComponent(name)}`);
        if (payload !== undefined) {
          // Every name alone in each field; three of them also within the whole example body.
          for (const { whole, alone } of withEachString(payload, name)) {
            const texts = new Set([
              JSON.stringify(alone),
              ...(WHOLE_BODY_NAMES.has(name) ? [JSON.stringify(whole)] : []),
            ]);
            for (const text of texts) await send(method, url, text);
          }
          // A dot path through the prototype, where a list of names is taken (excludes, includes, fields).
          for (const { alone } of withEachString(
            payload,
            `${name}.${name === '__proto__' ? 'hasOwnProperty' : 'prototype'}`,
          )) {
            if (JSON.stringify(alone).includes('["')) await send(method, url, JSON.stringify(alone));
          }
        }
      }
      // …and as field names of the body.
      if (payload !== undefined && !Array.isArray(payload)) {
        const rest = JSON.stringify(payload).slice(1);
        await send(method, url, `{"__proto__":{"x":1},${rest}`);
        await send(
          method,
          url,
          `{${PROTOTYPE_NAMES.filter((n) => n !== '__proto__')
            .map((n) => `${JSON.stringify(n)}:"x"`)
            .join(',')},${rest}`,
        );
      }
    }
    assert.ok(sent() > 1500, `only ${sent()} requests were sent`);
    assert.deepEqual(problems, []);
    // Alive and whole: the server still answers, Object.prototype is untouched, nothing was thrown unheard.
    assert.equal((await ctx().inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    for (const [n, value] of pristine)
      assert.equal(Object.getOwnPropertyDescriptor(Object.prototype, n)?.value, value, `Object.prototype.${n} changed`);
    assert.deepEqual(crashes, []);
  });
});
