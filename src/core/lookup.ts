/**
 * Prototype-safe lookups. A name a caller sends (a rendition name, a sort field, a path to
 * exclude, a form field) must never reach `object[name]` on an ordinary object: `constructor`,
 * `toString` or `hasOwnProperty` find `Object.prototype`'s functions (a 500 where a 400 was due),
 * and a write or `delete` through `__proto__` changes the prototype of every object in the process
 * (`delete record.__proto__.hasOwnProperty` ended the server). The rule, everywhere in src/:
 *
 * - fixed tables keyed by a caller's name are built with `lookupTable` (no prototype);
 * - objects that come from elsewhere (parsed JSON, stored records) are read with `own` or
 *   `hasOwn`, and walked with `ownPath`;
 * - objects filled with a caller's names are made with `bag()` (no prototype), or are a `Map`.
 *
 * docs/security-audit.md, "Prototype-safe by construction", lists the places and their tests.
 */

/** The names a prototype answers to, sent by the route fuzz test into every field. */
export const PROTOTYPE_NAMES = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
] as const;

/** A frozen table with no prototype: `table[name]` is undefined for every name not listed. */
export function lookupTable<V>(entries: Record<string, V>): Readonly<Record<string, V | undefined>> {
  const table = Object.create(null) as Record<string, V>;
  for (const key of Object.keys(entries)) table[key] = entries[key]!;
  return Object.freeze(table);
}

/** An empty object with no prototype, to fill with names that came from outside. */
export function bag<V = unknown>(): Record<string, V> {
  return Object.create(null) as Record<string, V>;
}

/** Whether `key` is `value`'s own property (false for anything that is not an object). */
export function hasOwn(value: unknown, key: string): boolean {
  return value !== null && typeof value === 'object' && Object.hasOwn(value, key);
}

/** `value[key]` when it is `value`'s own property, else undefined (never an inherited member). */
export function own<V = unknown>(value: unknown, key: string): V | undefined {
  return hasOwn(value, key) ? (value as Record<string, V>)[key] : undefined;
}

/** Follows a dot path through own properties only (`a.b.c`); undefined where any step is missing. */
export function ownPath(value: unknown, path: readonly string[]): unknown {
  let node = value;
  for (const key of path) {
    if (!hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
