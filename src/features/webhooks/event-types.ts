import { CATALOG_DATE, EVENT_CATALOG, EVENT_TYPES, envelopeSchema } from '../../core/events/index.ts';
import { invalidField } from '../../core/http/errors.ts';

const TOPIC_PREFIXES = new Set(
  EVENT_TYPES.flatMap((t) =>
    t
      .split('.')
      .slice(0, -1)
      .map((_, i, parts) => parts.slice(0, i + 1).join('.')),
  ),
);

/** Checks subscription patterns: a catalog name, '*', or '<prefix>.*' where the prefix names some catalog types. */
export function checkEventTypes(patterns: readonly string[], field: string): string[] {
  for (const pattern of patterns) {
    if (pattern === '*') continue;
    if (pattern.endsWith('.*') && TOPIC_PREFIXES.has(pattern.slice(0, -2))) continue;
    if (Object.hasOwn(EVENT_CATALOG, pattern)) continue;
    throw invalidField(
      field,
      `${pattern} is not an event type; see GET /webhooks/event-type/list (wildcards: 'asset.*', '*')`,
    );
  }
  return [...patterns];
}

export function matchesEventType(patterns: readonly string[], type: string): boolean {
  for (const pattern of patterns) {
    if (pattern === '*' || pattern === type) return true;
    if (pattern.endsWith('.*') && type.startsWith(pattern.slice(0, -1))) return true;
  }
  return false;
}

const LISTED = EVENT_TYPES.map((name) => ({
  name,
  description: EVENT_CATALOG[name].description,
  createdDate: CATALOG_DATE,
  topic: EVENT_CATALOG[name].topic,
  schema: envelopeSchema(name) as unknown as Record<string, unknown>,
})).sort((a, b) => a.name.localeCompare(b.name));

/** The catalog, by name; `after`/`before` are event-type names (reference cursors). */
export function listEventTypes(query: { before?: string; after?: string; limit?: number }) {
  if (query.before !== undefined && query.after !== undefined)
    throw invalidField('query.before', 'send before or after, not both');
  const limit = query.limit ?? 250;
  if (query.after !== undefined) return LISTED.filter((e) => e.name > query.after!).slice(0, limit);
  if (query.before !== undefined) return LISTED.filter((e) => e.name < query.before!).slice(-limit);
  return LISTED.slice(0, limit);
}
