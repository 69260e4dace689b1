import { actingAs, AuthError, refresh, stopActing, token } from './auth.ts';
import { t } from './messages.ts';

export interface FieldProblem {
  field: string;
  message: string;
}

/** A failed API call: its status, the API's message, and the fields it named. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: FieldProblem[];
  constructor(status: number, code: string, message: string, details: FieldProblem[] = []) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

async function send(
  method: Method,
  path: string,
  body: unknown,
  bearer: string,
  signal?: AbortSignal,
): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${bearer}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
}

/** Calls the public API as the signed-in user; one silent refresh and retry on a 401. */
export async function api<T = unknown>(method: Method, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const bearer = await token();
  const impersonating = actingAs()?.accessToken === bearer;
  let response = await send(method, path, body, bearer, signal);
  // An impersonation cannot be refreshed: when it is refused, the app is the person's own again.
  if (response.status === 401 && impersonating) {
    await stopActing();
    throw new ApiError(401, 'unauthorized', t('acting.ended'));
  }
  if (response.status === 401) response = await send(method, path, body, await refresh(), signal);
  const text = await response.text();
  const data = text ? JSON.parse(text) : undefined;
  if (!response.ok) {
    if (response.status === 401) throw new AuthError(data?.message ?? 'Unauthorized', true);
    throw new ApiError(
      response.status,
      data?.code ?? String(response.status),
      data?.message ?? data?.error_description ?? `HTTP ${response.status}`,
      data?.details ?? [],
    );
  }
  return data as T;
}

export function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
