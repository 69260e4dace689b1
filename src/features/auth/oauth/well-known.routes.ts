import { Type } from 'typebox';
import { docAs } from '../../../core/http/doc-schema.ts';
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
        response: {
          200: Type.Object({
            keys: Type.Array(
              docAs(Type.Object({}, { additionalProperties: true }), {
                type: 'object',
                description: 'An Ed25519 public key (RFC 8037), one per signing key not retired',
                required: ['kty', 'crv', 'x', 'kid', 'alg', 'use'],
                properties: {
                  kty: { const: 'OKP' },
                  crv: { const: 'Ed25519' },
                  x: { type: 'string', description: 'The public key, base64url' },
                  kid: { type: 'string', description: "The key id tokens name in their header's kid" },
                  alg: { const: 'EdDSA' },
                  use: { const: 'sig' },
                },
              }),
            ),
          }),
        },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return publicJwks(deps);
    },
  );
}

const url = (description: string) => ({ type: 'string', format: 'uri', description });
const list = (description: string) => ({ type: 'array', items: { type: 'string' }, description });
const DISCOVERY_DOC = {
  type: 'object',
  description: 'OpenID Provider metadata (OIDC Discovery 1.0 §3, RFC 8414 §2)',
  required: [
    'issuer',
    'authorization_endpoint',
    'token_endpoint',
    'jwks_uri',
    'response_types_supported',
    'subject_types_supported',
    'id_token_signing_alg_values_supported',
  ],
  properties: {
    issuer: url('TESSERA_PUBLIC_URL'),
    authorization_endpoint: url('GET/POST /v1/oauth2/authorize'),
    token_endpoint: url('POST /v1/oauth2/token'),
    revocation_endpoint: url('POST /v1/oauth2/revoke'),
    end_session_endpoint: url('GET /v1/oauth2/logout'),
    jwks_uri: url('GET /.well-known/jwks.json'),
    response_types_supported: list('code'),
    response_modes_supported: list('query'),
    grant_types_supported: list('authorization_code, refresh_token'),
    code_challenge_methods_supported: list('S256 (PKCE)'),
    token_endpoint_auth_methods_supported: list('client_secret_basic, client_secret_post, none'),
    revocation_endpoint_auth_methods_supported: list('client_secret_basic, client_secret_post, none'),
    scopes_supported: list('The OAuth scopes'),
    subject_types_supported: list('public'),
    id_token_signing_alg_values_supported: list('EdDSA'),
    claims_supported: list('Claims of id tokens'),
    authorization_response_iss_parameter_supported: { type: 'boolean' },
  },
};

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
        response: { 200: docAs(Type.Object({}, { additionalProperties: true }), DISCOVERY_DOC) },
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
