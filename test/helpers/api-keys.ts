import assert from 'node:assert/strict';
import { toJson } from '../../src/core/db/json.ts';
import { newId } from '../../src/core/ids.ts';
import { json, type TestContext } from './context.ts';
import type { TestOrg } from './factories.ts';

/** Helpers for the API key tests (src/features/api-keys). */
export const CREATE = '/api/v1/api-key/create-api-key';
export const LIST = '/api/v1/api-key/list-api-keys';
export const REVOKE = '/api/v1/api-key/revoke-api-key';

export async function createKey(ctx: TestContext, org: TestOrg, body: Record<string, unknown> = {}) {
  const res = await ctx.inject({
    method: 'POST',
    url: CREATE,
    headers: org.admin.headers,
    payload: { name: 'ci', roleId: org.roles.viewer, ...body },
  });
  assert.equal(res.statusCode, 200, res.body);
  return json<{ id: string; name: string; keyHint: string; key: string; expiresAt?: string }>(res);
}

export function assertFieldError(res: { statusCode: number; body: string }, field: string): void {
  assert.equal(res.statusCode, 400, `${field}: ${res.body}`);
  const body = JSON.parse(res.body);
  assert.equal(body.code, 'validation_failed');
  assert.ok(
    body.details.some((d: { field: string }) => d.field === field),
    `${field} not named in ${res.body}`,
  );
}

/** A role of `org` holding exactly `privileges`. */
export async function roleWith(ctx: TestContext, org: TestOrg, privileges: string[]): Promise<string> {
  const id = newId(ctx.deps.clock.now());
  await ctx.deps.db
    .insertInto('roles')
    .values({
      id,
      org_id: org.orgId,
      name: `r-${id}`,
      name_key: `r-${id}`,
      description: '',
      privileges: toJson(privileges),
      created_at: 0,
      updated_at: 0,
    })
    .execute();
  return id;
}
