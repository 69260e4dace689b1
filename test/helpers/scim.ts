import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { TestContext } from './context.ts';
import { createKey } from './api-keys.ts';
import type { TestOrg } from './factories.ts';

/** Helpers for the SCIM tests (src/features/scim): requests as an identity provider sends them. */
export const SCIM = '/scim/v2';
export const ERROR_URN = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** An API key of `org` whose role is the Administrator role (User Management among its privileges). */
export async function scimKey(ctx: TestContext, org: TestOrg, roleId = org.roles.administrator): Promise<string> {
  return (await createKey(ctx, org, { name: 'scim', roleId })).key;
}

/** A SCIM request with `Authorization: Bearer <key>` and `Content-Type: application/scim+json`. */
export function scim(
  ctx: TestContext,
  key: string,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  payload?: unknown,
  contentType = 'application/scim+json',
): Promise<LightMyRequestResponse> {
  return ctx.inject({
    method,
    url: `${SCIM}${path}`,
    headers: {
      authorization: `Bearer ${key}`,
      ...(payload === undefined ? {} : { 'content-type': contentType }),
    },
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
  });
}

/** Asserts a SCIM error: status, scimType (when given) and the RFC 7644 §3.12 shape. */
export function assertScimError(res: LightMyRequestResponse, status: number, scimType?: string): void {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/scim\+json/);
  const body = res.json() as { schemas: string[]; status: string; scimType?: string; detail: string };
  assert.deepEqual(body.schemas, [ERROR_URN]);
  assert.equal(body.status, String(status));
  assert.equal(typeof body.detail, 'string');
  if (scimType !== undefined) assert.equal(body.scimType, scimType, res.body);
}

export function userBody(userName: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    userName,
    name: { givenName: 'Ada', familyName: 'Lovelace' },
    emails: [{ value: `${userName.split('@')[0]}@example.test`, type: 'work', primary: true }],
    active: true,
    ...extra,
  };
}

export const patchOp = (...operations: Record<string, unknown>[]) => ({
  schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
  Operations: operations,
});
