import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Type, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { ConfigError, parseStorageSetting, type Config } from './config.ts';
import { createDeps, type Deps } from './deps.ts';
import { createBackup, migrateToPostgres, restoreBackup } from './core/backup/index.ts';
import { syncSearchIndex } from './features/search/index.ts';
import { audit } from './core/audit.ts';
import { isUniqueViolation } from './core/db/connect.ts';
import { newId } from './core/ids.ts';
import { auditedOrganizations, resealChainKey, verifyOrganization } from './features/audit/index.ts';
import { recordCurrentSecretKey, revokeUserSessions, rotateAuthSecrets, verifiedKeyId } from './features/auth/index.ts';
import { rotateApiKeySecrets } from './features/api-keys/index.ts';
import { rotateSsoSecrets } from './features/sso/index.ts';
import { rotateStoryboardSecrets } from './features/storyboards/index.ts';
import { rotateWebhookSecrets } from './features/webhooks/index.ts';
import type { RotationReport } from './core/secret-rotation.ts';
import {
  createLocalUser,
  createOrganization,
  findRole,
  findRoleByName,
  findUserByUsername,
  hashPassword,
  organizationNameTaken,
  organizationsByIdOrName,
  passwordProblem,
  setPasswordHash,
  UserCreateSchema,
} from './features/identity/index.ts';
import { seedOrganizationMetadata } from './features/metadata/index.ts';

export class UsageError extends Error {}

const USAGE = `Usage: tessera <command>
  serve [--no-workers]                    migrate, then serve the API and (unless --no-workers) run the
                                          background workers in the same process
  worker [--concurrency N]                migrate, then run the background workers only (no HTTP listener);
                                          N jobs at once (default TESSERA_JOB_CONCURRENCY, 4). Any number of
                                          serve, worker and edge processes may share one database (docs/deploy.md)
  migrate                                 bring the database schema up to date
  edge                                    run a CDN edge server (EDGE_PORT, default 8081; EDGE_WORKERS processes)
  org create --name N --admin-username U --admin-email E --admin-password P
  user create --org ORG --username U --email E --password P [--role ROLE] [--first-name F] [--last-name L]
              ORG is an organization id or name; ROLE a role id or name (default Viewer)
  user reset-password --username U [--password P]
              sets a new password (generated and printed when --password is not given) and ends
              the user's sessions; the way back in when the first administrator's password is lost
  audit verify [--org ORG]                seals, then recomputes each organization's audit hash chain;
              prints the first broken link and exits 1 when one is broken (docs/audit.md)
  backup --out DIR                        a consistent copy of a running embedded installation (SQLite
              database, every blob with its SHA-256, the secret key, manifest.json) into a new or
              empty folder; with PostgreSQL or S3 see docs/operations.md › "Backup and restore"
  restore --from DIR [--force]            verifies a backup (every blob's SHA-256), then restores it into
              an empty TESSERA_DATA_DIR (--force: replace the installation there; stop it first)
  migrate-to-postgres --to postgres://… [--storage s3://bucket/prefix?endpoint=…&region=…|file:/dir]
              moves an embedded installation (stop it first) into a new, empty PostgreSQL database
              and, with --storage, its blobs into that store (credentials as for TESSERA_STORAGE);
              verifies every table (rows and checksum) and every blob's SHA-256 read back, prints
              the report and exits 1 on any mismatch
  rotate-secrets                          re-encrypts every stored secret under the current TESSERA_SECRET_KEY
              (in batches, safe while serving, idempotent), then records that key as the database's;
              counts per table, and how many hashed credentials (API keys, refresh tokens, OAuth
              client secrets, share links) are still under a previous key: they move to the current
              key when next used. The rotation order: docs/operations.md › "Rotating the secret key"
  help                                    this text (also: no command at all)

Configuration comes from environment variables (README.md, "Configuration"): TESSERA_DATA_DIR,
DATABASE_URL, PORT, HOST, … The same settings must be set for the CLI as for the server.`;

export function usage(): string {
  return USAGE;
}

function required(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

/** The API's own rules (POST /v1/user's schema), so the CLI accepts exactly what the API accepts. */
const API = UserCreateSchema.properties;
const OrgName = Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f\\u007f]+$' });

