import { parseArgs } from 'node:util';
import type { Deps } from './deps.ts';
import { isUniqueViolation } from './core/db/connect.ts';
import { newId } from './core/ids.ts';
import { createOrganization, findRole, hashPassword, passwordProblem } from './features/identity/index.ts';

export class UsageError extends Error {}

const USAGE = `Usage: tessera <command>
  serve                                   migrate, then serve the API and run background workers (default)
  migrate                                 bring the database schema up to date
  edge                                    run a CDN edge server (EDGE_PORT, default 8081; EDGE_WORKERS processes)
  org create --name N --admin-username U --admin-email E --admin-password P
  user create --org ORG --username U --email E --password P [--role ROLE] [--first-name F] [--last-name L]
              ORG is an organization id or name; ROLE a role id or name (default Viewer)`;

export function usage(): string {
  return USAGE;
}

function required(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

export async function orgCreate(deps: Deps, argv: string[]): Promise<string> {
  const { values } = parseArgs({ args: argv, options: { name: { type: 'string' }, 'admin-username': { type: 'string' }, 'admin-email': { type: 'string' }, 'admin-password': { type: 'string' } } });
  const password = required(values, 'admin-password');
  const problem = passwordProblem(password);
  if (problem) throw new UsageError(`--admin-password ${problem}`);
  const passwordHash = await hashPassword(password);
  try {
    const org = await deps.db.transaction().execute((trx) =>
      createOrganization(trx, deps.clock.now(), { name: required(values, 'name'), admin: { username: required(values, 'admin-username'), email: required(values, 'admin-email'), passwordHash } }),
    );
    return `Created organization ${org.orgId} with administrator ${org.adminUserId}`;
  } catch (error) {
    if (isUniqueViolation(error)) throw new UsageError('--admin-username is already taken');
    throw error;
  }
}

export async function userCreate(deps: Deps, argv: string[]): Promise<string> {
  const { values } = parseArgs({
    args: argv,
    options: { org: { type: 'string' }, username: { type: 'string' }, email: { type: 'string' }, password: { type: 'string' }, role: { type: 'string' }, 'first-name': { type: 'string' }, 'last-name': { type: 'string' } },
  });
  const orgRef = required(values, 'org');
  const org = await deps.db.selectFrom('organizations').select(['id']).where((eb) => eb.or([eb('id', '=', orgRef), eb('name', '=', orgRef)])).execute();
  if (org.length !== 1) throw new UsageError(org.length === 0 ? `--org: no organization "${orgRef}"` : `--org: "${orgRef}" is ambiguous; use the id`);
  const orgId = org[0]!.id;
  const roleRef = typeof values.role === 'string' ? values.role : 'Viewer';
  const role = (await findRole(deps.db, orgId, roleRef)) ?? (await deps.db.selectFrom('roles').selectAll().where('org_id', '=', orgId).where('name_key', '=', roleRef.toLowerCase()).executeTakeFirst());
  if (!role) throw new UsageError(`--role: no role "${roleRef}" in that organization`);
  const username = required(values, 'username');
  const password = required(values, 'password');
  const problem = passwordProblem(password, username);
  if (problem) throw new UsageError(`--password ${problem}`);
  const now = deps.clock.now();
  const id = newId(now);
  const everyone = await deps.db.selectFrom('groups').select('id').where('org_id', '=', orgId).where('name_key', '=', 'everyone').executeTakeFirst();
  try {
    await deps.db.transaction().execute(async (trx) => {
      await trx.insertInto('users').values({
        id, org_id: orgId, username, username_key: username.toLowerCase(), email: required(values, 'email'),
        first_name: (values['first-name'] as string | undefined) ?? username, last_name: (values['last-name'] as string | undefined) ?? '', friendly_name: username,
        status: 'enabled', account_type: 'local', role_id: role.id, password_hash: await hashPassword(password),
        phone: null, company: null, country: null, contact: null, created_at: now, updated_at: now,
      }).execute();
      if (everyone) await trx.insertInto('user_groups').values({ org_id: orgId, user_id: id, group_id: everyone.id }).execute();
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new UsageError('--username is already taken');
    throw error;
  }
  return `Created user ${id} (${username}) with role ${role.name}`;
}
