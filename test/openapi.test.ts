import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { compileRouteSchemas } from '../src/app.ts';
import { forEachEngine, json } from './helpers/context.ts';

/**
 * The reference's operationIds (a copy of its table: method, path under /v1, operationId), so
 * clients generated from its OpenAPI description keep their method names against Tessera. The
 * table is read cell by cell, so padding the columns (as a Markdown formatter does) changes nothing.
 */
const REFERENCE_OPERATION_IDS = new Map<string, string>(
  readFileSync(new URL('./fixtures/reference-operation-ids.md', import.meta.url), 'utf8')
    .split('\n')
    .map((line) =>
      /^\s*\|\s*(GET|POST|PUT|PATCH|DELETE)\s*\|\s*`([^`]+)`\s*\|\s*`([^`]+)`\s*\|\s*$/.exec(line.replace(/\r$/, '')),
    )
    .filter((m) => m !== null)
    .map((m) => [`${m[1]} ${m[2]}`, m[3]!]),
);

/** Where Tessera serves a reference path: under /v1, or (webhooks, as the spec shows them) unversioned. */
function referenceKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${path.replace(/^\/v1(?=\/)/, '')}`;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Actions that take no body at all (a body schema would make an empty POST fail validation). */
const BODYLESS = new Set(['POST /webhooks/endpoint/{id}/message/{messageId}/resend']);

const served: { method: string | string[]; url: string; hidden: boolean }[] = [];

forEachEngine(
  'OpenAPI document',
  (ctx) => {
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
          assert.ok(
            op.responses && Object.keys(op.responses).some((s) => s.startsWith('2') || s.startsWith('3')),
            `${method} ${path} has no success response schema`,
          );
          for (const [status, response] of Object.entries<any>(op.responses)) {
            if (status === '204' || status.startsWith('3')) continue;
            // A body-less response (a null schema) is documented by its description alone.
            const schemas = Object.values<any>(response.content ?? {}).map((c) => c.schema);
            // @fastify/swagger invents a content-less "Default Response" for a route that declares none.
            assert.ok(
              schemas.length > 0 || (response.description && response.description !== 'Default Response'),
              `${method} ${path} ${status} has no response schema`,
            );
            assert.ok(schemas.every(Boolean), `${method} ${path} ${status} has content without a schema`);
          }
          const hasPathParams = path.includes('{');
          if (hasPathParams)
            assert.ok(
              op.parameters?.some((p: any) => p.in === 'path'),
              `${method} ${path} has no path parameter schema`,
            );
          if (
            ['post', 'put', 'patch'].includes(method) &&
            !BODYLESS.has(`${method.toUpperCase()} ${path.replace(/^\/v1(?=\/webhooks)/, '')}`)
          ) {
            assert.ok(op.requestBody?.content, `${method} ${path} has no request body schema`);
          }
        }
      }
      // Every route the server serves (except the docs UI's own static files) is in the document.
      assert.ok(served.length > 10);
      for (const route of served) {
        for (const method of [route.method].flat()) {
          if (route.hidden || method === 'HEAD' || method === 'OPTIONS') continue;
          // A wildcard route (/app/*) is documented with its parameter as {*}.
          const path = route.url
            .replace(/:([A-Za-z]+)/g, '{$1}')
            .replace(/\/\*$/, '/{*}')
            .replace(/(.)\/$/, '$1');
          assert.ok(documented.has(`${method} ${path}`), `${method} ${path} is served but not documented`);
        }
      }
    });

    it("names every operation with a unique operationId, the reference's own where it has one", async () => {
      assert.ok(REFERENCE_OPERATION_IDS.size > 60, 'the reference table was read');
      const doc = json(await ctx().inject({ method: 'GET', url: '/openapi.json' }));
      const seen = new Map<string, string>();
      const referenceNames = new Map([...REFERENCE_OPERATION_IDS].map(([key, id]) => [id, key]));
      for (const [path, item] of Object.entries<any>(doc.paths)) {
        for (const method of METHODS) {
          const op = item[method];
          if (!op) continue;
          const where = `${method.toUpperCase()} ${path}`;
          assert.equal(typeof op.operationId, 'string', `${where} has no operationId`);
          assert.match(
            op.operationId,
            /^[A-Za-z][A-Za-z0-9_]*$/,
            `${where}: operationId "${op.operationId}" is not a valid method name`,
          );
          assert.ok(
            !seen.has(op.operationId),
            `${where} and ${seen.get(op.operationId)} share the operationId ${op.operationId}`,
          );
          seen.set(op.operationId, where);
          const key = referenceKey(method, path);
          const expected = REFERENCE_OPERATION_IDS.get(key);
          if (expected) assert.equal(op.operationId, expected, `${where} is ${expected} in the reference`);
          // A reference name on another operation would give a generated client the wrong method.
          const owner = referenceNames.get(op.operationId);
          if (owner)
            assert.equal(key, owner, `${where} uses the reference name ${op.operationId}, which belongs to ${owner}`);
        }
      }
    });

    it('lists each webhook operation once: the /v1 aliases are served but not documented', async () => {
      const doc = json(await ctx().inject({ method: 'GET', url: '/openapi.json' }));
      assert.ok(doc.paths['/webhooks/endpoint']);
      assert.ok(!Object.keys(doc.paths).some((p) => p.startsWith('/v1/webhooks')));
      const alias = await ctx().inject({ method: 'GET', url: '/v1/webhooks/event-type/list' });
      assert.equal(alias.statusCode, 401, 'the alias is still served');
    });

    it('compiles every route schema (they compile on first use, so a broken one is found here, not by its first caller)', async () => {
      // Validators for request parts and serializers for each response status, of every route.
      assert.ok(compileRouteSchemas(ctx().app) > 500);
      assert.equal(compileRouteSchemas(ctx().app), 0, 'each schema compiles once');
      // Compiled ahead or on first use, they behave the same: validation errors still name the field.
      const bad = await ctx().inject({ method: 'POST', url: '/v1/auth/token', payload: { username: 'someone' } });
      assert.equal(bad.statusCode, 400);
      assert.deepEqual(json(bad).details, [{ field: 'body.password', message: 'is required' }]);
    });

    it('serves a human docs page at /docs', async () => {
      const res = await ctx().inject({ method: 'GET', url: '/docs/' });
      assert.equal(res.statusCode, 200);
      assert.match(res.headers['content-type'] as string, /text\/html/);
      assert.match(res.body, /<title>Tessera API reference<\/title>/);
      assert.doesNotMatch(res.body, /<title>Swagger UI/);
      const init = await ctx().inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
      assert.equal(init.statusCode, 200);
      const logo = /data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)/.exec(init.body);
      assert.ok(logo, 'the docs page carries its own logo');
      assert.match(Buffer.from(logo[1]!, 'base64').toString('utf8'), /<title>Tessera<\/title>/);
    });
  },
  { appOptions: { onRoute: (route) => served.push(route) } },
);
