import { anyJsonDoc, docAs } from '../../core/http/doc-schema.ts';
import { Type, type Static } from 'typebox';

const Text = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });

export const AuditQuerySchema = Type.Object({
  actor: Type.Optional(Text('A user id: rows it made, or made while impersonating someone')),
  apiKey: Type.Optional(Text('An API key id: rows made with it')),
  object: Type.Optional(Text('An object id (asset, collection, user, …): rows naming it')),
  operation: Type.Optional(Text('An operationId (UpdateAsset) or an action (asset.downloaded)')),
  from: Type.Optional(Type.String({ maxLength: 40, description: 'ISO-8601 date-time: rows at or after it' })),
  to: Type.Optional(Type.String({ maxLength: 40, description: 'ISO-8601 date-time: rows before it' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: 'The `next` of the previous page' })),
});
export type AuditQuery = Static<typeof AuditQuerySchema>;

export const AuditExportQuerySchema = Type.Object({
  ...Type.Omit(AuditQuerySchema, ['limit', 'cursor']).properties,
  format: Type.Optional(
    Type.Union([Type.Literal('json'), Type.Literal('csv')], {
      default: 'json',
      description: 'json: a JSON array; csv: RFC 4180 with a header line',
    }),
  ),
});
export type AuditExportQuery = Static<typeof AuditExportQuerySchema>;

export const HistoryQuerySchema = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
});
export type HistoryQuery = Static<typeof HistoryQuerySchema>;

const Nullable = (t: ReturnType<typeof Type.String>) => Type.Union([t, Type.Null()]);

export const AuditEntrySchema = Type.Object({
  id: Type.String(),
  seq: Type.Integer({ description: "Position in the organization's chain" }),
  at: Type.String({ format: 'date-time' }),
  actor: Type.Object({
    userId: Nullable(Type.String({ description: "The user (an API key's service account); null for the system" })),
    impersonatorId: Nullable(Type.String()),
    apiKeyId: Nullable(Type.String()),
    oauthClientId: Nullable(Type.String()),
    via: Nullable(Type.String({ description: 'password, impersonation, oauth or api_key' })),
  }),
  operation: Nullable(Type.String({ description: 'The operationId of the request, or cli / system' })),
  action: Type.String(),
  target: Type.Object({ type: Type.String(), id: Nullable(Type.String()) }),
  data: docAs(
    Type.Record(Type.String(), Type.Unknown(), {
      description: 'What changed (`changes`: field → {before, after}), further `objects`, event data; never secrets',
    }),
    {
      type: 'object',
      description:
        "What the entry records (core/audit.ts). `changes`, `objects` and `impersonatorId` are Tessera's own; every other key is the action's data (for an entry that publishes an event, the event's topic objects: `asset`, `collection`, `user`, …, as in the document's `webhooks`). Keys naming a secret (password, secret, token, …) hold \"[redacted]\"",
      properties: {
        changes: {
          type: 'object',
          description: 'Changed fields: field name → its value before and after',
          additionalProperties: {
            type: 'object',
            required: ['before', 'after'],
            properties: {
              before: anyJsonDoc('The value before (null: unset)'),
              after: anyJsonDoc('The value after (null: unset)'),
            },
          },
        },
        objects: {
          type: 'array',
          description: "Further objects the entry is about (an asset's history lists the entries naming it)",
          items: {
            type: 'object',
            required: ['type', 'id'],
            properties: { type: { type: 'string', examples: ['asset'] }, id: { type: 'string' } },
          },
        },
        impersonatorId: { type: 'string', description: 'The administrator acting as the actor' },
      },
      additionalProperties: anyJsonDoc("The action's own data (its keys and shapes depend on `action`)"),
      examples: [
        {
          changes: { name: { before: 'Boats', after: 'Harbour boats' } },
          objects: [{ type: 'asset', id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b' }],
        },
      ],
    },
  ),
  origin: Type.Optional(
    Type.Object(
      { ip: Nullable(Type.String()), userAgent: Nullable(Type.String()), requestId: Nullable(Type.String()) },
      { description: 'Shown to holders of Audit Log' },
    ),
  ),
  hash: Type.String(),
  prevHash: Type.String(),
});

export const AuditPageSchema = Type.Object({
  items: Type.Array(AuditEntrySchema),
  next: Type.Union([Type.String(), Type.Null()], { description: 'Cursor of the next (older) page; null at the end' }),
});

export const VerifyReportSchema = Type.Object({
  ok: Type.Boolean(),
  checked: Type.Integer(),
  firstSeq: Type.Integer(),
  lastSeq: Type.Integer(),
  anchorSeq: Type.Integer(),
  unsealed: Type.Integer(),
  broken: Type.Union([
    Type.Object({ seq: Type.Integer(), id: Type.Union([Type.String(), Type.Null()]), reason: Type.String() }),
    Type.Null(),
  ]),
});
