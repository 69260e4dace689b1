/**
 * The reference's older event feed (its SNS/SQS "event publishing" records, as its own Lambda tests
 * show them): `{id, createdAt, createdBy, customerId, service, module, action, data{objectId,
 * lastUpdatedEpoch, capturedChanges, change[]}}`. Endpoints with `payloadFormat: "legacy"` receive
 * each event in that shape, so integrations written for that feed consume Tessera's events.
 */
export interface LegacyEvent {
  id: string;
  /** Epoch milliseconds. */
  createdAt: number;
  /** The user who caused it; "" for the system. */
  createdBy: string;
  customerId: string;
  service: string;
  module: string;
  action: string;
  data: {
    objectId: string;
    lastUpdatedEpoch: number;
    capturedChanges: Record<string, unknown>;
    change: string[];
  };
}

/** Past-tense event verbs of Tessera's catalog → the feed's imperative actions (`update`, …). */
const ACTIONS: Record<string, string> = {
  created: 'create',
  updated: 'update',
  deleted: 'delete',
  purged: 'purge',
  restored: 'restore',
  downloaded: 'download',
  shared: 'share',
  promoted: 'promote',
  applied: 'apply',
  revoked: 'revoke',
  completed: 'complete',
  expired: 'expire',
  exhausted: 'exhaust',
  disabled: 'disable',
};

/** Sub-events that are changes of one field of the legacy record: `asset.metadata.updated` is an `update` of `metadataDocument`. */
const CHANGED_FIELDS: Record<string, string> = {
  metadata: 'metadataDocument',
  security: 'securityTemplateIds',
  renditions: 'renditionsDocument',
  assets: 'assets',
};

/** Where the reference files an event: versions and relationships are modules of the asset service. */
function placeOf(topic: string): { service: string; module: string } {
  if (topic === 'version' || topic === 'relationship') return { service: 'asset', module: topic };
  return { service: topic, module: topic };
}

/** The record's object: the id of the first topic object that has one (`asset.id`, `collection.id`, …). */
function objectIdOf(topics: Record<string, unknown>): string {
  for (const value of Object.values(topics)) {
    if (value && typeof value === 'object' && typeof (value as { id?: unknown }).id === 'string')
      return (value as { id: string }).id;
    if (Array.isArray(value) && typeof value[0]?.id === 'string') return value[0].id as string;
  }
  return '';
}

/** Turns one delivered envelope (`{eventType, event{id, time, user}, …topics}`) into the legacy record. */
export function toLegacyEvent(envelope: string, customerId: string): LegacyEvent {
  const parsed = JSON.parse(envelope) as {
    eventType: string;
    event: { id: string; time: string; user: { id: string } | null };
  } & Record<string, unknown>;
  const { eventType, event, ...topics } = parsed;
  const parts = eventType.split('.');
  const verb = parts[parts.length - 1]!;
  const sub = parts.length > 2 ? parts.slice(1, -1).join('.') : undefined;
  const at = Date.parse(event.time);
  const by = event.user?.id ?? '';
  const field = sub === undefined ? undefined : (CHANGED_FIELDS[sub] ?? sub);
  return {
    // The envelope's id is `<type-slug>-<uuid>`; the feed's is the uuid.
    id: /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.exec(event.id)?.[0] ?? event.id,
    createdAt: at,
    createdBy: by,
    customerId,
    ...placeOf(parts[0]!),
    action: field === undefined ? (ACTIONS[verb] ?? verb) : 'update',
    data: {
      objectId: objectIdOf(topics),
      lastUpdatedEpoch: at,
      capturedChanges: { lastUpdatedBy: by, lastUpdatedEpoch: at, ...topics },
      change: field === undefined ? Object.keys(topics) : [field],
    },
  };
}