function check(flag: string, schema: TSchema, value: string): void {
  const compiled = Compile(schema);
  if (compiled.Check(value)) return;
  const first = [...compiled.Errors(value)][0];
  throw new UsageError(`--${flag} ${first?.message ?? 'is invalid'} (got "${value}")`);
}

function checkPassword(flag: string, password: string, username: string): void {
  check(flag, API.password, password);
  const problem = passwordProblem(password, username);
  if (problem) throw new UsageError(`--${flag} ${problem}`);
}

export async function orgCreate(deps: Deps, argv: string[]): Promise<string> {
  const { values } = parseArgs({
    args: argv,
    options: {
      name: { type: 'string' },
      'admin-username': { type: 'string' },
      'admin-email': { type: 'string' },
      'admin-password': { type: 'string' },
    },
  });
  const name = required(values, 'name').trim();
  const username = required(values, 'admin-username');
  const email = required(values, 'admin-email');
  const password = required(values, 'admin-password');
  check('name', OrgName, name);
  check('admin-username', API.username, username);
  check('admin-email', API.email, email);
  checkPassword('admin-password', password, username);
  const passwordHash = await hashPassword(password);
  try {
    const org = await deps.db.transaction().execute(async (trx) => {
      if (await organizationNameTaken(trx, name))
        throw new UsageError(`--name: an organization named "${name}" already exists`);
      return createOrganization(
        trx,
        deps.clock.now(),
        { name, admin: { username, email, passwordHash } },
        seedOrganizationMetadata,
      );
    });
    return `Created organization ${org.orgId} with administrator ${org.adminUserId}`;
  } catch (error) {
    if (isUniqueViolation(error)) {
      const message = String((error as Error).message);
      throw new UsageError(
        /organizations|lower\(name\)|org.*name/i.test(message)
          ? `--name: an organization named "${name}" already exists`
          : '--admin-username is already taken',
      );
    }
    throw error;
  }
}

