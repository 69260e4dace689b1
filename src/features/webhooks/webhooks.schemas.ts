import { Type, type Static } from 'typebox';
import { anyJsonDoc, docAs } from '../../core/http/doc-schema.ts';

const Uuid = Type.String({ format: 'uuid', description: 'UUID' });
const Description = Type.String({ minLength: 5, maxLength: 100, description: '5 to 100 characters' });
const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'http(s) URL of the receiver (public addresses only, unless the operator allows private targets)',
});
const EventTypes = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: 100,
  uniqueItems: true,
  description: "Event-type names from GET /webhooks/event-type/list; 'topic.*' and '*' are wildcards",
});
// A type list (not anyOf) so that the validator's type coercion cannot turn 0 into null.
const RateLimit = Type.Unsafe<number | null>({
  type: ['integer', 'null'],
  minimum: 1,
  maximum: 100_000,
  description: 'Messages per second to this endpoint (null: unlimited)',
});
const TimeoutSeconds = Type.Integer({
  minimum: 1,
  maximum: 30,
  description: 'Receiver deadline per attempt in seconds (default 30, as the reference documents; max 30)',
});

/**
 * How Tessera authenticates to the receiver, besides the signature (the reference's documented
 * options: HTTP Basic, or an auth header with a secret value). The password and header value are
 * stored encrypted and never returned.
 */
export const AuthenticationInputSchema = Type.Object(
  {
    type: Type.Union([Type.Literal('basic'), Type.Literal('header'), Type.Literal('none')], {
      description: 'basic: HTTP Basic (username, password); header: headerName with headerValue; none: signature only',
    }),
    username: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'basic: the user name (no colon)' }),
    ),
    password: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1000, description: 'basic: the password (write-only)' }),
    ),
    headerName: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'header: the header name, e.g. X-Auth-Token or Authorization',
      }),
    ),
    headerValue: Type.Optional(
      Type.String({ minLength: 1, maxLength: 4000, description: 'header: its secret value (write-only)' }),
    ),
  },
  { description: 'Receiver authentication sent with every delivery' },
);
export type AuthenticationInput = Static<typeof AuthenticationInputSchema>;
const PayloadFormat = Type.Union([Type.Literal('standard'), Type.Literal('legacy')], {
  description:
    "standard: the reference's webhook envelope {eventType, event, …}; legacy: the reference's older event-feed record {id, createdAt, createdBy, customerId, service, module, action, data{objectId, lastUpdatedEpoch, capturedChanges, change[]}}",
});

export const EndpointCreateItemSchema = Type.Object({
  description: Description,
  url: Url,
  eventTypes: EventTypes,
  rateLimit: Type.Optional(RateLimit),
  timeoutSeconds: Type.Optional(TimeoutSeconds),
  disabled: Type.Optional(Type.Boolean()),
  authentication: Type.Optional(AuthenticationInputSchema),
  payloadFormat: Type.Optional(PayloadFormat),
});
export type EndpointCreateItem = Static<typeof EndpointCreateItemSchema>;
export const EndpointCreateSchema = Type.Array(EndpointCreateItemSchema, { minItems: 1, maxItems: 50 });

export const EndpointCreatedSchema = Type.Object({
  id: Uuid,
  secret: Type.String({ description: 'Signing secret (whsec_…) of the first endpoint' }),
  endpoints: Type.Array(Type.Object({ id: Uuid, secret: Type.String({ description: 'Signing secret (whsec_…)' }) }), {
    description: 'One entry per created endpoint, in request order',
  }),
});

export const EndpointUpdateSchema = Type.Object({
  description: Type.Optional(Description),
  url: Type.Optional(Url),
  eventTypes: Type.Optional(EventTypes),
  rateLimit: Type.Optional(RateLimit),
  timeoutSeconds: Type.Optional(TimeoutSeconds),
  disabled: Type.Optional(
    Type.Boolean({ description: 'false re-enables an endpoint (also one disabled automatically)' }),
  ),
  authentication: Type.Optional(AuthenticationInputSchema),
  payloadFormat: Type.Optional(PayloadFormat),
});
export type EndpointUpdate = Static<typeof EndpointUpdateSchema>;

const OAuthPublic = Type.Object({
  clientId: Type.String(),
  tokenUrl: Type.String(),
  scope: Type.Array(Type.String()),
  extraParams: Type.Record(Type.String(), Type.String()),
  authMethod: Type.Union([Type.Literal('client_secret_basic'), Type.Literal('client_secret_post')]),
});

export const EndpointSchema = Type.Object(
  {
    id: Uuid,
    description: Type.String(),
    url: Type.String(),
    eventTypes: Type.Array(Type.String()),
    disabled: Type.Boolean(),
    disabledReason: Type.Union([Type.String(), Type.Null()]),
    rateLimit: Type.Union([Type.Integer(), Type.Null()]),
    timeoutSeconds: Type.Integer(),
    oauth: Type.Union([OAuthPublic, Type.Null()], { description: 'The authorized OAuth client, without its secret' }),
    authentication: Type.Union(
      [
        Type.Object({
          type: Type.Union([Type.Literal('basic'), Type.Literal('header')]),
          username: Type.Optional(Type.String()),
          headerName: Type.Optional(Type.String()),
        }),
        Type.Null(),
      ],
      { description: 'Receiver authentication, without its password or header value; null: signature only' },
    ),
    payloadFormat: PayloadFormat,
    createdDate: Type.String({ format: 'date-time' }),
    lastUpdatedDate: Type.String({ format: 'date-time' }),
  },
  { title: 'WebhookEndpoint' },
);
export type Endpoint = Static<typeof EndpointSchema>;

