import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SAFE_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** A caller's X-Request-Id is kept when it is sane; otherwise a fresh one is made. */
export function requestIdFor(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  if (typeof incoming === 'string' && SAFE_ID.test(incoming)) return incoming;
  return randomUUID();
}
