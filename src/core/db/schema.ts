import type { ColumnType } from 'kysely';

/**
 * The database as Kysely sees it. Conventions that hold on both engines:
 * - ids are UUID strings; every tenant-owned row carries `org_id`;
 * - times are epoch milliseconds (BIGINT), so comparisons and expiry are exact on both engines;
 * - booleans are integers 0/1; structured values are JSON text.
 * Features add their tables here (core/db owns the schema; features own the queries).
 */
export interface Database {
  organizations: OrganizationsTable;
  users: UsersTable;
  groups: GroupsTable;
  user_groups: UserGroupsTable;
  roles: RolesTable;
  security_templates: SecurityTemplatesTable;
  security_template_grants: SecurityTemplateGrantsTable;
  audit_log: AuditLogTable;
  audit_objects: AuditObjectsTable;
  audit_heads: AuditHeadsTable;
  jobs: JobsTable;
  server_state: ServerStateTable;
  auth_signing_keys: AuthSigningKeysTable;
  auth_sessions: AuthSessionsTable;
  auth_refresh_tokens: AuthRefreshTokensTable;
  auth_login_failures: AuthLoginFailuresTable;
  oauth_clients: OAuthClientsTable;
  oauth_codes: OAuthCodesTable;
  sso_providers: SsoProvidersTable;
  sso_logins: SsoLoginsTable;
  sso_identities: SsoIdentitiesTable;
  scim_resources: ScimResourcesTable;
  api_keys: ApiKeysTable;
  api_key_ips: ApiKeyIpsTable;
  events: EventsTable;
  event_fanout_queue: EventFanoutQueueTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_messages: WebhookMessagesTable;
  webhook_endpoint_owners: WebhookEndpointOwnersTable;
  webhook_attempts: WebhookAttemptsTable;
  metadata_vocabularies: MetadataVocabulariesTable;
  metadata_vocabulary_values: MetadataVocabularyValuesTable;
  metadata_attributes: MetadataAttributesTable;
  metadata_groups: MetadataGroupsTable;
  metadata_group_attributes: MetadataGroupAttributesTable;
  metadata_templates: MetadataTemplatesTable;
  metadata_template_groups: MetadataTemplateGroupsTable;
  metadata_template_access: MetadataTemplateAccessTable;
  metadata_changes: MetadataChangesTable;
  actions: ActionsTable;
  cdn_zones: CdnZonesTable;
  cdn_zone_hostnames: CdnZoneHostnamesTable;
  cdn_published_assets: CdnPublishedAssetsTable;
  cdn_purges: CdnPurgesTable;
  cdn_edges: CdnEdgesTable;
  cdn_stats_hourly: CdnStatsHourlyTable;
  cdn_stats_geo: CdnStatsGeoTable;
  security_template_permissions: SecurityTemplatePermissionsTable;
  assets: AssetsTable;
  mail_outbox: MailOutboxTable;
  asset_shares: AssetSharesTable;
  asset_content_links: AssetContentLinksTable;
  asset_security: AssetSecurityTable;
  asset_links: AssetLinksTable;
  asset_uploads: AssetUploadsTable;
  asset_visual_hashes: AssetVisualHashesTable;
  delivery_presets: DeliveryPresetsTable;
  org_quotas: OrgQuotasTable;
  org_usage: OrgUsageTable;
  org_usage_deltas: OrgUsageDeltasTable;
  quota_windows: QuotaWindowsTable;
  asset_rights_expiries: AssetRightsExpiriesTable;
  org_rights_settings: OrgRightsSettingsTable;
  user_invitations: UserInvitationsTable;
  search_docs: SearchDocsTable;
  search_doc_templates: SearchDocTemplatesTable;
  search_doc_facets: SearchDocFacetsTable;
  search_doc_sorts: SearchDocSortsTable;
  search_index_state: SearchIndexStateTable;
  collections: CollectionsTable;
  collection_members: CollectionMembersTable;
  collection_templates: CollectionTemplatesTable;
  saved_searches: SavedSearchesTable;
  saved_search_templates: SavedSearchTemplatesTable;
  storyboards: StoryboardsTable;
  storyboard_security_templates: StoryboardSecurityTemplatesTable;
  storyboard_shares: StoryboardSharesTable;
  storyboard_links: StoryboardLinksTable;
  adaptive_templates: AdaptiveTemplatesTable;
  tessera_revision: TesseraRevisionTable;
}

