import { Type } from 'typebox';
import { docRequired } from '../../../core/http/doc-schema.ts';

export const OAuthClientCreateSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'Shown on the consent page' }),
    redirectUris: Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
      minItems: 1,
      maxItems: 10,
      description: 'Exact redirect URIs (https, or http on a loopback host)',
    }),
    confidential: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'Issue a client secret (server-side apps); public clients use PKCE only',
      }),
    ),
  },
  { additionalProperties: false },
);

export const OAuthClientSchema = Type.Object(
  {
    clientId: Type.String(),
    name: Type.String(),
    redirectUris: Type.Array(Type.String()),
    confidential: Type.Boolean(),
    builtIn: Type.Boolean({
      description:
        'The organization\'s "Tessera web app" client (client_id tessera-web): deleting it turns sign-in to the web app off',
    }),
    createdEpoch: Type.Integer(),
  },
  { $id: 'OAuthClient', title: 'OAuthClient' },
);

export const OAuthClientUpdateSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Shown on the consent page' })),
    redirectUris: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
        minItems: 1,
        maxItems: 10,
        description: 'Replaces the exact redirect URIs (https, or http on a loopback host)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const OAuthClientSecretSchema = Type.Object({
  clientId: Type.String(),
  clientSecret: Type.String({ description: 'The new secret, shown only once; the old one no longer works' }),
  name: Type.String(),
  redirectUris: Type.Array(Type.String()),
  confidential: Type.Boolean(),
  builtIn: Type.Boolean(),
  createdEpoch: Type.Integer(),
});

export const OAuthClientCreatedSchema = Type.Object({
  clientId: Type.String(),
  clientSecret: Type.Optional(Type.String({ description: 'Shown only once; absent for public clients' })),
  name: Type.String(),
  redirectUris: Type.Array(Type.String()),
  confidential: Type.Boolean(),
  builtIn: Type.Boolean(),
  createdEpoch: Type.Integer(),
});

export const OAuthClientListSchema = Type.Object({ clients: Type.Array(Type.Ref('OAuthClient')) });
export const ClientIdParamsSchema = Type.Object({ id: Type.String({ format: 'uuid' }) });

const Param = Type.Optional(Type.String({ maxLength: 2048 }));

/** Authorization request parameters (RFC 6749 §4.1.1, RFC 7636): checked by the handler so errors follow the RFC. */
export const AuthorizeQuerySchema = Type.Object({
  client_id: Param,
  redirect_uri: Param,
  response_type: Param,
  state: Param,
  scope: Param,
  code_challenge: Param,
  code_challenge_method: Param,
  nonce: Param,
  organization: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        "The organization whose identity providers the page offers (its id); a registered client's own organization otherwise",
    }),
  ),
});

export const EndSessionQuerySchema = Type.Object({
  id_token_hint: Type.Optional(Type.String({ maxLength: 8192 })),
  post_logout_redirect_uri: Param,
  state: Param,
  client_id: Param,
});

export const AuthorizeFormSchema = Type.Object({
  client_id: Param,
  redirect_uri: Param,
  response_type: Param,
  state: Param,
  scope: Param,
  code_challenge: Param,
  code_challenge_method: Param,
  nonce: Param,
  username: Type.Optional(Type.String({ maxLength: 256 })),
  password: Type.Optional(Type.String({ maxLength: 4096 })),
  csrf: Param,
  decision: Param,
  organization: Type.Optional(
    Type.String({ maxLength: 64, description: 'As on GET: whose identity providers to offer' }),
  ),
});

export const TokenFormSchema = Type.Object({
  grant_type: Param,
  code: Param,
  redirect_uri: Param,
  code_verifier: Param,
  refresh_token: Param,
  client_id: Param,
  client_secret: Param,
  scope: Param,
});
docRequired(TokenFormSchema, ['grant_type']);

export const RevokeFormSchema = Type.Object({
  token: Type.Optional(Type.String({ maxLength: 8192 })),
  token_type_hint: Param,
  client_id: Param,
  client_secret: Param,
});
docRequired(RevokeFormSchema, ['token']);

export const OAuthTokenResponseSchema = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  refresh_token: Type.Optional(Type.String({ description: 'Only when the grant includes offline_access' })),
  id_token: Type.String(),
  scope: Type.String(),
});

export const OAuthErrorSchema = Type.Object({
  error: Type.String({ description: 'RFC 6749 §5.2 error code' }),
  error_description: Type.Optional(Type.String()),
});

export const OAuthConsentListSchema = Type.Object(
  {
    consents: Type.Array(
      Type.Object({
        clientId: Type.String(),
        name: Type.String({ description: "The client's name, as on the consent page" }),
        builtIn: Type.Boolean({
          description: 'The Tessera web app itself: revoking this consent signs you out of the web app',
        }),
        scopes: Type.Array(Type.String(), { description: 'Every scope granted across its open sessions' }),
        sessions: Type.Integer({ description: 'Open sessions the client holds for you' }),
        grantedEpoch: Type.Integer(),
        lastUsedEpoch: Type.Integer(),
      }),
    ),
  },
  { description: 'OAuth clients holding open sessions in your name' },
);

export const ConsentClientParamsSchema = Type.Object({ clientId: Type.String({ format: 'uuid' }) });

export const ConsentRevokedSchema = Type.Object({ revoked: Type.Integer({ description: 'Sessions ended' }) });
