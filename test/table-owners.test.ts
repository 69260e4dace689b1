import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { it } from 'node:test';
import { TABLE_OWNERS } from '../src/core/db/table-owners.ts';
import { callsTo, parseSource, sourceFiles, stringValue, ts } from './helpers/source.ts';

/**
 * One owner per table (docs/decisions/0009-data-access-and-table-owners.md): only the owning
 * feature's files name a table in a Kysely call (selectFrom, insertInto, updateTable, deleteFrom,
 * joins); other features call the owner's index.ts. Migrations may touch any table.
 */

/** Permanent exceptions: [file, table, why]. */
const ALLOWED: [string, string, string][] = [
  [
    'src/core/authz/authorize.ts',
    'security_template_permissions',
    'core/authz evaluates permissions for every feature and cannot import identity (core never imports features); the permission rows are its input',
  ],
  [
    'src/core/authz/ceiling.ts',
    'organizations',
    "the privilege ceiling locks the organization and counts holders in the caller's transaction; core cannot import identity",
  ],
  [
    'src/core/authz/ceiling.ts',
    'roles',
    "the privilege ceiling locks the organization and counts holders in the caller's transaction; core cannot import identity",
  ],
  [
    'src/core/authz/ceiling.ts',
    'security_template_grants',
    "the privilege ceiling locks the organization and counts holders in the caller's transaction; core cannot import identity",
  ],
  [
    'src/core/authz/ceiling.ts',
    'users',
    "the privilege ceiling locks the organization and counts holders in the caller's transaction; core cannot import identity",
  ],
  [
    'src/core/events/publish.ts',
    'users',
    "the outbox names an event's actor (first and last name), read in the change's own transaction; core cannot import identity",
  ],
  [
    'src/edge/edge.ts',
    'cdn_edges',
    "the edge program (a second composition root) reads and reports through the CDN feature's tables: they are its control contract with the API (features/cdn/edge-contract/contract.ts)",
  ],
  [
    'src/edge/edge.ts',
    'cdn_purges',
    "the edge program (a second composition root) reads and reports through the CDN feature's tables: they are its control contract with the API (features/cdn/edge-contract/contract.ts)",
  ],
  [
    'src/edge/edge.ts',
    'cdn_stats_hourly',
    "the edge program (a second composition root) reads and reports through the CDN feature's tables: they are its control contract with the API (features/cdn/edge-contract/contract.ts)",
  ],
  [
    'src/edge/edge.ts',
    'cdn_zones',
    "the edge program (a second composition root) reads and reports through the CDN feature's tables: they are its control contract with the API (features/cdn/edge-contract/contract.ts)",
  ],
  [
    'src/edge/stats.ts',
    'cdn_stats_geo',
    "the edge program (a second composition root) reads and reports through the CDN feature's tables: they are its control contract with the API (features/cdn/edge-contract/contract.ts)",
  ],
  [
    'src/edge/stats.ts',
    'cdn_stats_hourly',
    "the edge program (a second composition root) reads and reports through the CDN feature's tables: they are its control contract with the API (features/cdn/edge-contract/contract.ts)",
  ],
  [
    'src/features/assets/assets.repo.ts',
    'security_template_permissions',
    "the asset read path loads an asset's templates, their names and their grants in one prepared query (securityOf, on every asset request); the grants are core/authz's rows",
  ],
  [
    'src/features/assets/assets.repo.ts',
    'security_templates',
    "the asset read path loads an asset's templates, their names and their grants in one prepared query (securityOf, on every asset request); the grants are core/authz's rows",
  ],
  [
    'src/features/auth/sessions/sessions.repo.ts',
    'roles',
    "the credential check reads the session, its user and the user's role in one prepared round trip on every principal-cache miss (identity supplies the group list: groupIdsJson)",
  ],
  [
    'src/features/auth/sessions/sessions.repo.ts',
    'users',
    "the credential check reads the session, its user and the user's role in one prepared round trip on every principal-cache miss (identity supplies the group list: groupIdsJson)",
  ],
  [
    'src/features/audit/chain/chain.ts',
    'server_state',
    "its own key (audit.chain_key, the chain's sealed key) in the shared key/value table",
  ],
  [
    'src/features/auth/keys/secret-check.ts',
    'server_state',
    'its own key (auth.secret_verifier) in the shared key/value table',
  ],
  [
    'src/features/auth/keys/signing-keys.ts',
    'server_state',
    'its own key (auth.signing_kid) in the shared key/value table',
  ],
  [
    'src/features/identity/organizations/bootstrap.ts',
    'server_state',
    'its own key (the first-run marker) in the shared key/value table',
  ],
  [
    'src/features/identity/identity.repo.ts',
    'auth_sessions',
    'disabling a user or changing a password ends their sessions in the same transaction (endUserSessions, endImpersonationsBy); auth imports identity, so identity cannot call auth',
  ],
  [
    'src/features/metadata/definitions/template-cache.ts',
    'server_state',
    'its own keys (metadata.version.<org>) in the shared key/value table',
  ],
  [
    'src/features/webhooks/delivery-engine/message-store.ts',
    'events',
    "webhooks is the outbox's consumer: it fans new events out to endpoints in one statement",
  ],
];

