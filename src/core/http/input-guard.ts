import type { FastifyInstance } from 'fastify';
import { invalidField } from './errors.ts';

/**
 * Input no column can hold, refused for every route before schema validation, with a 400 naming
 * the field: the NUL character in any string or key (PostgreSQL text cannot store it, and no
 * legitimate name, password or id contains it), and numbers beyond ±2^53 (past what a bigint
 * column and a JavaScript number agree on, e.g. `until: 1e300`).
 */
const PARTS = [['body', 'body'], ['query', 'query'], ['params', 'path']] as const;
const MAX_DEPTH = 64;

function problemIn(value: unknown, path: string, depth: number): { field: string; message: string } | null {
  if (typeof value === 'string') return value.includes('\u0000') ? { field: path, message: 'must not contain the NUL character' } : null;
  if (typeof value === 'number') return Number.isFinite(value) && Math.abs(value) > Number.MAX_SAFE_INTEGER ? { field: path, message: 'is out of range' } : null;
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH || Buffer.isBuffer(value)) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = problemIn(value[i], `${path}.${i}`, depth + 1);
      if (found) return found;
    }
    return null;
  }
  for (const [key, inner] of Object.entries(value)) {
    if (key.includes('\u0000')) return { field: path, message: 'has a field name containing the NUL character' };
    const found = problemIn(inner, `${path}.${key}`, depth + 1);
    if (found) return found;
  }
  return null;
}

export function registerInputGuards(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    for (const [part, name] of PARTS) {
      const found = problemIn(request[part], name, 0);
      if (found) throw invalidField(found.field, found.message);
    }
  });
}
