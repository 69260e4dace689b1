import { invalidField } from './errors.ts';

/**
 * Opaque, stable keyset cursors: base64url of the sort key of the last row returned. Paging by
 * key (not offset) means rows created or removed during a walk never cause duplicates or skips.
 */
export function encodeCursor(values: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

export function decodeCursor(cursor: string, field: string, arity: number): (string | number)[] {
  try {
    const values = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    // Only what this server issues: short strings without NUL, and whole numbers a bigint column holds.
    const issued = (v: unknown) =>
      (typeof v === 'string' && v.length <= 200 && !v.includes('\u0000')) ||
      (typeof v === 'number' && Number.isSafeInteger(v));
    if (Array.isArray(values) && values.length === arity && values.every(issued)) {
      return values as (string | number)[];
    }
  } catch {
    // fall through to the error below
  }
  throw invalidField(field, 'is not a cursor this server issued');
}
