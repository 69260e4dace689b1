import { Type, type Static } from 'typebox';

export const NAME_MAX = 100;
export const PAGE_DEFAULT = 20;
export const PAGE_MAX = 100;

const Timestamp = Type.String({ format: 'date-time', description: 'ISO-8601 timestamp (UTC, milliseconds)' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export const ApiKeyCreateSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: NAME_MAX, description: 'Human-readable label' }),
    expiresAt: Type.Optional(
      Type.Union([Type.String({ format: 'date-time' }), Type.Integer({ minimum: 0 })], {
        description:
          'When the key stops working: an ISO-8601 timestamp with a time zone, or epoch milliseconds. Omit for a key that does not expire.',
      }),
    ),
    roleId: Type.String({ description: "Role of the key's service account (a role of your organization)" }),
  },
  { additionalProperties: false },
);
export type ApiKeyCreate = Static<typeof ApiKeyCreateSchema>;

export const ApiKeyCreatedSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  keyHint: Type.String({ description: 'Last 4 characters of the key' }),
  expiresAt: Type.Optional(Timestamp),
  key: Type.String({ description: 'The plaintext key. Shown only in this response; store it now.' }),
});
export type ApiKeyCreated = Static<typeof ApiKeyCreatedSchema>;

export const ApiKeySchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    keyHint: Type.String({ description: 'Last 4 characters of the key' }),
    roleId: Type.String({ format: 'uuid' }),
    createdAt: Timestamp,
    createdBy: Type.String({ format: 'uuid', description: 'The user who created the key' }),
    expiresAt: NullableTimestamp,
    revokedAt: NullableTimestamp,
    lastUsedAt: Type.Union([Timestamp, Type.Null()], {
      description: 'Last successful authentication (recorded within about a second)',
    }),
  },
  { $id: 'ApiKey', title: 'ApiKey' },
);
export type ApiKey = Static<typeof ApiKeySchema>;

export const ApiKeyListSchema = Type.Object(
  {
    pageCursor: Type.Optional(Type.String({ maxLength: 500, description: 'nextPageCursor of the previous page' })),
    maxSize: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: PAGE_MAX,
        description: `Page size, default ${PAGE_DEFAULT}, at most ${PAGE_MAX}`,
      }),
    ),
    includeRevoked: Type.Optional(Type.Boolean({ default: false })),
    includeExpired: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);
export type ApiKeyListInput = Static<typeof ApiKeyListSchema>;

export const ApiKeyPageSchema = Type.Object({
  apiKeys: Type.Array(Type.Ref('ApiKey')),
  pagination: Type.Object({
    nextPageCursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Send as pageCursor for the next page; null on the last page',
    }),
    maxSize: Type.Integer(),
  }),
});
export type ApiKeyPage = { apiKeys: ApiKey[]; pagination: { nextPageCursor: string | null; maxSize: number } };

export const ApiKeyRevokeSchema = Type.Object(
  { id: Type.String({ description: 'Id of the key to revoke' }) },
  { additionalProperties: false },
);

export const ApiKeyRevokedSchema = Type.Object({ apiKey: Type.Ref('ApiKey') });
