import { ApiError } from './api.ts';
import { t } from './messages.ts';

async function answer<T>(response: Response): Promise<T> {
  const text = await response.text();
  const data = text ? JSON.parse(text) : undefined;
  if (!response.ok)
    throw new ApiError(
      response.status,
      data?.code ?? String(response.status),
      data?.message ?? `HTTP ${response.status}`,
      data?.details ?? [],
    );
  return data as T;
}

/**
 * Lasting credentials (API keys, users, passwords, OAuth clients, story board share links) and
 * impersonation take the person's own sign-in,
 * which the app's OAuth token is not (docs/auth.md). The person confirms with their password:
 * the app signs in with it (`POST /v1/auth/token`) for this one request, then signs that session
 * out (`DELETE /v1/auth/token`). The password and the token live only for the call.
 */
export async function withOwnSignIn<T>(
  username: string,
  password: string,
  method: 'POST' | 'PUT' | 'PATCH' | 'GET',
  path: string,
  body: unknown,
): Promise<T> {
  const login = await fetch('/v1/auth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  if (login.status === 401)
    throw new ApiError(401, 'unauthorized', t('admin.wrongPassword'), [
      { field: 'password', message: t('admin.wrongPassword') },
    ]);
  const session = (await answer<{ session: { accessToken: string } }>(login)).session;
  try {
    return await answer<T>(
      await fetch(path, {
        method,
        headers: { authorization: `Bearer ${session.accessToken}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
  } finally {
    await fetch('/v1/auth/token', {
      method: 'DELETE',
      headers: { authorization: `Bearer ${session.accessToken}` },
    }).catch(() => undefined);
  }
}
