import { pino, type Logger } from 'pino';
import type { Config } from '../config.ts';

export type Log = Logger;

/** Paths that may carry secrets; they never reach a log line. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.accesstoken',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.refreshToken',
  '*.accessToken',
  '*.clientSecret',
  '*.secret',
  '*.key',
];

/**
 * Capability URLs carry their permission in the URL itself: a signature in the query (signed
 * upload, content and collection-share links, CDN tokens) or a token in the path (public
 * story-board links). Logged URLs keep their shape and lose those parts, like any other secret.
 */
const SECRET_QUERY =
  /([?&](?:signature|sig|token|access_token|refresh_token|code|password|x-amz-signature|x-amz-credential|x-amz-security-token)=)[^&#]*/gi;
const SECRET_PATH = /(\/shared\/storyboards\/)[^/?#]+/g;

export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY, '$1[redacted]').replace(SECRET_PATH, '$1[redacted]');
}

/** Fastify's request line with the URL redacted (the fields Fastify's own serializer writes). */
function requestSerializer(req: {
  method?: string;
  url?: string;
  host?: string;
  hostname?: string;
  ip?: string;
  socket?: { remotePort?: number };
  version?: string;
  raw?: { url?: string };
}) {
  if (req === null || typeof req !== 'object') return req;
  return {
    method: req.method,
    url: typeof req.url === 'string' ? redactUrl(req.url) : req.url,
    version: req.version,
    host: req.host ?? req.hostname,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

export function createLog(level: Config['logLevel'], destination?: NodeJS.WritableStream): Log {
  const options = {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: { req: requestSerializer },
    base: { service: 'tessera' },
  };
  return destination ? pino(options, destination) : pino(options);
}
