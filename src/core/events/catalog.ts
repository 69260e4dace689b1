import { anyJsonDoc, docAs } from '../http/doc-schema.ts';
import { Type, type Static, type TObject, type TProperties, type TSchema } from 'typebox';

/**
 * Every event Tessera can publish (reference §14.4), with a description and the JSON Schema of its
 * topic objects (§14.5). Features publish through `publishEvent`, typed by this table, so a payload
 * that does not match its schema does not compile. Types listed before their producing feature
 * exists are marked in `since` so subscribers can subscribe ahead of time.
 */
const Id = Type.String({ format: 'uuid' });
const Ref = Type.Object({ id: Id, name: Type.String() });
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Change = <T extends TSchema>(t: T) => Type.Object({ previous: Nullable(t), current: Nullable(t) });

const Asset = Type.Object({
  id: Id,
  filename: Type.String(),
  metadataTemplate: Nullable(Ref),
  securityTemplates: Type.Array(Ref),
});
const AssetBrief = Type.Object({ id: Id, filename: Type.String() });
// Fields the reference types as strings are never null (an absent value is ""): its clients read them as strings.
const User = Type.Object({
  id: Id,
  username: Type.String({ description: 'Empty for federated (SSO) accounts' }),
  email: Type.String(),
  firstName: Type.String(),
  lastName: Type.String(),
  friendlyName: Type.String(),
  company: Type.String(),
  country: Type.String(),
  phone: Type.String(),
  contact: Type.String(),
  role: Ref,
  status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled'), Type.Literal('pending')]),
  accountType: Type.String({ description: 'local, federated (SSO) or service' }),
  groups: Type.Array(Ref),
});
const CollectionType = Type.Union([Type.Literal('Private'), Type.Literal('Shared')]);
const Collection = Type.Object({ id: Id, name: Type.String(), type: CollectionType });
const CollectionUpdate = Type.Object({
  id: Id,
  name: Type.String(),
  type: CollectionType,
  metadata: Type.Optional(
    Type.Array(
      Type.Object({
        attributeId: Id,
        value: docAs(
          Type.Unknown(),
          anyJsonDoc(
            "The attribute's new value as the request sent it: legacy (metadataDefinitionValue) or name-based (value) encoding; null clears it",
          ),
        ),
      }),
      { description: 'Only the changed attributes' },
    ),
  ),
  security: Type.Optional(Type.Object({ current: Type.Array(Ref), previous: Type.Array(Ref) })),
});
const Share = Type.Object({
  type: Type.Union([Type.Literal('Internal'), Type.Literal('External'), Type.Literal('Internal Share Link Created')]),
  recipients: Type.Array(Type.String()),
});
const Version = Type.Object({
  latest: Type.Boolean(),
  versionNumber: Type.Integer({ minimum: 1 }),
  previousVersionNumber: Nullable(Type.Integer()),
  // The reference's version object (webhooks/schemas/version.yaml), beside Tessera's fields.
  number: Type.Optional(Type.Integer({ minimum: 1, description: "The version number (the reference's name)" })),
  previous: Type.Optional(
    Nullable(
      Type.Object({
        assetId: Id,
        versionNumber: Type.Integer({ minimum: 1 }),
        createdBy: Type.Object({
          userId: Type.String(),
          firstName: Type.String(),
          lastName: Type.String(),
          time: Type.String({ description: 'ISO-8601: when the previous version was created' }),
        }),
      }),
    ),
  ),
});
const RenditionUrls = Type.Record(Type.String(), Type.String({ description: 'URL' }), {
  description:
    'URL per rendition: thumbnail (200 px), preview (700), large (1000), fpo (for placement only, 1000), mezzanine (3000); only those made (a placeholder has a thumbnail only)',
});
const Relationship = Type.Object({
  type: Type.String({ description: 'e.g. child' }),
  parent: Id,
  previousType: Type.Optional(Type.String()),
});
const Permissions = Type.Object({ added: Type.Array(Type.String()), removed: Type.Array(Type.String()) });
const SecurityTemplate = Type.Object({
  id: Id,
  name: Change(Type.String()),
  groups: Type.Array(Type.Object({ id: Id, name: Type.String(), permissions: Permissions }), {
    description: 'Groups whose permissions changed; permission names',
  }),
});
const MetadataTemplate = Type.Object({
  id: Id,
  name: Change(Type.String()),
  type: Change(Type.String({ description: 'Asset | Action | Action Form | Supporting | Proof Submission' })),
  groups: Type.Object({
    added: Type.Array(Type.Object({ groupId: Id })),
    removed: Type.Array(Type.Object({ groupId: Id })),
  }),
});
const MetadataAttribute = Type.Object({ id: Id, name: Type.String(), searchField: Type.String(), type: Type.String() });
const MetadataVocabularyChange = Type.Object({
  id: Id,
  name: Type.String(),
  values: Type.Object({ added: Type.Array(Ref), updated: Type.Array(Ref), deleted: Type.Array(Id) }),
});
const Storyboard = Type.Object({
  id: Id,
  title: Type.Optional(Type.String()),
  published: Type.Optional(Type.Boolean()),
});
const ApiKey = Type.Object({
  id: Id,
  name: Type.String(),
  keyHint: Type.String(),
  roleId: Id,
  expiresAt: Nullable(Type.String({ format: 'date-time' })),
});
const RmProject = Type.Object({ id: Id });
const Rights = Type.Object({
  license: Nullable(Type.String()),
  usageTerms: Nullable(Type.String()),
  territories: Type.Array(Type.String()),
  channels: Type.Array(Type.String()),
  startDate: Nullable(Type.String({ description: 'ISO date (yyyy-MM-dd)' })),
  expiryDate: Nullable(Type.String({ description: 'ISO date (yyyy-MM-dd)' })),
});
/** Tessera's own, beside the reference's agreement{id, name}: an asset's rights are its agreement (docs/usage-rights.md). */
const RmAgreementData = {
  agreement: Type.Object(
    { id: Id, name: Type.String() },
    { description: "The asset's rights: id is the asset's objectId, name its license (or file name)" },
  ),
  asset: Type.Optional(AssetBrief),
  rights: Type.Optional(Nullable(Rights)),
  previous: Type.Optional(Nullable(Rights)),
};
const RmEntity = Type.Object({ id: Id });
const PullZone = Type.Object({ id: Id, name: Type.String(), region: Type.String() });

