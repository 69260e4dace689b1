import { AppError, invalidField } from '../../../core/http/errors.ts';
import type { AuthenticationInput } from '../webhooks.schemas.ts';

/** What is stored of an endpoint's receiver authentication (`target_auth`); the secret is apart, encrypted. */
export type TargetAuth = { type: 'basic'; username: string } | { type: 'header'; headerName: string };

/** An RFC 9110 field name. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A field value without control characters (no header injection). */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]+$/;
/** Headers Tessera sets itself on a delivery, or that the HTTP connection owns. */
const RESERVED = new Set([
  'host',
  'content-type',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'user-agent',
]);

/** True when the authentication sets the Authorization header (which an OAuth client also needs). */
export const usesAuthorization = (auth: TargetAuth | null): boolean =>
  auth !== null && (auth.type === 'basic' || auth.headerName.toLowerCase() === 'authorization');

/**
 * Checks an `authentication` input (`field` names it in errors); returns what to store, the secret
 * to encrypt, or null for `type: none`.
 */
export function parseTargetAuth(
  input: AuthenticationInput,
  field: string,
): { auth: TargetAuth; secret: string } | null {
  if (input.type === 'none') return null;
  if (input.type === 'basic') {
    if (input.username === undefined) throw invalidField(`${field}.username`, 'is required for basic authentication');
    if (input.password === undefined) throw invalidField(`${field}.password`, 'is required for basic authentication');
    if (input.username.includes(':') || !FIELD_VALUE.test(input.username))
      throw invalidField(`${field}.username`, 'must not contain a colon or control characters');
    if (!FIELD_VALUE.test(input.password))
      throw invalidField(`${field}.password`, 'must not contain control characters');
    return { auth: { type: 'basic', username: input.username }, secret: input.password };
  }
  if (input.headerName === undefined)
    throw invalidField(`${field}.headerName`, 'is required for header authentication');
  if (input.headerValue === undefined)
    throw invalidField(`${field}.headerValue`, 'is required for header authentication');
  if (!TOKEN.test(input.headerName))
    throw invalidField(`${field}.headerName`, "must be an HTTP header name (letters, digits and !#$%&'*+.^_`|~-)");
  if (RESERVED.has(input.headerName.toLowerCase()))
    throw invalidField(
      `${field}.headerName`,
      `${input.headerName} is set by Tessera or the connection; choose another header`,
    );
  if (!FIELD_VALUE.test(input.headerValue))
    throw invalidField(`${field}.headerValue`, 'must not contain control characters (CR, LF, NUL, …)');
  return { auth: { type: 'header', headerName: input.headerName }, secret: input.headerValue };
}

/** 409 when receiver authentication and an OAuth client would both set Authorization. */
export function refuseAuthorizationClash(): never {
  throw new AppError(
    'conflict',
    'The endpoint has an OAuth client, which sends its token in Authorization: remove it first (DELETE /webhooks/endpoint/oauth/{endpointId}), or authenticate with another header',
  );
}

/** The header(s) a delivery carries for the endpoint's receiver authentication. */
export function targetAuthHeaders(auth: TargetAuth, secret: string): Record<string, string> {
  if (auth.type === 'basic')
    return { authorization: `Basic ${Buffer.from(`${auth.username}:${secret}`, 'utf8').toString('base64')}` };
  return { [auth.headerName.toLowerCase()]: secret };
}
