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
    if (Array.isArray(values) && values.length === arity && values.every((v) => typeof v === 'string' || typeof v === 'number')) {
      return values as (string | number)[];
    }
  } catch {
    // fall through to the error below
  }
  throw invalidField(field, 'is not a cursor this server issued');
}