const Cursor = Type.String({ minLength: 1, maxLength: 200 });
export const ListQuerySchema = Type.Object({
  before: Type.Optional(Cursor),
  after: Type.Optional(Cursor),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 250, default: 50 })),
});

/** The whole catalog fits one default page: clients of the reference read the list in one call. */
export const EventTypeListQuerySchema = Type.Object({
  before: Type.Optional(Cursor),
  after: Type.Optional(Cursor),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 250, default: 250 })),
});

export const EventTypeSchema = Type.Object({
  name: Type.String(),
  description: Type.String(),
  createdDate: Type.String({ format: 'date-time' }),
  topic: Type.String(),
  schema: docAs(Type.Object({}, { additionalProperties: true }), {
    type: 'object',
    description:
      "JSON Schema (2020-12) of the delivered body (payloadFormat standard), the same as this event's entry in the document's `webhooks`: an object schema with the envelope's eventType and event, then the event's topic objects",
    required: ['type', 'properties'],
    properties: {
      type: { const: 'object' },
      properties: {
        type: 'object',
        description: 'Field name → its JSON Schema',
        additionalProperties: {
          type: 'object',
          description: 'A JSON Schema',
          additionalProperties: anyJsonDoc('A JSON Schema keyword'),
        },
      },
      required: { type: 'array', items: { type: 'string' } },
      additionalProperties: { type: 'boolean' },
    },
    examples: [
      {
        type: 'object',
        properties: {
          eventType: { const: 'asset.downloaded' },
          event: { type: 'object' },
          asset: { type: 'object' },
        },
        required: ['eventType', 'event', 'asset'],
        additionalProperties: false,
      },
    ],
  }),
});

export const IdParamsSchema = Type.Object({ id: Uuid });
export const EndpointIdParamsSchema = Type.Object({ endpointId: Uuid });
export const MessageParamsSchema = Type.Object({ id: Uuid, messageId: Uuid });

export const OAuthSchema = Type.Object({
  clientId: Type.String({ minLength: 1, maxLength: 500 }),
  clientSecret: Type.String({ minLength: 1, maxLength: 2000 }),
  tokenUrl: Type.String({ minLength: 1, maxLength: 2048 }),
  extraParams: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 2000 }))),
  // The reference's own example sends `"scope": [""]`: empty entries mean no scope and are dropped.
  scope: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 50 })),
  authMethod: Type.Optional(
    Type.Union([Type.Literal('client_secret_basic'), Type.Literal('client_secret_post')], {
      default: 'client_secret_basic',
    }),
  ),
});
export type OAuthInput = Static<typeof OAuthSchema>;

export const SecretSchema = Type.Object({ key: Type.String({ description: 'whsec_…' }) });
export const RotateSecretSchema = Type.Object({
  key: Type.Optional(
    Type.String({ description: 'Your own new secret (whsec_ + base64 of 24–64 bytes); generated when omitted' }),
  ),
  overlapSeconds: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 604_800,
      default: 86_400,
      description: 'How long the previous secret stays valid (both signatures are sent meanwhile); default 24 h',
    }),
  ),
});

const MessageStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('delivering'),
  Type.Literal('succeeded'),
  Type.Literal('failed'),
]);
export const MessageSchema = Type.Object({
  id: Uuid,
  eventId: Type.String(),
  eventType: Type.String(),
  status: MessageStatus,
  attempts: Type.Integer(),
  nextAttemptDate: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  lastStatusCode: Type.Union([Type.Integer(), Type.Null()]),
  lastAttemptDate: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  createdDate: Type.String({ format: 'date-time' }),
});
export const MessageListQuerySchema = Type.Object({
  after: Type.Optional(Cursor),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 250, default: 50 })),
  status: Type.Optional(MessageStatus),
  eventType: Type.Optional(Type.String({ maxLength: 100 })),
});
export const Pagination = Type.Object({ nextCursor: Type.Union([Type.String(), Type.Null()]) });
export const MessageListSchema = Type.Object({ messages: Type.Array(MessageSchema), pagination: Pagination });

export const AttemptSchema = Type.Object({
  id: Uuid,
  messageId: Uuid,
  attempt: Type.Integer(),
  date: Type.String({ format: 'date-time' }),
  success: Type.Boolean(),
  statusCode: Type.Union([Type.Integer(), Type.Null()]),
  latencyMs: Type.Integer(),
  responseBody: Type.Union([Type.String(), Type.Null()], { description: 'First 1 KiB of the response' }),
  errorClass: Type.Union([Type.String(), Type.Null()]),
});
export const AttemptListQuerySchema = Type.Object({
  after: Type.Optional(Cursor),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 250, default: 50 })),
  messageId: Type.Optional(Uuid),
});
export const AttemptListSchema = Type.Object({ attempts: Type.Array(AttemptSchema), pagination: Pagination });

export const RecoverSchema = Type.Object({
  since: Type.Union([Type.String({ format: 'date-time' }), Type.Integer({ minimum: 0 })], {
    description: 'ISO date-time or epoch ms',
  }),
  until: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Integer({ minimum: 0 })])),
  dryRun: Type.Optional(Type.Boolean({ description: 'Only count what would be resent' })),
});
export const RecoveredSchema = Type.Object({ recovered: Type.Integer() });
export const ResentSchema = Type.Object({ id: Uuid, status: MessageStatus });
