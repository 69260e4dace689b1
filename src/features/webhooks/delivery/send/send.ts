// One HTTP delivery attempt. Never throws: every outcome becomes a SendResult the worker can record
// in the attempt log. 2xx is success; anything else (3xx included — redirects are never followed)
// is a failure with an error class.
import { createRequire } from 'node:module';
import type { Dispatcher } from 'undici';

// Loaded on first use, not at start (lean start).
let undici: typeof import('undici') | undefined;
const request: typeof import('undici').request = (...args) =>
  (undici ??= createRequire(import.meta.url)('undici') as typeof import('undici')).request(...args);
import { isTargetNotAllowed } from '../../../../core/net/ssrf.ts';

export const DEFAULT_TIMEOUT_MS = 30_000;
export const MAX_TIMEOUT_MS = 30_000;
/** How much of the receiver's response body is kept for the attempt log. */
export const MAX_RESPONSE_BYTES = 2048;
/** Response headers worth keeping in the attempt log. */
export const KEPT_RESPONSE_HEADERS = [
  'content-type',
  'content-length',
  'location',
  'retry-after',
  'webhook-delivery',
  'www-authenticate',
] as const;

/** 'oauth_token': the endpoint's OAuth token could not be obtained, so nothing was sent (see oauth-token.ts). */
export type ErrorClass =
  | 'timeout'
  | 'connection_refused'
  | 'dns'
  | 'tls'
  | 'ssrf_blocked'
  | 'http_status'
  | 'reset'
  | 'oauth_token'
  | 'other';

export interface SendInput {
  url: string;
  body: string | Buffer;
  headers: Record<string, string>;
  dispatcher: Dispatcher;
  /** Whole-attempt deadline (connect, headers and the part of the body we read); default 30 s (the reference's receiver deadline), max 30 s. */
  timeoutMs?: number;
  /** Epoch ms, for Retry-After HTTP-dates; default Date.now. */
  now?: () => number;
}

export interface SendResult {
  ok: boolean;
  status?: number;
  latencyMs: number;
  /** First 2 KiB of the response body as text ('' when there was no response). */
  responseBody: string;
  responseHeaders: Record<string, string>;
  retryAfterSeconds?: number;
  errorClass?: ErrorClass;
  error?: string;
}

/** Retry-After as seconds from now: delta-seconds or an HTTP-date (past dates give 0). */
export function parseRetryAfter(value: string | undefined | null, nowMs: number = Date.now()): number | undefined {
  if (value === undefined || value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  if (!/[a-z]/i.test(trimmed)) return undefined; // reject bare numbers like "-5" or "1.5" that Date.parse accepts
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - nowMs) / 1000));
}

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH|ERR_OSSL)/;

function errorChain(err: unknown): unknown[] {
  const out: unknown[] = [];
  const queue = [err];
  while (queue.length > 0 && out.length < 10) {
    const e = queue.shift();
    if (e === null || e === undefined || out.includes(e)) continue;
    out.push(e);
    if (e instanceof AggregateError) queue.push(...e.errors);
    if (typeof e === 'object' && 'cause' in e) queue.push((e as { cause?: unknown }).cause);
  }
  return out;
}

/** Maps a transport error (undici, net, tls, dns, our SSRF guard) to an error class. */
export function classifyError(err: unknown, timedOut = false): ErrorClass {
  if (timedOut) return 'timeout';
  const chain = errorChain(err);
  if (chain.some(isTargetNotAllowed)) return 'ssrf_blocked';
  const codes = chain.map((e) => String((e as { code?: unknown })?.code ?? ''));
  const has = (...list: string[]) => codes.some((c) => list.includes(c));
  if (has('UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT')) return 'timeout';
  if (has('ECONNREFUSED')) return 'connection_refused';
  if (has('ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL', 'EAI_NODATA', 'ENODATA')) return 'dns';
  if (codes.some((c) => TLS_CODE.test(c)) || has('EPROTO')) return 'tls';
  if (has('ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ECONNABORTED')) return 'reset';
  return 'other';
}

function describeError(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  const message = typeof e?.message === 'string' ? e.message : String(err);
  return (typeof e?.code === 'string' && !message.includes(e.code) ? `${e.code}: ${message}` : message).slice(0, 500);
}

/** Reads at most MAX_RESPONSE_BYTES of the body. The status line already decided the outcome, so a
 * body that stalls or breaks only shortens what is logged. */
async function readPrefix(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= MAX_RESPONSE_BYTES) break; // leaving the loop destroys the stream; the rest is never read
    }
  } catch {
    body.destroy();
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES));
}

/** One POST of a signed webhook. */
export async function sendOnce(input: SendInput): Promise<SendResult> {
  const timeoutMs = Math.min(Math.max(1, Math.floor(input.timeoutMs ?? DEFAULT_TIMEOUT_MS)), MAX_TIMEOUT_MS);
  const now = input.now ?? Date.now;
  const started = performance.now();
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`no complete response within ${timeoutMs} ms`));
  }, timeoutMs);
  let status: number | undefined;
  let responseHeaders: Record<string, string> = {};
  try {
    const response = await request(input.url, {
      method: 'POST',
      body: input.body,
      headers: input.headers,
      dispatcher: input.dispatcher,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: controller.signal,
    });
    status = response.statusCode;
    responseHeaders = keptHeaders(response.headers);
    const responseBody = await readPrefix(response.body);
    const latencyMs = performance.now() - started;
    const ok = status >= 200 && status < 300;
    const retryAfterSeconds = ok ? undefined : parseRetryAfter(responseHeaders['retry-after'], now());
    return {
      ok,
      status,
      latencyMs,
      responseBody,
      responseHeaders,
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
      ...(ok ? {} : { errorClass: 'http_status' as const, error: `HTTP ${status}` }),
    };
  } catch (err) {
    const latencyMs = performance.now() - started;
    const errorClass = classifyError(err, timedOut);
    return {
      ok: false,
      ...(status === undefined ? {} : { status }),
      latencyMs,
      responseBody: '',
      responseHeaders,
      errorClass,
      error: timedOut ? `timeout: no complete response within ${timeoutMs} ms` : describeError(err),
    };
  } finally {
    clearTimeout(timer);
  }
}

function keptHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of KEPT_RESPONSE_HEADERS) {
    const value = headers[name];
    if (value !== undefined) out[name] = (Array.isArray(value) ? value.join(', ') : value).slice(0, 512);
  }
  return out;
}
