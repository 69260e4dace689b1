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

export function createLog(level: Config['logLevel'], destination?: NodeJS.WritableStream): Log {
  const options = {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: { service: 'tessera' },
  };
  return destination ? pino(options, destination) : pino(options);
}