export async function userCreate(deps: Deps, argv: string[]): Promise<string> {
  const { values } = parseArgs({
    args: argv,
    options: {
      org: { type: 'string' },
      username: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      role: { type: 'string' },
      'first-name': { type: 'string' },
      'last-name': { type: 'string' },
    },
  });
  const orgRef = required(values, 'org');
  const username = required(values, 'username');
  const email = required(values, 'email');
  const password = required(values, 'password');
  const firstName = (values['first-name'] as string | undefined) ?? username;
  const lastName = (values['last-name'] as string | undefined) ?? '-';
  check('username', API.username, username);
  check('email', API.email, email);
  check('first-name', API.firstName, firstName);
  check('last-name', API.lastName, lastName);
  checkPassword('password', password, username);
  const org = await organizationsByIdOrName(deps.db, orgRef);
  if (org.length !== 1)
    throw new UsageError(
      org.length === 0 ? `--org: no organization "${orgRef}"` : `--org: "${orgRef}" is ambiguous; use the id`,
    );
  const orgId = org[0]!;
  const roleRef = typeof values.role === 'string' ? values.role : 'Viewer';
  const role = (await findRole(deps.db, orgId, roleRef)) ?? (await findRoleByName(deps.db, orgId, roleRef));
  if (!role) throw new UsageError(`--role: no role "${roleRef}" in that organization`);
  const now = deps.clock.now();
  const id = newId(now);
  const passwordHash = await hashPassword(password);
  try {
    await deps.db.transaction().execute(async (trx) => {
      await createLocalUser(trx, {
        id,
        orgId,
        username,
        email,
        firstName,
        lastName,
        roleId: role.id,
        passwordHash,
        now,
      });
      await audit(trx, {
        orgId,
        at: now,
        actorId: null,
        action: 'user.created',
        targetType: 'user',
        targetId: id,
        operation: 'cli',
        data: { via: 'cli' },
      });
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new UsageError('--username is already taken');
    throw error;
  }
  return `Created user ${id} (${username}) with role ${role.name}`;
}

/** Sets a user's password from the server's own shell and ends every session the user had. */
export async function userResetPassword(deps: Deps, argv: string[]): Promise<string> {
  const { values } = parseArgs({ args: argv, options: { username: { type: 'string' }, password: { type: 'string' } } });
  const username = required(values, 'username');
  const given = typeof values.password === 'string' ? values.password : undefined;
  const password = given ?? randomBytes(18).toString('base64url');
  if (given !== undefined) checkPassword('password', given, username);
  const user = await findUserByUsername(deps.db, username);
  if (!user || user.account_type !== 'local')
    throw new UsageError(`--username: no user "${username}" who signs in with a password`);
  const passwordHash = await hashPassword(password);
  const now = deps.clock.now();
  const revoked = await deps.db.transaction().execute(async (trx) => {
    await setPasswordHash(trx, user.id, passwordHash, now);
    const ended = await revokeUserSessions(trx, user.org_id, user.id, now, 'password_reset');
    await audit(trx, {
      orgId: user.org_id,
      at: now,
      actorId: null,
      action: 'user.password_reset',
      targetType: 'user',
      targetId: user.id,
      operation: 'cli',
      data: { via: 'cli', sessionsEnded: ended },
    });
    return ended;
  });
  const shown = given === undefined ? ` New password: ${password}` : '';
  return `Password of ${user.username} reset; ${revoked} session(s) ended.${shown}`;
}

/**
 * `tessera audit verify [--org ORG]`: every organization's chain (or one), sealed first. `ok` is
 * false when a link is broken; the text names the organization, the position and the reason.
 */
export async function auditVerify(deps: Deps, argv: string[]): Promise<{ ok: boolean; text: string }> {
  const { values } = parseArgs({ args: argv, options: { org: { type: 'string' } } });
  let orgs: string[];
  if (typeof values.org === 'string') {
    const ref = values.org;
    const found = await organizationsByIdOrName(deps.db, ref);
    if (found.length !== 1)
      throw new UsageError(
        found.length === 0 ? `--org: no organization "${ref}"` : `--org: "${ref}" is ambiguous; use the id`,
      );
    orgs = [found[0]!];
  } else {
    orgs = await auditedOrganizations(deps.db);
  }
  const lines: string[] = [];
  let ok = true;
  for (const orgId of orgs) {
    const r = await verifyOrganization(deps, orgId);
    if (r.ok) {
      lines.push(
        `${orgId}: ok, ${r.checked} row(s) verified (seq ${r.firstSeq}..${r.lastSeq}${r.anchorSeq > 0 ? `, anchored after ${r.anchorSeq}` : ''})`,
      );
    } else {
      ok = false;
      const b = r.broken!;
      lines.push(
        `${orgId}: BROKEN at seq ${b.seq}${b.id ? ` (row ${b.id})` : ''}: ${b.reason}; ${r.checked} row(s) before it verified`,
      );
    }
  }
  if (orgs.length === 0) lines.push('No audit trail yet');
  return { ok, text: lines.join('\n') };
}

/**
 * `tessera rotate-secrets` (decision 0013): re-encrypts every sealed value under the current key, then
 * moves the database's key verifier to it (only when every value opened). Prints counts, never a secret.
 */
export async function rotateSecretsCommand(deps: Deps, argv: string[]): Promise<{ ok: boolean; text: string }> {
  parseArgs({ args: argv, options: {} });
  const legacy = await verifiedKeyId(deps);
  // openDatabase refused a process none of whose keys the verifier names; this is a guard only.
  if (legacy === undefined) return { ok: false, text: "None of this process's keys is the database's: nothing done" };
  const now = deps.clock.now();
  const reports: RotationReport[] = [];
  for (const part of [
    rotateAuthSecrets,
    rotateWebhookSecrets,
    rotateSsoSecrets,
    rotateApiKeySecrets,
    rotateStoryboardSecrets,
  ])
    reports.push(await part(deps, legacy, now));
  const chain = await resealChainKey(deps.db, deps.keys);
  const sealed = [
    ...reports.flatMap((r) => r.sealed),
    { table: 'server_state', column: 'audit chain key', ...chain, unreadable: 0 },
  ];
  const hashes = reports.flatMap((r) => r.hashes);
  const unreadable = sealed.reduce((n, s) => n + s.unreadable, 0);
  const lines = [`Current key id ${deps.keys.keyId}; held: ${deps.keys.keyIds.join(', ')}`, 'Encrypted secrets:'];
  for (const s of sealed)
    lines.push(
      `  ${`${s.table}.${s.column}`.padEnd(42)} ${String(s.resealed).padStart(6)} re-encrypted, ${s.current} already current${s.unreadable ? `, ${s.unreadable} UNREADABLE (no held key opens them)` : ''}`,
    );
  lines.push(
    'Hashed credentials (re-keyed when next used; the ones still under a previous key stop working when it is dropped):',
  );
  for (const h of hashes)
    lines.push(
      `  ${`${h.table}.${h.column}`.padEnd(42)} ${String(h.previousKey).padStart(6)} under a previous key, ${h.current} current`,
    );
  if (unreadable > 0) {
    lines.push(
      `${unreadable} encrypted value(s) open with no held key: the database's key stays as it was. Add the key they were sealed with to TESSERA_SECRET_KEY_PREVIOUS and run again.`,
    );
    return { ok: false, text: lines.join('\n') };
  }
  await recordCurrentSecretKey(deps);
  const remaining = hashes.reduce((n, h) => n + h.previousKey, 0);
  lines.push(
    `Every encrypted secret is under the current key, and the database now names it: a process must hold it (as TESSERA_SECRET_KEY or in TESSERA_SECRET_KEY_PREVIOUS) to start.`,
    remaining > 0
      ? `${remaining} hashed credential(s) are still under a previous key: keep it in TESSERA_SECRET_KEY_PREVIOUS until they are used (run this again to count) or you accept that they stop working.`
      : 'No hashed credential is under a previous key: TESSERA_SECRET_KEY_PREVIOUS can be dropped.',
  );
  return { ok: true, text: lines.join('\n') };
}

/** `tessera backup --out DIR` (core/backup): runs beside a serving installation. */
export async function backupCommand(config: Config, argv: string[]): Promise<{ ok: boolean; text: string }> {
  const { values } = parseArgs({ args: argv, options: { out: { type: 'string' } } });
  const out = required(values, 'out');
  const { ok, text } = await createBackup(config, resolve(out));
  return { ok, text };
}

/** `tessera restore --from DIR [--force]` (core/backup). */
export async function restoreCommand(config: Config, argv: string[]): Promise<string> {
  const { values } = parseArgs({ args: argv, options: { from: { type: 'string' }, force: { type: 'boolean' } } });
  const from = required(values, 'from');
  return (await restoreBackup(config, resolve(from), { force: values.force === true })).text;
}

/**
 * `tessera migrate-to-postgres --to URL [--storage URL]` (core/backup): the search index is rebuilt
 * on the target by the search feature's own indexer, run to completion.
 */
export async function migrateToPostgresCommand(
  config: Config,
  argv: string[],
  log: (line: string) => void,
): Promise<{ ok: boolean; text: string }> {
  const { values } = parseArgs({ args: argv, options: { to: { type: 'string' }, storage: { type: 'string' } } });
  const to = required(values, 'to');
  if (!/^postgres(ql)?:\/\//.test(to)) throw new UsageError(`--to must be a postgres:// URL (got "${to}")`);
  try {
    new URL(to);
  } catch {
    throw new UsageError('--to is not a valid postgres:// URL');
  }
  let storage: Config['storage'] | undefined;
  if (typeof values.storage === 'string') {
    try {
      storage = parseStorageSetting(values.storage, config.dataDir);
    } catch (error) {
      if (error instanceof ConfigError) throw new UsageError(error.message.replace('TESSERA_STORAGE', '--storage'));
      throw error;
    }
  }
  const target: Config = {
    ...config,
    database: { kind: 'postgres', url: to },
    storage: storage ?? config.storage,
    workers: false,
  };
  return migrateToPostgres(config, {
    targetUrl: to,
    targetStorage: storage,
    log,
    rebuildSearchIndex: async () => {
      const deps = createDeps(target, { poolSize: 2 });
      try {
        while ((await syncSearchIndex(deps)) > 0) {}
      } finally {
        await deps.close();
      }
    },
  });
}