type Topic =
  | 'assets'
  | 'versions'
  | 'collections'
  | 'relationships'
  | 'users'
  | 'metadata'
  | 'security'
  | 'storyboards'
  | 'api_keys'
  | 'cdn'
  | 'rights'
  | 'operational';

interface EventDefinition<P extends TProperties> {
  readonly topic: Topic;
  readonly description: string;
  /** The topic objects beside `eventType` and `event` in the envelope. */
  readonly data: TObject<P>;
}

const def = <P extends TProperties>(topic: Topic, description: string, data: P): EventDefinition<P> => ({
  topic,
  description,
  data: Type.Object(data),
});

export const EVENT_CATALOG = {
  'asset.created': def('assets', 'An asset was created: its metadata and content are available', {
    asset: Asset,
    duplicates: Type.Optional(
      Type.Array(Id, {
        description: "Tessera's own: objectIds of other assets of the organization with the same bytes (SHA-256)",
      }),
    ),
  }),
  'asset.deleted': def('assets', 'An asset was sent to the recycle bin', { asset: Asset }),
  'asset.purged': def('assets', 'An asset was permanently removed from the recycle bin', {
    asset: Type.Object({ id: Id, filename: Type.String() }),
  }),
  'asset.restored': def('assets', 'An asset was restored from the recycle bin', { asset: Asset }),
  'asset.downloaded': def('assets', 'A download of one or more assets started', {
    assets: Type.Array(AssetBrief, { minItems: 1 }),
    asset: Type.Optional(
      Type.Object(
        { id: Id, filename: Type.String() },
        { description: "The first (usually only) asset: the reference's top-level asset{id}" },
      ),
    ),
  }),
  'asset.shared': def('assets', 'Assets were shared internally or externally', {
    share: Type.Object({ ...Share.properties, assets: Type.Array(AssetBrief) }),
  }),
  'asset.metadata.updated': def('assets', 'Only the metadata of an asset changed', { asset: Asset }),
  'asset.security.updated': def('assets', 'Only the security templates of an asset changed', {
    asset: Asset,
    changes: Type.Object({ securityTemplates: Type.Object({ current: Type.Array(Ref), previous: Type.Array(Ref) }) }),
  }),
  'asset.thumbnail.created': def(
    'assets',
    "An asset's thumbnail is ready, before its larger renditions (Tessera's own; asset.renditions.created follows)",
    {
      asset: Type.Object({ ...Asset.properties, renditions: RenditionUrls }),
      renditions: Type.Optional(RenditionUrls),
    },
  ),
  'asset.renditions.created': def('assets', 'The system renditions of an asset are ready', {
    asset: Type.Object({ ...Asset.properties, renditions: RenditionUrls }),
    renditions: Type.Optional(RenditionUrls),
  }),
  'version.created': def('versions', 'A new version of an asset was uploaded (not the initial ingest)', {
    asset: Asset,
    version: Version,
  }),
  'version.promoted': def('versions', 'An older version of an asset was made the latest', {
    asset: Asset,
    version: Version,
  }),
  'collection.created': def('collections', 'A collection was created', { collection: Collection }),
  'collection.updated': def('collections', 'A collection changed', { collection: CollectionUpdate }),
  'collection.deleted': def('collections', 'A collection was permanently deleted', { collection: Collection }),
  'collection.shared': def('collections', 'A collection was shared', { collection: Collection, share: Share }),
  'collection.downloaded': def('collections', 'A download of a collection started', { collection: Collection }),
  'collection.assets.updated': def('collections', 'Assets were added to or removed from a collection', {
    collection: Type.Object({
      ...Collection.properties,
      assets: Type.Object({ added: Type.Array(Id), removed: Type.Array(Id) }),
    }),
  }),
  'collection.metadata.updated': def('collections', 'Only the metadata of a shared collection changed', {
    collection: CollectionUpdate,
  }),
  'collection.security.updated': def('collections', 'Only the security of a shared collection changed', {
    collection: CollectionUpdate,
  }),
  'relationship.created': def('relationships', 'Two assets were related', {
    asset: Type.Object({ id: Id }),
    relationship: Relationship,
  }),
  'relationship.updated': def('relationships', 'The type of a relationship changed', {
    asset: Type.Object({ id: Id }),
    relationship: Relationship,
  }),
  'relationship.deleted': def('relationships', 'A relationship between two assets was removed', {
    asset: Type.Object({ id: Id }),
    relationship: Relationship,
  }),
  'user.created': def('users', 'A user account was created', { user: User }),
  'user.updated': def('users', 'A user account changed (profile, role, status or group membership)', { user: User }),
  'metadata.template.created': def('metadata', 'A metadata template was created', { template: MetadataTemplate }),
  'metadata.template.updated': def('metadata', 'A metadata template changed', { template: MetadataTemplate }),
  'metadata.template.deleted': def('metadata', 'A metadata template was deleted', { template: Ref }),
  'metadata.group.created': def('metadata', 'A metadata group was created', { group: Ref }),
  'metadata.group.updated': def('metadata', 'A metadata group changed', { group: Ref }),
  'metadata.group.deleted': def('metadata', 'A metadata group was deleted', { group: Ref }),
  // metadata definitions beyond the reference's two live types (feat/metadata)
  'metadata.attribute.created': def('metadata', 'A metadata attribute was created', { attribute: MetadataAttribute }),
  'metadata.attribute.updated': def('metadata', 'A metadata attribute changed', { attribute: MetadataAttribute }),
  'metadata.attribute.deleted': def('metadata', 'A metadata attribute was deleted', { attribute: MetadataAttribute }),
  'metadata.vocabulary.created': def('metadata', 'A controlled vocabulary was created', { vocabulary: Ref }),
  'metadata.vocabulary.updated': def('metadata', 'A controlled vocabulary or its values changed', {
    vocabulary: MetadataVocabularyChange,
  }),
  'metadata.vocabulary.deleted': def('metadata', 'A controlled vocabulary was deleted', { vocabulary: Ref }),
  'metadata.changes.applied': def(
    'metadata',
    'Metadata definition changes were applied to assets and the search index',
    { action: Type.Object({ id: Id, changesApplied: Type.Integer(), itemsUpdated: Type.Integer() }) },
  ),
  'security.template.created': def('security', 'A security template was created', {
    securityTemplate: SecurityTemplate,
  }),
  'security.template.updated': def('security', 'A security template changed (name or group permissions)', {
    securityTemplate: SecurityTemplate,
  }),
  'security.template.deleted': def('security', 'A security template was deleted', { securityTemplate: Ref }),
  'storyboard.created': def('storyboards', 'A story board was created (enabled or disabled)', {
    storyboard: Storyboard,
  }),
  'storyboard.updated': def('storyboards', 'A story board changed (metadata, or content blocks added)', {
    storyboard: Storyboard,
  }),
  'storyboard.deleted': def('storyboards', 'A story board was deleted', { storyboard: Storyboard }),
  'storyboard.shared': def('storyboards', 'A story board was shared internally or externally', {
    storyboard: Storyboard,
    share: Share,
  }),
  'api_key.created': def('api_keys', 'An API key was created', { apiKey: ApiKey }),
  'api_key.revoked': def('api_keys', 'An API key was revoked', { apiKey: ApiKey }),
  'cdn.pullzone.created': def('cdn', 'A CDN pull zone was created', { pullZone: PullZone }),
  'cdn.pullzone.updated': def('cdn', 'A CDN pull zone changed', { pullZone: PullZone }),
  'cdn.pullzone.deleted': def('cdn', 'A CDN pull zone was deleted', { pullZone: PullZone }),
  'cdn.purge.completed': def('cdn', 'A CDN cache purge finished', {
    pullZone: PullZone,
    purge: Type.Object({ id: Id, paths: Type.Array(Type.String()) }),
  }),
  // --- reference event types whose producing feature does not exist yet: listed and subscribable (compat) ---
  // (rm.agreement.* are produced by the usage rights of assets, features/assets/rights; rm.project.* and rm.entity.* are not)
  'asset.updated': def('assets', 'An asset changed: name, content, metadata or security', { asset: Asset }),
  'rm.project.created': def('rights', 'A rights-management project was created', { project: RmProject }),
  'rm.project.updated': def('rights', 'A rights-management project changed', { project: RmProject }),
  'rm.project.deleted': def('rights', 'A rights-management project was deleted', { project: RmProject }),
  'rm.agreement.created': def('rights', 'A rights agreement was created', RmAgreementData),
  'rm.agreement.updated': def('rights', 'A rights agreement changed', RmAgreementData),
  'rm.agreement.deleted': def('rights', 'A rights agreement was deleted', RmAgreementData),
  'rm.agreement.expired': def('rights', 'A rights agreement reached its end date', RmAgreementData),
  'rm.entity.created': def('rights', 'A rights-managed entity was created', { entity: RmEntity }),
  'rm.entity.updated': def('rights', 'A rights-managed entity changed', { entity: RmEntity }),
  'rm.entity.deleted': def('rights', 'A rights-managed entity was deleted', { entity: RmEntity }),
  'message.attempt.exhausted': def(
    'operational',
    'Every delivery attempt of a webhook message failed; the message is marked failed',
    {
      message: Type.Object({
        id: Id,
        endpointId: Id,
        eventId: Type.String(),
        eventType: Type.String(),
        attempts: Type.Integer(),
        lastStatus: Nullable(Type.Integer()),
      }),
    },
  ),
  'endpoint.disabled': def('operational', 'A webhook endpoint was disabled: 5 days of failures, or 410 Gone', {
    endpoint: Type.Object({
      id: Id,
      url: Type.String(),
      failingSince: Type.String({ format: 'date-time' }),
      reason: Type.String(),
    }),
  }),
} as const;

