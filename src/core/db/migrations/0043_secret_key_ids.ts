import type { Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Issue 28, item 2: secret key rotation (decision 0013). Keyed hashes stored for long-lived
// credentials record the id of the key they were made under (`keys.keyId`), so `tessera
// rotate-secrets` can say how many are still under a previous key (they move to the current key
// when next used). Null: made before this migration, under the key the database's verifier names.

const TABLES = ['api_keys', 'auth_refresh_tokens', 'oauth_clients', 'storyboard_links'] as const;

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) await db.schema.alterTable(table).addColumn('hash_key_id', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) await db.schema.alterTable(table).dropColumn('hash_key_id').execute();
}
