import type { FastifyInstance, FastifyRequest } from 'fastify';
import { invalidField } from './errors.ts';

/**
 * Input no column can hold, refused for every route with a 400 naming the field: the NUL character
 * in any string or key (PostgreSQL text cannot store it, and no legitimate name, password or id
 * contains it), and numbers beyond ±2^53 (past what a bigint column and a JavaScript number agree
 * on, e.g. `until: 1e300`) or not finite (JSON's `1e999` parses as Infinity). Checked before schema
 * validation, and again after it, because validation turns text into numbers: `?limit=1e999` or a
 * body's `"timeoutSeconds": "1e999"` becomes Infinity, which passes the schema's `minimum` and
 * `maximum` (Ajv compares them only for a value that was a number before coercion), and reached
 * the database (a LIMIT SQLite refuses, an integer PostgreSQL refuses) or was stored and broke
 * every later read of the record.
 */
const PARTS = [
  ['body', 'body'],
  ['query', 'query'],
  ['params', 'path'],
] as const;
const MAX_DEPTH = 64;

interface Found {
  segments: string[];
  message: string;
}

/**
 * The first problem in `value`, with the path to it as segments collected innermost first on the
 * way back up: a valid body (the common case, up to thousands of values in bulk requests) builds no
 * path strings at all.
 */
function problemIn(value: unknown, depth: number): Found | null {
  if (typeof value === 'string')
    return value.includes('\u0000') ? { segments: [], message: 'must not contain the NUL character' } : null;
  if (typeof value === 'number')
    return Number.isFinite(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER
      ? null
      : { segments: [], message: 'is out of range' };
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH || Buffer.isBuffer(value)) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = problemIn(value[i], depth + 1);
      if (found) {
        found.segments.push(String(i));
        return found;
      }
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    if (key.includes('\u0000')) return { segments: [], message: 'has a field name containing the NUL character' };
    const found = problemIn((value as Record<string, unknown>)[key], depth + 1);
    if (found) {
      found.segments.push(key);
      return found;
    }
  }
  return null;
}

/** A callback hook: it runs on every request and almost always finds nothing, so no promise. */
function guard(request: FastifyRequest, _reply: unknown, done: (error?: Error) => void): void {
  for (const [part, name] of PARTS) {
    const found = problemIn(request[part], 0);
    if (found) return done(invalidField([name, ...found.segments.reverse()].join('.'), found.message));
  }
  done();
}

export function registerInputGuards(app: FastifyInstance): void {
  app.addHook('preValidation', guard);
  app.addHook('preHandler', guard);
}