export interface OrganizationsTable {
  id: string;
  name: string;
  customer_id: string;
  created_at: number;
}

export interface UsersTable {
  id: string;
  org_id: string;
  username: string;
  username_key: string;
  email: string;
  first_name: string;
  last_name: string;
  friendly_name: string;
  status: 'enabled' | 'disabled' | 'pending';
  account_type: 'local' | 'federated' | 'service';
  role_id: string;
  password_hash: string | null;
  phone: string | null;
  company: string | null;
  country: string | null;
  contact: string | null;
  created_at: number;
  updated_at: number;
}

export interface GroupsTable {
  id: string;
  org_id: string;
  name: string;
  name_key: string;
  description: string;
  created_at: number;
  updated_at: number;
}

export interface UserGroupsTable {
  org_id: string;
  user_id: string;
  group_id: string;
}

export interface RolesTable {
  id: string;
  org_id: string;
  name: string;
  name_key: string;
  description: string;
  /** JSON array of privilege keys */
  privileges: string;
  created_at: number;
  updated_at: number;
}

export interface SecurityTemplatesTable {
  id: string;
  org_id: string;
  name: string;
  name_key: string;
  description: string;
  created_at: number;
  updated_at: number;
}

export interface SecurityTemplateGrantsTable {
  org_id: string;
  template_id: string;
  group_id: string;
  /** JSON array of permission ids */
  permissions: string;
}

export interface AuditLogTable {
  id: string;
  org_id: string;
  at: number;
  actor_id: string | null;
  action: string;
  target_type: string;
  target_id: string | null;
  ip: string | null;
  /** JSON object */
  data: string;
  /** The administrator who acted as actor_id (impersonation); migration 0005 */
  impersonator_id: string | null;
  // Migration 0024 (features/audit): where from, through what, and the per-organization chain.
  /** The route's operationId (or `cli`, `job`, … outside a request) */
  operation: string | null;
  /** How the caller authenticated (password, impersonation, oauth, api_key) */
  via: string | null;
  api_key_id: string | null;
  oauth_client_id: string | null;
  user_agent: string | null;
  request_id: string | null;
  /** Position in the organization's chain; null until sealed */
  seq: number | null;
  prev_hash: string | null;
  hash: string | null;
}

/** Every object an audit row names (migration 0024). */
export interface AuditObjectsTable {
  audit_id: string;
  org_id: string;
  object_id: string;
  object_type: string;
}

/** Each organization's chain head, and where its chain starts after retention pruned older rows (migration 0024). */
export interface AuditHeadsTable {
  org_id: string;
  seq: number;
  hash: string;
  anchor_seq: number;
  anchor_hash: string;
  anchor_at: number | null;
}

export interface JobsTable {
  id: string;
  org_id: string | null;
  type: string;
  /** JSON payload */
  payload: string;
  status: 'pending' | 'running' | 'done' | 'dead';
  attempts: ColumnType<number, number | undefined, number>;
  max_attempts: number;
  run_at: number;
  locked_until: number | null;
  locked_by: string | null;
  last_error: string | null;
  /** The request that enqueued it (its X-Request-Id), for the logs of the process that runs it. */
  request_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** With traces on, the enqueuing request span's W3C traceparent (core/tracing.ts). */
  trace_parent: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: number;
  updated_at: ColumnType<number, number, number>;
}

export interface ServerStateTable {
  key: string;
  value: string;
  updated_at: number;
}

