import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json } from './helpers/context.ts';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Actions that take no body at all (a body schema would make an empty POST fail validation). */
const BODYLESS = new Set(['POST /webhooks/endpoint/{id}/message/{messageId}/resend']);

const served: { method: string | string[]; url: string; hidden: boolean }[] = [];

forEachEngine('OpenAPI document', (ctx) => {
  it('is OpenAPI 3.1 and served at /openapi.json without credentials', async () => {
    const res = await ctx().inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    assert.equal(json(res).openapi, '3.1.0');
  });

  it('describes every route with request and response schemas', async () => {
    const doc = json(await ctx().inject({ method: 'GET', url: '/openapi.json' }));
    const documented = new Set<string>();
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        documented.add(`${method.toUpperCase()} ${path}`);
        assert.ok(op.summary, `${method} ${path} has no summary`);
        assert.ok(op.responses && Object.keys(op.responses).some((s) => s.startsWith('2') || s.startsWith('3')), `${method} ${path} has no success response schema`);
        for (const [status, response] of Object.entries<any>(op.responses)) {
          if (status === '204' || status.startsWith('3')) continue;
          // A body-less response (a null schema) is documented by its description alone.
          const schemas = Object.values<any>(response.content ?? {}).map((c) => c.schema);
          // @fastify/swagger invents a content-less "Default Response" for a route that declares none.
          assert.ok(schemas.length > 0 || (response.description && response.description !== 'Default Response'), `${method} ${path} ${status} has no response schema`);
          assert.ok(schemas.every(Boolean), `${method} ${path} ${status} has content without a schema`);
        }
        const hasPathParams = path.includes('{');
        if (hasPathParams) assert.ok(op.parameters?.some((p: any) => p.in === 'path'), `${method} ${path} has no path parameter schema`);
        if (['post', 'put', 'patch'].includes(method) && !BODYLESS.has(`${method.toUpperCase()} ${path.replace(/^\/v1(?=\/webhooks)/, '')}`)) {
          assert.ok(op.requestBody?.content, `${method} ${path} has no request body schema`);
        }
      }
    }
    // Every route the server serves (except the docs UI's own static files) is in the document.
    assert.ok(served.length > 10);
    for (const route of served) {
      for (const method of [route.method].flat()) {
        if (route.hidden || method === 'HEAD' || method === 'OPTIONS') continue;
        const path = route.url.replace(/:([A-Za-z]+)/g, '{$1}').replace(/(.)\/$/, '$1');
        assert.ok(documented.has(`${method} ${path}`), `${method} ${path} is served but not documented`);
      }
    }
  });

  it('serves a human docs page at /docs', async () => {
    const res = await ctx().inject({ method: 'GET', url: '/docs/' });
    assert.equal(res.statusCode, 200);
    assert.match(res.headers['content-type'] as string, /text\/html/);
  });
}, { appOptions: { onRoute: (route) => served.push(route) } });
