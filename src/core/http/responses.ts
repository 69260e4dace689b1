import { Type, type TSchema } from 'typebox';
import { ERROR_STATUS, type ErrorCode } from './errors.ts';

export const ErrorBodySchema = Type.Object(
  {
    status: Type.Literal('error'),
    code: Type.String({ description: 'Machine-readable error code from the catalog' }),
    message: Type.String({ description: 'Human-readable explanation' }),
    requestId: Type.String(),
    details: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
        description: 'Which field, what was wrong',
      }),
    ),
    quota: Type.Optional(
      Type.Object(
        {
          name: Type.String({ description: 'The quota or limit: storageBytes, assets, uploadsPerUserPerHour, …' }),
          limit: Type.Integer(),
          used: Type.Integer({ description: 'Current use (held, or counted in the current window)' }),
          requested: Type.Optional(Type.Integer({ description: 'What this request asked for on top' })),
        },
        { description: 'On a refusal by a quota (docs/quotas.md): which one, its limit and the current use' },
      ),
    ),
    acceptedCredentials: Type.Optional(
      Type.Array(Type.String(), { description: 'On a 401: the headers that carry credentials Tessera accepts' }),
    ),
  },
  { $id: 'Error', title: 'Error' },
);

const DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request: a field is missing or invalid',
  401: 'Missing, invalid, expired or revoked credentials',
  403: 'Authenticated, but lacking the privilege',
  404: 'Not found, or not visible to the caller',
  409: 'Conflicts with the current state',
  410: 'Gone: expired or no longer available',
  413: 'Body too large',
  415: 'Unsupported content type',
  422: 'Well-formed but cannot be processed',
  429: 'Too many requests; see Retry-After',
  503: 'Not ready',
};

/** The error responses a route declares, spread into its `response` schema. */
export function errorResponses(...codes: ErrorCode[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const code of codes) {
    const status = ERROR_STATUS[code];
    out[status] = Type.Ref('Error', { description: DESCRIPTIONS[status] ?? code });
  }
  return out;
}

/** Errors every authenticated route can return. */
// 403 too: any credentialed route refuses an OAuth token whose scopes do not cover it (insufficient_scope).
export const AUTHENTICATED_ERRORS: ErrorCode[] = ['bad_request', 'unauthorized', 'forbidden', 'rate_limited'];