// --- auth (migration 0002_auth) ---

export interface AuthSigningKeysTable {
  kid: string;
  alg: string;
  /** JSON JWK */
  public_jwk: string;
  /** JSON JWK sealed by the keyring */
  private_jwk_sealed: string;
  created_at: number;
  retired_at: number | null;
}

export interface AuthSessionsTable {
  id: string;
  org_id: string;
  user_id: string;
  kind: 'password' | 'impersonation' | 'oauth';
  client_id: string | null;
  impersonator_id: string | null;
  scope: string | null;
  ip: string | null;
  user_agent: string | null;
  created_at: number;
  last_used_at: number;
  /** Absolute end of the session (login + 30 days; impersonation: its token lifetime). */
  expires_at: number;
  revoked_at: number | null;
  revoked_reason: string | null;
  /** The identity provider the session was opened through (migration 0027), or null. */
  sso_provider_id: string | null;
}

export interface AuthRefreshTokensTable {
  token_hash: string;
  session_id: string;
  /** Id of the key the hash was made under (migration 0043; null: made before it, under the key the database's verifier named). */
  hash_key_id: string | null;
  org_id: string;
  generation: number;
  created_at: number;
  used_at: number | null;
  successor_hash: string | null;
}

export interface AuthLoginFailuresTable {
  key: string;
  failures: number;
  window_start: number;
  locked_until: number;
  /** Which attempt last reserved this key (migration 0005): tells an admitted attempt from a refused one in one statement. */
  reservation: string | null;
}

export interface OAuthClientsTable {
  id: string;
  org_id: string;
  name: string;
  /** JSON array of exact redirect URIs */
  redirect_uris: string;
  /** Null for public clients (PKCE only). */
  secret_hash: string | null;
  /** Id of the key the hash was made under (migration 0043; null: made before it, under the key the database's verifier named). */
  hash_key_id: string | null;
  created_by: string | null;
  created_at: number;
  revoked_at: number | null;
}

export interface OAuthCodesTable {
  code_hash: string;
  client_id: string;
  org_id: string;
  user_id: string;
  redirect_uri: string;
  code_challenge: string;
  scope: string;
  nonce: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  session_id: string | null;
  /** The identity provider the sign-in went through (migration 0027), or null for a password. */
  sso_provider_id: string | null;
}

// --- Single sign-on (migration 0027_sso) ---

