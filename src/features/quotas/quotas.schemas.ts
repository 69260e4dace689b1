import { Type } from 'typebox';

// A type list (not anyOf) so that the validator's type coercion cannot turn null into 0 or 0 into null.
const Limit = (what: string) =>
  Type.Optional(
    Type.Unsafe<number | null>({
      type: ['integer', 'null'],
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description: `${what}: a limit, 0 for none, or null to follow the server default`,
    }),
  );

export const QuotaUpdateSchema = Type.Object(
  {
    storageBytes: Limit('Bytes of stored content (every version, recycle bin included)'),
    assets: Limit('Assets (version chains; recycle bin included)'),
    uploadsPerUserPerHour: Limit('Uploads (new assets and versions with content) one user may start per clock hour'),
    shareMailPerHour: Limit('Share mails the organization may queue in any hour'),
    apiRequestsPerKeyPerMinute: Limit('Requests one API key may make per clock minute'),
  },
  { additionalProperties: false },
);

const Subject = Type.Object({ id: Type.String(), used: Type.Integer() });

const QuotaState = Type.Object({
  limit: Type.Union([Type.Integer(), Type.Null()], { description: 'The limit in force; null: none' }),
  source: Type.Union([Type.Literal('organization'), Type.Literal('default')], {
    description: "organization: this organization's own setting; default: the server's",
  }),
  organizationValue: Type.Union([Type.Integer(), Type.Null()], {
    description: "The organization's own setting (0: none); null when it follows the default",
  }),
  setting: Type.String({ description: 'The server setting the default comes from' }),
  used: Type.Integer({
    description: 'Held now, or counted in the current window (the busiest subject for per-user and per-key rates)',
  }),
  remaining: Type.Union([Type.Integer(), Type.Null()], {
    description: 'limit − used (never below 0); null without a limit',
  }),
  window: Type.Optional(
    Type.Object(
      { start: Type.String({ format: 'date-time' }), end: Type.String({ format: 'date-time' }) },
      { description: 'The current counting window of a rate' },
    ),
  ),
  subjects: Type.Optional(
    Type.Array(Subject, {
      description: 'Per-user or per-key counts in the current window, highest first (at most 50)',
    }),
  ),
});

export const QuotasSchema = Type.Object({
  usage: Type.Object({
    storageBytes: Type.Integer({ description: 'Bytes of stored content, every version, recycle bin included' }),
    assets: Type.Integer({ description: 'Assets (version chains), recycle bin included' }),
  }),
  quotas: Type.Object({
    storageBytes: QuotaState,
    assets: QuotaState,
    uploadsPerUserPerHour: QuotaState,
    shareMailPerHour: QuotaState,
    apiRequestsPerKeyPerMinute: QuotaState,
  }),
  updatedEpoch: Type.Union([Type.Integer(), Type.Null()], {
    description: "When the organization's settings last changed",
  }),
});
