import { Type } from 'typebox';
import { docRequiredOneOf } from '../../core/http/doc-schema.ts';

/** One body, three shapes: new token, refresh at top level, refresh inside `session` (or the whole previous response). */
export const TokenRequestSchema = Type.Object(
  {
    username: Type.Optional(Type.String({ maxLength: 256, description: 'New token: the user name' })),
    password: Type.Optional(
      Type.String({ maxLength: 4096, description: 'New token: the password (at most 4 KiB; checked before hashing)' }),
    ),
    clientId: Type.Optional(
      Type.String({ maxLength: 256, description: 'Accepted and ignored (not required since 1.5)' }),
    ),
    accessToken: Type.Optional(
      Type.String({
        maxLength: 8192,
        description: 'Refresh: the access token of the session (optional; checked to be of the same session when sent)',
      }),
    ),
    refreshToken: Type.Optional(
      Type.String({
        maxLength: 8192,
        description: 'Refresh: the refresh token (valid 30 days from sign-in; not rotated, the same one is returned)',
      }),
    ),
    session: Type.Optional(
      Type.Object({
        accessToken: Type.Optional(Type.String({ maxLength: 8192 })),
        refreshToken: Type.Optional(Type.String({ maxLength: 8192 })),
        authorization: Type.Optional(Type.String({ maxLength: 8192 })),
        expireEpoch: Type.Optional(Type.Number()),
      }),
    ),
  },
  {
    description:
      'New token: {username, password}. Refresh: {accessToken, refreshToken}, {session: {...}} or the previous response.',
    examples: [{ username: 'jane.doe', password: 'a long passphrase' }, { refreshToken: '<session.refreshToken>' }],
  },
);

docRequiredOneOf(TokenRequestSchema, [['username', 'password'], ['refreshToken'], ['session']]);

export const SessionResponseSchema = Type.Object(
  {
    endpointUrl: Type.String(),
    clientId: Type.String(),
    userPoolId: Type.String(),
    username: Type.String(),
    password: Type.Literal(''),
    session: Type.Object({
      authorization: Type.String({ description: 'JWT id token (send as Authorization)' }),
      accessToken: Type.String({ description: 'JWT access token, valid one hour (send as AccessToken)' }),
      refreshToken: Type.String({ description: 'Opaque refresh token; empty for impersonation' }),
      expireEpoch: Type.Integer({ description: 'Access token expiry, epoch milliseconds' }),
    }),
  },
  { $id: 'AuthSession', title: 'AuthSession' },
);

export const ExpireRequestSchema = Type.Object({
  endpointUrl: Type.Optional(Type.String({ maxLength: 2048 })),
  clientId: Type.Optional(Type.String({ maxLength: 256 })),
  userPoolId: Type.Optional(Type.String({ maxLength: 256 })),
  username: Type.Optional(Type.String({ maxLength: 256 })),
  password: Type.Optional(Type.String({ maxLength: 4096 })),
  session: Type.Optional(
    Type.Object({
      authorization: Type.Optional(Type.String({ maxLength: 8192 })),
      accessToken: Type.Optional(Type.String({ maxLength: 8192 })),
      refreshToken: Type.Optional(Type.String({ maxLength: 8192 })),
    }),
  ),
});

export const ExpireResponseSchema = Type.Object({
  endpointUrl: Type.String(),
  clientId: Type.String(),
  userPoolId: Type.String(),
  username: Type.String(),
  session: Type.Object({ authorization: Type.String(), accessToken: Type.String(), refreshToken: Type.String() }),
});

export const ImpersonateRequestSchema = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 256 }),
  reason: Type.Optional(
    Type.String({ maxLength: 500, description: 'Why (ticket, request); recorded in the audit log' }),
  ),
});

export const SessionSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  kind: Type.Union([Type.Literal('password'), Type.Literal('impersonation'), Type.Literal('oauth')]),
  current: Type.Boolean({ description: 'The session this request authenticated with' }),
  clientId: Type.Union([Type.String(), Type.Null()]),
  impersonatorId: Type.Union([Type.String(), Type.Null()]),
  ip: Type.Union([Type.String(), Type.Null()]),
  userAgent: Type.Union([Type.String(), Type.Null()]),
  createdEpoch: Type.Integer(),
  lastUsedEpoch: Type.Integer(),
  expireEpoch: Type.Integer(),
});

export const SessionListSchema = Type.Object({ sessions: Type.Array(SessionSchema) });
export const SessionIdParamsSchema = Type.Object({ id: Type.String({ format: 'uuid' }) });
export const RevokedCountSchema = Type.Object({ revoked: Type.Integer() });
export const UserIdParamsSchema = Type.Object({ id: Type.String({ format: 'uuid' }) });
export const UserSessionParamsSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  sessionId: Type.String({ format: 'uuid' }),
});