export interface SsoProvidersTable {
  id: string;
  org_id: string;
  name: string;
  issuer: string;
  client_id: string;
  /** Sealed with the keyring (core/keyring.ts); null for a public client. */
  client_secret: string | null;
  /** Space-separated scopes asked for. */
  scopes: string;
  groups_claim: string;
  /** JSON array of { value, groupId }. */
  group_mappings: string;
  default_role_id: string;
  /** 1: unknown people get an account at first sign-in. */
  jit: number;
  enabled: number;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  end_session_endpoint: string | null;
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

export interface SsoLoginsTable {
  state_hash: string;
  org_id: string;
  provider_id: string;
  /** Sealed. */
  nonce: string;
  /** Sealed PKCE verifier. */
  code_verifier: string;
  /** JSON: the Tessera authorization request the sign-in answers. */
  request: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** SCIM's own facts about a user or group (features/scim): the provider's externalId, and its deletion. */
export interface ScimResourcesTable {
  /** User or Group */
  resource_type: string;
  resource_id: string;
  org_id: string;
  external_id: string | null;
  deleted_at: number | null;
  updated_at: number;
}

export interface SsoIdentitiesTable {
  provider_id: string;
  subject: string;
  org_id: string;
  user_id: string;
  /** The provider's last id token, sealed (its id_token_hint at logout). */
  id_token: string | null;
  created_at: number;
  last_login_at: number;
}

// --- API keys (migration 0003_api_keys) ---

export interface ApiKeysTable {
  id: string;
  org_id: string;
  name: string;
  /** keys.hash('api-key', key): never the key itself */
  key_hash: string;
  /** Id of the key the hash was made under (migration 0043; null: made before it, under the key the database's verifier named). */
  hash_key_id: string | null;
  key_hint: string;
  role_id: string;
  service_user_id: string;
  created_by: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  revoked_by: string | null;
  last_used_at: number | null;
}

export interface ApiKeyIpsTable {
  api_key_id: string;
  ip: string;
  org_id: string;
  first_seen_at: number;
}

// --- webhooks (migration 0004_webhooks) ---

/** The event outbox (core/events): one row per published event, in the transaction of its change. */
export interface EventsTable {
  id: string;
  org_id: string;
  type: string;
  /** The exact JSON body delivered to webhook endpoints (envelope of reference §14.3). */
  body: string;
  created_at: number;
}

/** Events not yet fanned out to webhook messages (migration 0018), filled by a trigger on `events`. */
export interface EventFanoutQueueTable {
  created_at: number;
  event_id: string;
  /** The worker whose fan-out holds the event's messages in memory until their outcomes are recorded (0068). */
  locked_by: string | null;
  locked_until: number | null;
}

export interface WebhookEndpointsTable {
  id: string;
  org_id: string;
  description: string;
  url: string;
  /** JSON array of event-type patterns ('asset.created', 'asset.*', '*') */
  event_types: string;
  rate_limit: number | null;
  timeout_ms: number;
  disabled: number;
  disabled_reason: string | null;
  /** Signing secrets, encrypted with the keyring. */
  secret: string;
  previous_secret: string | null;
  previous_secret_until: number | null;
  /** JSON {clientId, tokenUrl, scope, extraParams, authMethod}; the client secret is apart, encrypted. */
  oauth: string | null;
  oauth_client_secret: string | null;
  /** JSON {type: 'basic', username} or {type: 'header', headerName}: how Tessera authenticates to the receiver (null: signature only). */
  target_auth: string | null;
  /** The password or header value of `target_auth`, encrypted with the keyring. */
  target_auth_secret: string | null;
  /** 'standard' (the reference's webhook envelope) or 'legacy' (its older event-feed record). */
  payload_format: string;
  /** Start of the current unbroken run of failed attempts (null while healthy). */
  failing_since: number | null;
  /** Who made it (migration 0033): restricted metadata values reach it only while they hold Sensitive Data. */
  created_by?: string | null;
  created_at: number;
  updated_at: number;
}

export interface WebhookMessagesTable {
  /** Also the `webhook-id` header: stable across retries and replays. */
  id: string;
  org_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'delivering' | 'succeeded' | 'failed';
  /** Attempts in the current round (the retry schedule restarts on resend/recover). */
  attempts: ColumnType<number, number | undefined, number>;
  total_attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: number;
  locked_until: number | null;
  locked_by: string | null;
  last_status: number | null;
  last_attempt_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface WebhookAttemptsTable {
  id: string;
  org_id: string;
  endpoint_id: string;
  message_id: string;
  attempt: number;
  at: number;
  ok: number;
  status_code: number | null;
  latency_ms: number;
  response_body: string | null;
  error_class: string | null;
}

// --- metadata (migration 0007_metadata) ---

export interface MetadataVocabulariesTable {
  id: string;
  org_id: string;
  name: string;
  name_key: string;
  search_field: string;
  searchable: number;
  system: number;
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

export interface MetadataVocabularyValuesTable {
  id: string;
  org_id: string;
  vocabulary_id: string;
  name: string;
  name_key: string;
  /** Cascades: the value of the previous level's vocabulary this value belongs under. */
  parent_id: string | null;
  position: number;
  created_at: number;
  updated_at: number;
}

export interface MetadataAttributesTable {
  id: string;
  org_id: string;
  /** Levels of a cascading attribute point at their cascade. */
  parent_id: string | null;
  name: string;
  name_key: string;
  search_field: string;
  /** text | date | controlledVocabulary | table | cascade */
  type: string;
  sub_type: string;
  /** JSON: length, multiLine, dateFormat, vocabularyId, multiple, singleRow, columnIds */
  settings: string;
  required: number;
  readonly: number;
  visible: number;
  facetable: number;
  sortable: number;
  restricted: number;
  system: number;
  position: number;
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

export interface MetadataGroupsTable {
  id: string;
  org_id: string;
  name: string;
  name_key: string;
  search_field: string;
  description: string;
  name_visible: number;
  system: number;
  created_by: string | null;
  updated_by: string | null;
  created_at: number;
  updated_at: number;
}

export interface MetadataGroupAttributesTable {
  org_id: string;
  group_id: string;
  attribute_id: string;
  position: number;
}

export interface MetadataTemplatesTable {
  id: string;
  org_id: string;
  name: string;
  name_key: string;
  /** JSON array: default | asset | action | search | proof | tile */
  template_types: string;
  /** JSON [{searchField, value}] */
  default_values: string;
  template_override: string | null;
  is_default: number;
  /** Action-type templates: the DAM object (objectType Action) made for it, once the job has run. */
  action_object_id: string | null;
  created_by: string | null;
  updated_by: string | null;
  created_at: number;
  updated_at: number;
}

export interface MetadataTemplateGroupsTable {
  org_id: string;
  template_id: string;
  group_id: string;
  position: number;
}

export interface MetadataTemplateAccessTable {
  org_id: string;
  template_id: string;
  security_template_id: string;
}

/** Definition changes awaiting POST /v1/metadata/apply. */
export interface MetadataChangesTable {
  id: string;
  org_id: string;
  kind: string;
  subject_type: string;
  subject_id: string;
  /** JSON details (before/after) */
  data: string;
  created_by: string | null;
  created_at: number;
  applied_at: number | null;
  action_id: string | null;
}

/** Actions (GET /v1/action/{id}): long-running work backed by a job. */
export interface ActionsTable {
  id: string;
  org_id: string;
  type: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  progress: number;
  total: number | null;
  processed: number;
  created_by: string | null;
  /** Besides the creator, holders of this privilege may see the action. */
  view_privilege: string | null;
  job_id: string | null;
  /** JSON */
  input: string;
  /** JSON */
  result: string | null;
  /** JSON array of {item, message} */
  errors: string;
  cancel_requested: number;
  created_at: number;
  updated_at: number;
  started_at: number | null;
  finished_at: number | null;
}

// --- cdn (migration 0011_cdn) ---
export interface CdnZonesTable {
  id: number;
  org_id: string;
  name: string;
  name_key: string;
  region: string;
  enabled: number;
  /** Every other zone field, as JSON (see features/cdn/edge-contract/zone-model.ts). */
  settings: string;
  version: number;
  created_at: number;
  updated_at: number;
}

export interface CdnZoneHostnamesTable {
  hostname: string;
  zone_id: number;
  org_id: string;
}

export interface CdnPublishedAssetsTable {
  zone_id: number;
  asset_id: string;
  org_id: string;
  published_at: number;
}

export interface CdnPurgesTable {
  id: string;
  zone_id: number;
  org_id: string;
  kind: 'url' | 'prefix' | 'tag' | 'all' | 'asset';
  value: string;
  created_at: number;
}

export interface CdnEdgesTable {
  id: string;
  control_url: string;
  region: string;
  started_at: number;
  last_seen_at: number;
}

export interface CdnStatsHourlyTable {
  zone_id: number;
  hour: number;
  requests: ColumnType<number, number | undefined, number>;
  bytes_served: ColumnType<number, number | undefined, number>;
  bytes_origin: ColumnType<number, number | undefined, number>;
  hits: ColumnType<number, number | undefined, number>;
  misses: ColumnType<number, number | undefined, number>;
  hit_bytes: ColumnType<number, number | undefined, number>;
  origin_fetches: ColumnType<number, number | undefined, number>;
  origin_ms: ColumnType<number, number | undefined, number>;
  status_2xx: ColumnType<number, number | undefined, number>;
  status_3xx: ColumnType<number, number | undefined, number>;
  status_4xx: ColumnType<number, number | undefined, number>;
  status_5xx: ColumnType<number, number | undefined, number>;
}

export interface CdnStatsGeoTable {
  zone_id: number;
  hour: number;
  country: string;
  requests: ColumnType<number, number | undefined, number>;
  bytes: ColumnType<number, number | undefined, number>;
}

// --- assets (migration 0008_assets) ---

/** One row per template, group and permission key (mirrors security_template_grants). */
export interface SecurityTemplatePermissionsTable {
  org_id: string;
  template_id: string;
  group_id: string;
  /** A permission key of core/authz/catalog.ts ('view', 'download', …) */
  permission: string;
}

/** One row per asset version: `id` is the objectId, `original_file_id` ties the versions together. */
export interface AssetsTable {
  id: string;
  org_id: string;
  file_id: string;
  original_file_id: string;
  version_number: number;
  is_current: number;
  object_type: string;
  filename: string;
  content_type: string | null;
  /** none: metadata-only; pending: an upload is open; available: content stored. */
  content_state: 'none' | 'pending' | 'available';
  size: number | null;
  sha256: string | null;
  md5: string | null;
  blob_key: string | null;
  federated: number;
  content_path: string | null;
  skip_transcode: number;
  metadata_template_id: string | null;
  /** JSON legacy MetadataDocument */
  metadata: string;
  /** JSON searchField → value */
  metadata_denormalized: string;
  /** JSON {tenovos_metadata, image_metadata} */
  technical_metadata: string;
  /** JSON rendition name → {key, width, height, contentType, size, etag} */
  renditions: string;
  renditions_state: 'none' | 'pending' | 'ready' | 'failed' | 'placeholder';
  width: number | null;
  height: number | null;
  /** JSON {thumbhash, dominantColor} of a visual asset (issue 25 item 7), set by the renditions job. */
  placeholder: ColumnType<string | null, string | null | undefined, string | null>;
  /** Recycle bin: when it was deleted (metadataDeletedEpoch). */
  deleted_at: number | null;
  /** Who sent it to the recycle bin (null when not deleted, or deleted before this was recorded). */
  deleted_by: string | null;
  created_event_sent: number;
  created_by: string;
  updated_by: string;
  created_at: number;
  updated_at: number;
}

/** An asset share (POST /v1/asset/share): its links name it, signed; revoked_at ends them all. */
export interface AssetSharesTable {
  id: string;
  org_id: string;
  created_by: string | null;
  /** JSON array of asset ids */
  asset_ids: string;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

/** A download link or an exposed URL (issue 23): its URL names the row (signed), so it can be revoked. */
export interface AssetContentLinksTable {
  id: string;
  org_id: string;
  asset_id: string;
  /** `original`, `original-embedded` or a rendition name */
  component: string;
  created_by: string | null;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

export interface MailOutboxTable {
  id: string;
  org_id: string | null;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string | null;
  /** The RFC 5322 Message-ID, fixed when queued, so a retried send is recognisably the same mail. */
  message_id: string;
  /** Who queued it (share mail is rate-limited per sender); null for system mail. */
  sender_id: ColumnType<string | null, string | null | undefined, string | null>;
  status: 'queued' | 'sent' | 'failed';
  attempts: number;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  sent_at: number | null;
}

export interface AssetSecurityTable {
  org_id: string;
  asset_id: string;
  template_id: string;
}

export interface AssetLinksTable {
  org_id: string;
  primary_id: string;
  secondary_id: string;
  link_type: string;
  created_by: string;
  created_at: number;
  updated_at: number;
}

/** A visual asset's 64-bit perceptual hash (dHash) as two 32-bit halves, for near-duplicate search. */
/** Named image renditions an administrator defines (issue 25 item 6). */
export interface DeliveryPresetsTable {
  id: string;
  org_id: string;
  name: string;
  /** Lower-cased name: unique per organization. */
  name_key: string;
  width: number | null;
  height: number | null;
  fit: string;
  format: string;
  quality: number;
  created_at: number;
  updated_at: number;
}

export interface AssetVisualHashesTable {
  asset_id: string;
  org_id: string;
  hash_hi: number;
  hash_lo: number;
  updated_at: number;
}

export interface AssetUploadsTable {
  id: string;
  org_id: string;
  asset_id: string;
  kind: 'single' | 'multipart';
  /** original: the asset's content; preview: a replacement preview rendition */
  target: 'original' | 'preview';
  staging_key: string;
  s3_upload_id: string | null;
  filename: string;
  expected_size: number | null;
  expected_sha256: string | null;
  content_type: string | null;
  part_size: number | null;
  part_count: number | null;
  status: 'open' | 'completed' | 'cancelled' | 'expired';
  /** JSON upload options ({overwriteEmbedded}) applied when the content arrives. */
  options: ColumnType<string | null, string | null | undefined, string | null>;
  /**
   * JSON {size, sha256, contentType} of the verified bytes, recorded before they move to their
   * content address (migration 0031), so a repeated completion finishes with them.
   */
  assembled: ColumnType<string | null, string | null | undefined, string | null>;
  created_by: string;
  created_at: number;
  expires_at: number;
}

// --- collections and search (migration 0009_search) ---

/** One row per asset version; `doc_no` is the FTS rowid and never changes for an asset. */
export interface SearchDocsTable {
  doc_no: ColumnType<number, number | undefined, never>;
  org_id: string;
  asset_id: string;
  file_id: string | null;
  original_file_id: string | null;
  filename: string;
  filename_key: string;
  file_type: string;
  metadata_template_id: string | null;
  deleted: number;
  current_version: number;
  created_epoch: number;
  updated_epoch: number;
  /** JSON asset record returned in results */
  record: string;
  indexed_at: number;
  /** The version of the asset row the document was built from (decision 0039; 0 before migration 0070). */
  asset_version: ColumnType<number, number | undefined, number>;
}

export interface SearchDocTemplatesTable {
  org_id: string;
  doc_no: number;
  template_id: string;
}

export interface SearchDocFacetsTable {
  org_id: string;
  doc_no: number;
  facet_key: string;
  value_key: string;
  facet: string;
  value: string;
}

export interface SearchDocSortsTable {
  org_id: string;
  doc_no: number;
  field: string;
  num: number | null;
  txt: string | null;
}

export interface SearchIndexStateTable {
  key: string;
  value: string;
}

export interface CollectionsTable {
  id: string;
  org_id: string;
  name: string;
  name_key: string;
  collection_type: 'private' | 'secured';
  owner_id: string;
  metadata_template_id: string | null;
  /** JSON metadata document */
  metadata: string;
  shared: 'Y' | 'N';
  /** JSON array of share ids */
  share_document: string;
  created_at: number;
  updated_at: number;
}

export interface CollectionMembersTable {
  org_id: string;
  collection_id: string;
  file_id: string;
  position: number;
  added_at: number;
}

export interface CollectionTemplatesTable {
  org_id: string;
  collection_id: string;
  template_id: string;
}

export interface SavedSearchesTable {
  id: string;
  org_id: string;
  owner_id: string;
  name: string;
  description: string;
  visibility: 'private' | 'shared';
  /** JSON query */
  query: string;
  created_at: number;
  updated_at: number;
}

export interface SavedSearchTemplatesTable {
  org_id: string;
  saved_search_id: string;
  template_id: string;
}
// --- storyboards (migration 0010_storyboards) ---

export interface StoryboardsTable {
  id: string;
  org_id: string;
  title: string;
  title_key: string;
  description: string;
  description_key: string;
  locale: string;
  cover_asset_id: string | null;
  status: 'draft' | 'published';
  secured: number;
  /** JSON array of blocks, in order */
  blocks: string;
  version: number;
  created_by: string;
  created_at: number;
  updated_at: number;
  published_at: number | null;
}

export interface StoryboardSecurityTemplatesTable {
  storyboard_id: string;
  template_id: string;
  org_id: string;
  position: number;
}

export interface StoryboardSharesTable {
  id: string;
  org_id: string;
  storyboard_id: string;
  subject_type: 'user' | 'group';
  subject_id: string;
  created_by: string;
  created_at: number;
}

export interface StoryboardLinksTable {
  id: string;
  org_id: string;
  storyboard_id: string;
  token_hash: string;
  token_hint: string;
  /** Id of the key the hash was made under (migration 0043; null: made before it, under the key the database's verifier named). */
  hash_key_id: string | null;
  password_hash: string | null;
  expires_at: number | null;
  revoked_at: number | null;
  created_by: string;
  created_at: number;
  last_opened_at: number | null;
  open_count: ColumnType<number, number | undefined, number>;
}

export interface AdaptiveTemplatesTable {
  id: string;
  org_id: string;
  asset_id: string;
  name: string;
  name_key: string;
  description: string;
  kind: 'svg' | 'html';
  source: string;
  /** JSON array of field definitions */
  fields: string;
  created_by: string;
  created_at: number;
  updated_at: number;
}

// --- hotpaths (migration 0012_hotpaths) ---

/** The identity revision counter (one row, id 1), bumped by triggers; see core/db/revision.ts. */
export interface TesseraRevisionTable {
  id: number;
  value: number;
}

// --- quotas (migration 0029_quotas, features/quotas) ---

/** An organization's own limits: null follows the server default (TESSERA_QUOTA_*), 0 is no limit. */
export interface OrgQuotasTable {
  org_id: string;
  storage_bytes: number | null;
  assets: number | null;
  uploads_per_user_per_hour: number | null;
  share_mail_per_hour: number | null;
  api_requests_per_key_per_minute: number | null;
  updated_by: string | null;
  updated_at: number;
}

/** What an organization holds, moved in the transaction of each asset change (one conditional UPDATE). */
export interface OrgUsageTable {
  org_id: string;
  storage_bytes: number;
  assets: number;
  updated_at: number;
}

/**
 * Changes to what an organization holds not yet folded into org_usage (negative for a purge):
 * appended by changes no quota limits, so concurrent uploads share no row (decision 0021).
 */
export interface OrgUsageDeltasTable {
  id: string;
  org_id: string;
  storage_bytes: number;
  assets: number;
  created_at: number;
}

/** Fixed-window rate counters: one row per quota, subject (user or API key) and window start (epoch ms). */
export interface QuotaWindowsTable {
  quota: string;
  subject: string;
  window_start: number;
  org_id: string;
  count: number;
}

/** Usage-right expiries already announced (rm.agreement.expired), one row per asset and expiry date (migration 0030). */
/** A pending invitation: the SHA-256 (hex) of its one-time set-password token; one per user. */
export interface UserInvitationsTable {
  user_id: string;
  org_id: string;
  token_hash: string;
  created_by: string;
  created_at: number;
  expires_at: number;
}

export interface OrgRightsSettingsTable {
  org_id: string;
  /** allow | block | watermark: downloads of an asset whose usage right has expired or not started */
  expired_downloads: string;
  updated_by: string | null;
  updated_at: number;
}

export interface AssetRightsExpiriesTable {
  asset_id: string;
  /** ISO calendar date (yyyy-MM-dd) */
  expiry_date: string;
  org_id: string;
  announced_at: number;
}

/** Which process delivers a rate-limited endpoint's messages (features/webhooks/delivery-engine/endpoint-owners.ts). */
export interface WebhookEndpointOwnersTable {
  endpoint_id: string;
  worker_id: string;
  until: number;
}
