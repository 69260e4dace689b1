import { CATALOG_DATE, EVENT_CATALOG, EVENT_TYPES, envelopeSchema } from '../../core/events/index.ts';
import { invalidField } from '../../core/http/errors.ts';
import { documented } from '../../core/http/doc-schema.ts';

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
  // As /openapi.json's `webhooks` shows it (document-only marks applied, core/http/doc-schema.ts).
  schema: documented(envelopeSchema(name)) as Record<string, unknown>,
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

/**
 * The OpenAPI 3.1 `webhooks` of /openapi.json: per event type, the request Tessera sends an
 * endpoint with the `standard` payload format (the reference's envelope, §14.3: `eventType`, `event`
 * and the event's topic objects), its Standard Webhooks headers and the answers it understands.
 */
export function webhookEventsDocument(): Record<string, unknown> {
  const header = (name: string, description: string) => ({
    name,
    in: 'header',
    required: true,
    description,
    schema: { type: 'string' },
  });
  const parameters = [
    header('webhook-id', 'The message id (the same on every attempt: deduplicate by it)'),
    header('webhook-timestamp', 'Seconds since the epoch when the attempt was signed'),
    header(
      'webhook-signature',
      "Standard Webhooks signature(s), space-separated `v1,<base64 HMAC-SHA256 of '<id>.<timestamp>.<body>'>` (two while a secret is being rotated)",
    ),
  ];
  return Object.fromEntries(
    LISTED.map((entry) => [
      entry.name,
      {
        post: {
          operationId: `event.${entry.name}`,
          tags: ['webhooks'],
          summary: entry.description,
          description:
            "Sent to every enabled endpoint subscribed to this type (or to its topic's wildcard). An endpoint with payloadFormat legacy receives the reference's older event-feed record instead.",
          parameters,
          requestBody: {
            required: true,
            content: { 'application/json': { schema: JSON.parse(JSON.stringify(entry.schema)) } },
          },
          responses: {
            '2XX': { description: 'Delivered' },
            '410': { description: 'Gone: the endpoint is disabled at once' },
            default: {
              description:
                'Any other answer (or none within the endpoint deadline) is retried on the schedule; `webhook-delivery: abort-message` stops retrying this message',
            },
          },
        },
      },
    ]),
  );
}
