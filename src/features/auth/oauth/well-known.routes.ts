import { Type } from 'typebox';
import type { Deps } from '../../../deps.ts';
import type { App } from '../../../core/http/app-types.ts';
import { publicJwks } from '../keys/signing-keys.ts';
import { SCOPES } from './oauth.service.ts';

const tags = ['authentication'];

export function jwksRoute(app: App, deps: Deps): void {
  app.get(
    '/.well-known/jwks.json',
    {
      config: { public: true },
      schema: {
        operationId: 'GetJwks',
        tags,
        summary: 'Public keys that verify Tessera id and access tokens',
        security: [],
        response: { 200: Type.Object({ keys: Type.Array(Type.Object({}, { additionalProperties: true })) }) },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return publicJwks(deps);
    },
  );
}

/** OpenID Provider metadata (OIDC Discovery 1.0 / RFC 8414). The issuer is TESSERA_PUBLIC_URL. */
export function discoveryRoute(app: App, deps: Deps): void {
  app.get(
    '/.well-known/openid-configuration',
    {
      config: { public: true },
      schema: {
        operationId: 'GetOpenIdConfiguration',
        tags,
        summary: 'OpenID Provider configuration (discovery)',
        security: [],
        response: { 200: Type.Object({}, { additionalProperties: true }) },
      },
    },
    async (_request, reply) => {
      const base = deps.config.publicUrl;
      reply.header('cache-control', 'public, max-age=300');
      return {
        issuer: base,
        authorization_endpoint: `${base}/v1/oauth2/authorize`,
        token_endpoint: `${base}/v1/oauth2/token`,
        revocation_endpoint: `${base}/v1/oauth2/revoke`,
        end_session_endpoint: `${base}/v1/oauth2/logout`,
        jwks_uri: `${base}/.well-known/jwks.json`,
        response_types_supported: ['code'],
        response_modes_supported: ['query'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        scopes_supported: [...SCOPES],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['EdDSA'],
        claims_supported: [
          'sub',
          'iss',
          'aud',
          'exp',
          'iat',
          'auth_time',
          'nonce',
          'username',
          'email',
          'email_verified',
          'groups',
          'sid',
          'act',
        ],
        authorization_response_iss_parameter_supported: true,
      };
    },
  );
}
