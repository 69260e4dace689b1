/**
 * Role privileges (feature-level rights, one role per user) and security-template permissions
 * (rights on a thing, granted to groups). Names follow the reference API; keys are stable.
 */
export const PRIVILEGES = {
  upload: { name: 'Upload', description: 'Upload assets and new versions' },
  collection: { name: 'Collection', description: 'Create and manage collections' },
  delete: { name: 'Delete', description: 'Delete assets' },
  purge: { name: 'Purge', description: 'Purge assets from the recycle bin' },
  replace_mezzanine: { name: 'Replace Mezzanine', description: 'Replace preview renditions' },
  download: { name: 'Download', description: 'Download originals and renditions' },
  user_management: { name: 'User Management', description: 'Create and manage users and groups' },
  security_template_management: {
    name: 'Security Template Management',
    description: 'Create and manage security templates',
  },
  metadata_template_management: { name: 'Metadata Template Management', description: 'Manage metadata templates' },
  metadata_management: {
    name: 'Metadata Management',
    description: 'Administer metadata attributes, groups and templates',
  },
  role_management: { name: 'Role Management', description: 'Create and manage roles' },
  content_management: { name: 'Content Management', description: 'Manage content across the organization' },
  view_storyboards: { name: 'viewStoryboards', description: 'View story boards' },
  storyboard_management: { name: 'Story Board Management', description: 'Create and manage story boards' },
  webhooks_administration: { name: 'Webhooks Administration', description: 'Manage webhook endpoints' },
  sensitive_data: { name: 'Sensitive Data', description: 'See sensitive metadata' },
  impersonate: { name: 'Impersonate', description: 'Obtain tokens acting as another user' },
  api_key_management: { name: 'API Key Management', description: 'Create, list and revoke API keys' },
  cdn_management: { name: 'CDN Management', description: 'Manage CDN pull zones' },
  audit_log: { name: 'Audit Log', description: "Read and export the organization's audit trail and usage" },
  quota_management: {
    name: 'Quota Management',
    description: "Set the organization's quotas and limits and its usage-rights settings",
  },
} as const;

export type Privilege = keyof typeof PRIVILEGES;
export const ALL_PRIVILEGES = Object.keys(PRIVILEGES) as Privilege[];

export function isPrivilege(value: string): value is Privilege {
  return Object.hasOwn(PRIVILEGES, value);
}

/** Security-template permissions. Their ids are fixed UUIDs, as the reference API exposes them. */
export const PERMISSIONS = {
  view: { id: '6c1f0c1e-5b1a-4e1a-9a51-000000000001', name: 'View' },
  download: { id: '6c1f0c1e-5b1a-4e1a-9a51-000000000002', name: 'Download' },
  edit_metadata: { id: '6c1f0c1e-5b1a-4e1a-9a51-000000000003', name: 'Edit Metadata' },
  delete: { id: '6c1f0c1e-5b1a-4e1a-9a51-000000000004', name: 'Delete' },
  relationship: { id: '6c1f0c1e-5b1a-4e1a-9a51-000000000005', name: 'Relationship' },
  share: { id: '6c1f0c1e-5b1a-4e1a-9a51-000000000006', name: 'Share' },
  apply_security_template: { id: '6c1f0c1e-5b1a-4e1a-9a51-000000000007', name: 'Apply Security Template' },
} as const;

export type Permission = keyof typeof PERMISSIONS;
export const ALL_PERMISSIONS = Object.keys(PERMISSIONS) as Permission[];

const PERMISSION_BY_ID = new Map<string, Permission>(ALL_PERMISSIONS.map((p) => [PERMISSIONS[p].id, p]));

export function isPermission(value: string): value is Permission {
  return Object.hasOwn(PERMISSIONS, value);
}

export function permissionFromId(id: string): Permission | undefined {
  return PERMISSION_BY_ID.get(id.toLowerCase());
}
