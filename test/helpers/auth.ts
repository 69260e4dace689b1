import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { signToken, type TokenClaims } from '../../src/features/auth/keys/signing-keys.ts';
import type { TestContext } from './context.ts';
import type { TestUser } from './factories.ts';

export interface LoginResult {
  endpointUrl: string;
  clientId: string;
  userPoolId: string;
  username: string;
  password: string;
  session: { authorization: string; accessToken: string; refreshToken: string; expireEpoch: number };
}

/** Signs in through POST /v1/auth/token and returns the whole response body. */
export async function login(ctx: TestContext, user: Pick<TestUser, 'username' | 'password'>): Promise<LoginResult> {
  const res = await ctx.inject({
    method: 'POST',
    url: '/v1/auth/token',
    payload: { username: user.username, password: user.password },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as LoginResult;
}

/** Real token headers for a user (the spec's `AccessToken` header), as a client would send them. */
export async function loginHeaders(
  ctx: TestContext,
  user: Pick<TestUser, 'username' | 'password'>,
): Promise<Record<string, string>> {
  const session = await login(ctx, user);
  return { accesstoken: session.session.accessToken };
}

/** A correctly signed token of a live session whose `exp` is already past. */
export async function expiredTokenHeaders(
  ctx: TestContext,
  user: Pick<TestUser, 'username' | 'password'>,
): Promise<Record<string, string>> {
  const session = await login(ctx, user);
  const claims = decodeJwt(session.session.accessToken) as TokenClaims;
  const now = Math.floor(ctx.deps.clock.now() / 1000);
  const token = await signToken(ctx.deps, { ...claims, iat: now - 7200, exp: now - 1 });
  return { accesstoken: token };
}

/** The token of a session that has been signed out with DELETE /v1/auth/token. */
export async function revokedTokenHeaders(
  ctx: TestContext,
  user: Pick<TestUser, 'username' | 'password'>,
): Promise<Record<string, string>> {
  const session = await login(ctx, user);
  const res = await ctx.inject({
    method: 'DELETE',
    url: '/v1/auth/token',
    headers: { accesstoken: session.session.accessToken },
    payload: session,
  });
  assert.equal(res.statusCode, 200, res.body);
  return { authorization: `Bearer ${session.session.accessToken}` };
}

/** An impersonation token (POST /v1/auth/impersonate) of `impersonator` acting as `username`. */
export async function impersonationHeaders(
  ctx: TestContext,
  impersonator: Pick<TestUser, 'username' | 'password'>,
  username: string,
): Promise<Record<string, string>> {
  const res = await ctx.inject({
    method: 'POST',
    url: '/v1/auth/impersonate',
    headers: await loginHeaders(ctx, impersonator),
    payload: { username },
  });
  assert.equal(res.statusCode, 200, res.body);
  return { accesstoken: (res.json() as LoginResult).session.accessToken };
}
