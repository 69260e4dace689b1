// The once-serialized reply of a shared (cached) object: the route's schema still decides the text.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { sharedJsonSender } from './shared-json.ts';

describe('sharedJsonSender', () => {
  it("sends the route schema's serialization, once per object, per route", async () => {
    const app = Fastify();
    let current: Record<string, unknown> = { name: 'first', secret: 'not in the schema' };
    const sendWide = sharedJsonSender();
    const sendNarrow = sharedJsonSender();
    const wide = { type: 'object', properties: { name: { type: 'string' }, secret: { type: 'string' } } };
    const narrow = { type: 'object', properties: { name: { type: 'string' } } };
    app.get(
      '/wide',
      { schema: { operationId: 'TestSharedJsonWide', response: { 200: wide } } },
      async (_request, reply) => sendWide(reply, current),
    );
    app.get(
      '/narrow',
      { schema: { operationId: 'TestSharedJsonNarrow', response: { 200: narrow } } },
      async (_request, reply) => sendNarrow(reply, current),
    );
    try {
      const a = await app.inject({ url: '/narrow' });
      assert.equal(a.statusCode, 200);
      assert.equal(a.headers['content-type'], 'application/json; charset=utf-8');
      assert.deepEqual(JSON.parse(a.body), { name: 'first' });
      // The same object through another route is that route's serialization, not the first one's.
      assert.deepEqual(JSON.parse((await app.inject({ url: '/wide' })).body), {
        name: 'first',
        secret: 'not in the schema',
      });
      assert.equal((await app.inject({ url: '/narrow' })).body, a.body);
      // A cache hands out a new object when its value changes: that one is serialized afresh.
      current = { name: 'second' };
      assert.deepEqual(JSON.parse((await app.inject({ url: '/narrow' })).body), { name: 'second' });
    } finally {
      await app.close();
    }
  });
});
