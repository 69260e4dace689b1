import type { Deps } from '../../../deps.ts';
import { invalidField } from '../../../core/http/errors.ts';
import { refreshSession } from './refresh.service.ts';
import { login, type RequestMeta, type SessionResponse } from './tokens.service.ts';

export interface TokenRequest {
  username?: string;
  password?: string;
  accessToken?: string;
  refreshToken?: string;
  session?: { accessToken?: string; refreshToken?: string };
}

/** POST /v1/auth/token: a refresh when a refresh token is present anywhere, else a password login. */
export async function tokenRequest(deps: Deps, body: TokenRequest, meta: RequestMeta): Promise<SessionResponse> {
  const refreshToken = body.refreshToken || body.session?.refreshToken;
  if (refreshToken) {
    // The access token is optional (a body with only `refreshToken` is a refresh); when sent, it must match.
    const accessToken = body.refreshToken ? body.accessToken || body.session?.accessToken : body.session?.accessToken;
    return refreshSession(deps, accessToken || undefined, refreshToken);
  }
  if (body.accessToken || body.session?.accessToken)
    throw invalidField(body.accessToken ? 'body.refreshToken' : 'body.session.refreshToken', 'is required to refresh');
  if (!body.username) throw invalidField('body.username', 'is required');
  if (!body.password) throw invalidField('body.password', 'is required');
  return login(deps, body.username, body.password, meta);
}
