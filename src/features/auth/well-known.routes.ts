import { Type } from 'typebox';
import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { publicJwks } from './signing-keys.ts';

const tags = ['authentication'];

export function jwksRoute(app: App, deps: Deps): void {
  app.get('/.well-known/jwks.json', {
    config: { public: true },
    schema: {
      tags, summary: 'Public keys that verify Tessera id and access tokens', security: [],
      response: { 200: Type.Object({ keys: Type.Array(Type.Object({}, { additionalProperties: true })) }) },
    },
  }, async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=300');
    return publicJwks(deps);
  });
}
