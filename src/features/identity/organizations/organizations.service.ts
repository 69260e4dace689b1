import { randomInt } from 'node:crypto';
import { writeTemplatePermissions } from '../../../core/authz/authorize.ts';
import { ALL_PERMISSIONS, ALL_PRIVILEGES, PERMISSIONS, type Privilege } from '../../../core/authz/catalog.ts';
import type { DbOrTrx } from '../../../core/db/connect.ts';
import { toJson } from '../../../core/db/json.ts';
import { newId } from '../../../core/ids.ts';

export interface NewOrganization {
  name: string;
  admin: { username: string; email: string; passwordHash: string | null; firstName?: string; lastName?: string };
}

export interface CreatedOrganization {
  orgId: string;
  customerId: string;
  adminUserId: string;
  roles: { administrator: string; editor: string; viewer: string };
  groups: { administrators: string; everyone: string };
  defaultTemplateId: string;
}

/**
 * What other features set up in a new organization, in its transaction (metadata: the system group
 * and a Default metadata template). Callers pass metadata's seedOrganizationMetadata: identity does
 * not import metadata, so that metadata can read identity's tables through identity's index.ts.
 */
export type OrganizationSeed = (db: DbOrTrx, now: number, orgId: string) => Promise<unknown>;

const EDITOR: Privilege[] = [
  'upload',
  'collection',
  'download',
  'delete',
  'view_storyboards',
  'storyboard_management',
  'metadata_template_management',
];
const VIEWER: Privilege[] = ['download', 'view_storyboards'];

/**
 * A new tenant with working defaults: Administrator / Editor / Viewer roles, Administrators and
 * Everyone groups, a Default security template, and its first administrator (all privileges).
 * Call inside a transaction.
 */
export async function createOrganization(
  db: DbOrTrx,
  now: number,
  input: NewOrganization,
  seed: OrganizationSeed,
): Promise<CreatedOrganization> {
  const orgId = newId(now);
  // 13 digits, like the reference's epoch-millisecond-looking customer ids.
  const customerId = `1${randomInt(1e5, 1e6)}${randomInt(1e5, 1e6)}`;
  await db
    .insertInto('organizations')
    .values({ id: orgId, name: input.name, customer_id: customerId, created_at: now })
    .execute();

  const role = (name: string, description: string, privileges: Privilege[]) => ({
    id: newId(now),
    org_id: orgId,
    name,
    name_key: name.toLowerCase(),
    description,
    privileges: toJson(privileges),
    created_at: now,
    updated_at: now,
  });
  const roles = [
    role('Administrator', 'Every privilege', ALL_PRIVILEGES),
    role('Editor', 'Uploads and curates content', EDITOR),
    role('Viewer', 'Finds and downloads content', VIEWER),
  ];
  await db.insertInto('roles').values(roles).execute();

  const group = (name: string, description: string) => ({
    id: newId(now),
    org_id: orgId,
    name,
    name_key: name.toLowerCase(),
    description,
    created_at: now,
    updated_at: now,
  });
  const groups = [
    group('Administrators', 'Organization administrators'),
    group('Everyone', 'Every user of the organization'),
  ];
  await db.insertInto('groups').values(groups).execute();

  const templateId = newId(now);
  await db
    .insertInto('security_templates')
    .values({
      id: templateId,
      org_id: orgId,
      name: 'Default',
      name_key: 'default',
      description: 'Administrators may do anything; everyone may view and download',
      created_at: now,
      updated_at: now,
    })
    .execute();
  await db
    .insertInto('security_template_grants')
    .values([
      {
        org_id: orgId,
        template_id: templateId,
        group_id: groups[0]!.id,
        permissions: toJson(ALL_PERMISSIONS.map((p) => PERMISSIONS[p].id)),
      },
      {
        org_id: orgId,
        template_id: templateId,
        group_id: groups[1]!.id,
        permissions: toJson([PERMISSIONS.view.id, PERMISSIONS.download.id]),
      },
    ])
    .execute();
  await writeTemplatePermissions(
    db,
    orgId,
    templateId,
    new Map([
      [groups[0]!.id, ALL_PERMISSIONS.map((p) => PERMISSIONS[p].id)],
      [groups[1]!.id, [PERMISSIONS.view.id, PERMISSIONS.download.id]],
    ]),
  );

  const adminUserId = newId(now);
  await db
    .insertInto('users')
    .values({
      id: adminUserId,
      org_id: orgId,
      username: input.admin.username,
      username_key: input.admin.username.toLowerCase(),
      email: input.admin.email,
      first_name: input.admin.firstName ?? 'Admin',
      last_name: input.admin.lastName ?? input.name,
      friendly_name: input.admin.username,
      status: 'enabled',
      account_type: 'local',
      role_id: roles[0]!.id,
      password_hash: input.admin.passwordHash,
      phone: null,
      company: null,
      country: null,
      contact: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  await db
    .insertInto('user_groups')
    .values(groups.map((g) => ({ org_id: orgId, user_id: adminUserId, group_id: g.id })))
    .execute();

  // A usable start: the system metadata group and a Default metadata template.
  await seed(db, now, orgId);

  return {
    orgId,
    customerId,
    adminUserId,
    roles: { administrator: roles[0]!.id, editor: roles[1]!.id, viewer: roles[2]!.id },
    groups: { administrators: groups[0]!.id, everyone: groups[1]!.id },
    defaultTemplateId: templateId,
  };
}