export type EventType = keyof typeof EVENT_CATALOG;
export type EventData<T extends EventType> = Static<(typeof EVENT_CATALOG)[T]['data']>;
export const EVENT_TYPES = Object.keys(EVENT_CATALOG) as EventType[];

/** Events about webhook delivery itself: never fanned out into another exhaustion event. */
export const OPERATIONAL_EVENT_TYPES: ReadonlySet<string> = new Set(
  EVENT_TYPES.filter((t) => EVENT_CATALOG[t].topic === 'operational'),
);

export function isEventType(value: string): value is EventType {
  return Object.hasOwn(EVENT_CATALOG, value);
}

/** When the catalog entries were introduced (the reference lists a createdDate per type). */
export const CATALOG_DATE = '2026-11-22T00:00:00.000Z';

export const EventActorSchema = Type.Object({ id: Id, firstName: Type.String(), lastName: Type.String() });
export const EventMetaSchema = Type.Object({
  id: Type.String({ description: '<event-type-slug>-<uuid>, e.g. asset-metadata-updated-0190…' }),
  time: Type.String({ format: 'date-time' }),
  user: Nullable(EventActorSchema),
});

/** The full JSON Schema of the delivered body of one event type (envelope of reference §14.3). */
export function envelopeSchema(type: EventType): TSchema {
  const entry = EVENT_CATALOG[type];
  return Type.Object(
    { eventType: Type.Literal(type), event: EventMetaSchema, ...entry.data.properties },
    { additionalProperties: false },
  );
}
