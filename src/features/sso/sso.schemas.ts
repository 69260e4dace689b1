import { Type } from 'typebox';

const GroupMapping = Type.Object(
  {
    value: Type.String({ minLength: 1, maxLength: 256, description: 'A value of the groups claim' }),
    groupId: Type.String({ format: 'uuid', description: 'The Tessera group people carrying that value belong to' }),
  },
  { additionalProperties: false },
);

const Issuer = Type.String({
  minLength: 1,
  maxLength: 2000,
  description: "The provider's issuer URL; its /.well-known/openid-configuration is read at once",
});
const Scopes = Type.Array(Type.String({ minLength: 1, maxLength: 100, pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$' }), {
  maxItems: 20,
  description: 'Scopes asked of the provider (openid is always added); default openid, email, profile',
});

export const SsoProviderCreateSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'Shown on the login page: "Sign in with …"' }),
    issuer: Issuer,
    clientId: Type.String({ minLength: 1, maxLength: 500, description: "Tessera's client id at the provider" }),
    clientSecret: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2000,
        description: 'Stored encrypted, never returned; leave out for a public client (PKCE only)',
      }),
    ),
    scopes: Type.Optional(Scopes),
    groupsClaim: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'The id token claim listing groups (default groups)' }),
    ),
    groupMappings: Type.Optional(Type.Array(GroupMapping, { maxItems: 200 })),
    defaultRoleId: Type.String({ format: 'uuid', description: 'The role of people whose account is made at sign-in' }),
    jitProvisioning: Type.Optional(
      Type.Boolean({ description: 'Make an account for an unknown person at first sign-in (default true)' }),
    ),
    enabled: Type.Optional(Type.Boolean({ description: 'Offered on the login page and usable (default true)' })),
  },
  { additionalProperties: false },
);

export const SsoProviderUpdateSchema = Type.Object(
  {
    name: Type.Optional(SsoProviderCreateSchema.properties.name),
    issuer: Type.Optional(Issuer),
    clientId: Type.Optional(SsoProviderCreateSchema.properties.clientId),
    clientSecret: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 2000 }), Type.Null()], {
        description: 'A new secret, or null to remove it',
      }),
    ),
    scopes: Type.Optional(Scopes),
    groupsClaim: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    groupMappings: Type.Optional(Type.Array(GroupMapping, { maxItems: 200 })),
    defaultRoleId: Type.Optional(Type.String({ format: 'uuid' })),
    jitProvisioning: Type.Optional(Type.Boolean()),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const SsoProviderSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    issuer: Type.String(),
    clientId: Type.String(),
    hasClientSecret: Type.Boolean({ description: 'The secret itself is never returned' }),
    scopes: Type.Array(Type.String()),
    groupsClaim: Type.String(),
    groupMappings: Type.Array(Type.Object({ value: Type.String(), groupId: Type.String() })),
    defaultRoleId: Type.String(),
    jitProvisioning: Type.Boolean(),
    enabled: Type.Boolean(),
    redirectUri: Type.String({ description: 'Register this redirect URI with the provider' }),
    postLogoutRedirectUri: Type.String({ description: 'Register this post-logout redirect URI with the provider' }),
    endpoints: Type.Object({
      authorization: Type.String(),
      token: Type.String(),
      jwks: Type.String(),
      endSession: Type.Union([Type.String(), Type.Null()]),
    }),
    createdEpoch: Type.Integer(),
    updatedEpoch: Type.Integer(),
  },
  { $id: 'SsoProvider', title: 'SsoProvider' },
);

export const SsoProviderListSchema = Type.Object({ providers: Type.Array(Type.Ref('SsoProvider')) });
export const ProviderIdParamsSchema = Type.Object({ id: Type.String({ format: 'uuid' }) });

const Param = Type.Optional(Type.String({ maxLength: 2048 }));

/** The Tessera authorization request the sign-in answers (as on GET /v1/oauth2/authorize). */
export const SignInQuerySchema = Type.Object({
  client_id: Param,
  redirect_uri: Param,
  response_type: Param,
  state: Param,
  scope: Param,
  code_challenge: Param,
  code_challenge_method: Param,
  nonce: Param,
});

export const CallbackQuerySchema = Type.Object({
  code: Param,
  state: Param,
  iss: Param,
  error: Param,
  error_description: Param,
});

export const LoggedOutQuerySchema = Type.Object({ state: Param });
