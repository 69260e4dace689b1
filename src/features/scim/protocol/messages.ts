import type { Deps } from '../../../deps.ts';
import { invalidPath, invalidSyntax, noTarget } from './errors.ts';
import { LIST_SCHEMA, type ListQuery } from '../scim.schemas.ts';

export const MAX_RESULTS = 200;
const DEFAULT_COUNT = 100;

/** RFC 7644 §3.4.2.4: startIndex below 1 is 1, a negative count is 0; count is capped at MAX_RESULTS. */
export function pageOf(query: ListQuery): { offset: number; limit: number; startIndex: number } {
  const startIndex = Math.min(Math.max(1, query.startIndex ?? 1), 2 ** 31);
  const limit = Math.min(Math.max(0, query.count ?? DEFAULT_COUNT), MAX_RESULTS);
  return { offset: startIndex - 1, limit, startIndex };
}

export function listResponse<T>(total: number, startIndex: number, resources: T[]) {
  return {
    schemas: [LIST_SCHEMA],
    totalResults: total,
    itemsPerPage: resources.length,
    startIndex,
    Resources: resources,
  };
}

export function location(deps: Deps, type: 'Users' | 'Groups', id: string): string {
  return `${deps.config.publicUrl.replace(/\/+$/, '')}/scim/v2/${type}/${id}`;
}

export function iso(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

export type Op = 'add' | 'replace' | 'remove';

/** A PatchOp operation's verb, in any case (Entra ID sends "Replace"). */
export function opOf(raw: string, index: number): Op {
  const op = raw.trim().toLowerCase();
  if (op === 'add' || op === 'replace' || op === 'remove') return op;
  throw invalidSyntax(`Operations[${index}].op must be add, replace or remove (got "${raw.slice(0, 20)}")`);
}

const PATH = /^[A-Za-z][\w$.:-]*(\[[^\]]*\])?(\.[\w$]+)?$/;

/** A path with the resource's schema URN stripped; a malformed one is 400 invalidPath. */
export function normalPath(raw: string, schemaUrn: string): string {
  const path = raw.trim();
  if (!PATH.test(path)) throw invalidPath(`The path "${raw.slice(0, 60)}" is not a valid attribute path`);
  const prefix = `${schemaUrn.toLowerCase()}:`;
  return path.toLowerCase().startsWith(prefix) ? path.slice(prefix.length) : path;
}

/** Each operation as (op, path, value): the value-object form without a path (Okta) becomes one per key. */
export function expandOperations(
  operations: readonly { op: string; path?: string; value?: unknown }[],
  schemaUrn: string,
): { op: Op; path: string; value: unknown }[] {
  const out: { op: Op; path: string; value: unknown }[] = [];
  operations.forEach((operation, i) => {
    const op = opOf(operation.op, i);
    if (operation.path !== undefined && operation.path.trim() !== '') {
      out.push({ op, path: normalPath(operation.path, schemaUrn), value: operation.value });
      return;
    }
    if (op === 'remove') throw noTarget(`Operations[${i}]: remove needs a path`);
    const value = operation.value;
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw invalidSyntax(`Operations[${i}].value must be an object of attributes when there is no path`);
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
      // The core schema's own URN as a key holds attributes of that schema.
      if (key.toLowerCase() === schemaUrn.toLowerCase() && inner !== null && typeof inner === 'object') {
        for (const [k, v] of Object.entries(inner as Record<string, unknown>))
          out.push({ op, path: normalPath(k, schemaUrn), value: v });
      } else out.push({ op, path: normalPath(key, schemaUrn), value: inner });
    }
  });
  return out;
}
