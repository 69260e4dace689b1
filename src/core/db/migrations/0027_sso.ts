import type { Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Issue 29, part 2: single sign-on through OpenID Connect identity providers (features/sso).
// - sso_providers: an organization's providers; the client secret is sealed with the keyring
//   (never stored in clear), the discovered endpoints are kept so a sign-in makes no discovery call.
// - sso_logins: one row per sign-in started (the state is stored hashed; nonce and PKCE verifier
//   sealed); used once, then kept until it expires for replay detection.
// - sso_identities: which Tessera user a provider's subject is, and the provider's last id token
//   (sealed) for RP-initiated logout.
// - oauth_codes.sso_provider_id / auth_sessions.sso_provider_id: a session opened through a
//   provider remembers it, so signing out can also end the provider's session.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sso_providers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('client_secret', 'text')
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('groups_claim', 'text', (c) => c.notNull())
    .addColumn('group_mappings', 'text', (c) => c.notNull())
    .addColumn('default_role_id', 'text', (c) => c.notNull())
    .addColumn('jit', 'integer', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('authorization_endpoint', 'text', (c) => c.notNull())
    .addColumn('token_endpoint', 'text', (c) => c.notNull())
    .addColumn('jwks_uri', 'text', (c) => c.notNull())
    .addColumn('end_session_endpoint', 'text')
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sso_providers_org_idx').on('sso_providers').columns(['org_id', 'created_at']).execute();

  await db.schema
    .createTable('sso_logins')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('provider_id', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('code_verifier', 'text', (c) => c.notNull())
    .addColumn('request', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('sso_logins_expiry_idx').on('sso_logins').column('expires_at').execute();

  await db.schema
    .createTable('sso_identities')
    .addColumn('provider_id', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('id_token', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_login_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('sso_identities_pk', ['provider_id', 'subject'])
    .execute();
  await db.schema.createIndex('sso_identities_user_idx').on('sso_identities').columns(['user_id']).execute();

  await db.schema.alterTable('oauth_codes').addColumn('sso_provider_id', 'text').execute();
  await db.schema.alterTable('auth_sessions').addColumn('sso_provider_id', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('auth_sessions').dropColumn('sso_provider_id').execute();
  await db.schema.alterTable('oauth_codes').dropColumn('sso_provider_id').execute();
  await db.schema.dropTable('sso_identities').execute();
  await db.schema.dropTable('sso_logins').execute();
  await db.schema.dropTable('sso_providers').execute();
}