/**
 * Reads and writes that break the rule today and are to move behind the owner's index.ts. Empty:
 * keep it so. A new cross-feature query fails this test, and so does an entry that is fixed but
 * still listed.
 */
const PENDING: [string, string][] = [];

/** features/<f>/… → f; core/<m>(.ts|/…) → core/<m>; edge/… → edge; anything else: its path. */
function ownerOf(path: string): string {
  const parts = path.split('/');
  if (parts[1] === 'features') return parts[2]!;
  if (parts[1] === 'core') return `core/${parts[2]!.replace(/\.ts$/, '')}`;
  if (parts[1] === 'edge') return 'edge';
  return path;
}

/** Kysely calls that name a table as their first argument ('table', 'table as alias', in any quotes). */
const QUERY = new Set([
  'selectFrom',
  'insertInto',
  'updateTable',
  'deleteFrom',
  'innerJoin',
  'leftJoin',
  'rightJoin',
  'fullJoin',
]);

/** The tables a file names in Kysely calls, read from its syntax tree (comments and wrapping do not matter). */
function tablesQueried(path: string): string[] {
  return callsTo(parseSource(path), QUERY).flatMap((call) => {
    // Only method calls (db.selectFrom(…), qb.innerJoin(…)), as Kysely is used.
    if (!ts.isPropertyAccessExpression(call.expression)) return [];
    const table = /^[a-z_]+/.exec(stringValue(call.arguments[0]) ?? '');
    return table ? [table[0]] : [];
  });
}

function crossings(): { unknown: string[]; found: Set<string> } {
  const owners: Record<string, string> = TABLE_OWNERS;
  const unknown: string[] = [];
  const found = new Set<string>();
  for (const path of sourceFiles('src')) {
    if (path.includes('/migrations/')) continue;
    for (const table of tablesQueried(path)) {
      const owner = owners[table];
      if (owner === undefined) unknown.push(`${path}: ${table}`);
      else if (owner !== ownerOf(path)) found.add(`${path} ${table}`);
    }
  }
  return { unknown, found };
}

it('every table in the schema has an owner, and every owner exists', () => {
  for (const [table, owner] of Object.entries(TABLE_OWNERS)) {
    const dir = owner.startsWith('core/') ? `src/${owner}` : `src/features/${owner}`;
    assert.ok(
      statSync(dir, { throwIfNoEntry: false }) ?? statSync(`${dir}.ts`, { throwIfNoEntry: false }),
      `${table}: owner ${owner} has no folder or module`,
    );
  }
});

it("no file outside a table's owner queries it, except the listed ones", () => {
  const { unknown, found } = crossings();
  assert.deepEqual(unknown, [], 'tables named in queries but missing from src/core/db/table-owners.ts');
  const listed = new Set([...ALLOWED.map(([f, t]) => `${f} ${t}`), ...PENDING.map(([f, t]) => `${f} ${t}`)]);
  const undeclared = [...found].filter((c) => !listed.has(c));
  assert.deepEqual(
    undeclared,
    [],
    'query the owning feature through its index.ts instead (or, for a real exception, list it in ALLOWED with the reason)',
  );
  const stale = [...listed].filter((c) => !found.has(c));
  assert.deepEqual(stale, [], 'fixed: remove these from the exception lists');
});
