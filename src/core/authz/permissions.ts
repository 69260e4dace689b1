import { forbidden } from '../http/errors.ts';
import { PERMISSIONS, PRIVILEGES, type Permission, type Privilege } from './catalog.ts';
import type { Principal } from './principal.ts';

/**
 * The permission table: for every action on an asset, a collection, a story board, a saved search
 * or the CDN, the role privileges it needs and the security-template permissions it needs on the
 * thing. Services ask `requireAction` / `permissionsFor` instead of naming privileges themselves, so
 * this table is the whole rule; docs/security-audit.md shows it (checked against this module by
 * test/security/permission-matrix.test.ts, which also fails when a documented route of these
 * features is in no row).
 *
 * - `privileges`: every one is needed (a role privilege, see catalog.ts).
 * - `anyPrivilege`: at least one of these is needed as well.
 * - `permissions`: needed on the thing, through its security templates (an asset, a secured
 *   collection, a secured story board). A thing the caller may not View does not exist for them
 *   (404); View granted but another permission missing is a 403.
 * - `capability`: reached without credentials by a signed link or token minted by another action;
 *   the link dies with what it points at.
 */
export interface ActionRule {
  on: 'asset' | 'collection' | 'storyboard' | 'saved_search' | 'cdn' | 'organization' | 'link';
  summary: string;
  privileges: readonly Privilege[];
  anyPrivilege?: readonly Privilege[];
  permissions: readonly Permission[];
  /** operationIds of the routes that perform this action */
  operations: readonly string[];
  capability?: true;
  /** Mints a lasting capability: only a person's own sign-in (API keys, impersonation and OAuth tokens get 403). */
  ownSignIn?: true;
}

const rule = (r: ActionRule): ActionRule => r;

export const ACTIONS = {
  // Assets
  'asset.create': rule({
    on: 'asset',
    summary: 'Create an asset (upload or metadata-only)',
    privileges: ['upload'],
    permissions: [],
    operations: ['CreateAsset', 'CreateAssetSimplified', 'CreateAssetsBulk', 'UploadAsset', 'FinishUpload'],
  }),
  'asset.version': rule({
    on: 'asset',
    summary: 'Add a version to an asset (`originalFileId`)',
    privileges: ['upload'],
    permissions: ['view', 'edit_metadata'],
    operations: ['CreateAsset', 'CreateAssetSimplified'],
  }),
  'asset.view': rule({
    on: 'asset',
    summary: 'Read an asset, its versions, relationships and preview renditions',
    privileges: [],
    permissions: ['view'],
    operations: [
      'GetAsset',
      'GetAssetSimplified',
      'GetLatestVersion',
      'GetVersions',
      'GetAssetRelationship',
      'GetRendition',
      'GetRenditionUrls',
      'GetAssetSimplifiedAlias',
      'GetAssetPage',
      'GetAssetHistory',
    ],
  }),
  'asset.search': rule({
    on: 'asset',
    summary: 'Search, scan and list the recycle bin (results, totals and facets hold only viewable assets)',
    privileges: [],
    permissions: ['view'],
    operations: ['Search', 'SearchAssets', 'ScanAssets', 'ListRecycleBin', 'SearchSimilar'],
  }),
  'asset.edit_metadata': rule({
    on: 'asset',
    summary: 'Change metadata (single, simplified, bulk) and technical metadata',
    privileges: [],
    permissions: ['view', 'edit_metadata'],
    operations: ['UpdateAsset', 'UpdateAssetSimplified', 'EditAssets', 'UpdateAssetTechMetadata'],
  }),
  'asset.apply_security_template': rule({
    on: 'asset',
    summary: "Change an asset's security templates (adding only templates within what the caller holds on it)",
    privileges: [],
    permissions: ['view', 'apply_security_template'],
    operations: ['UpdateAsset', 'UpdateAssetSimplified', 'EditAssets'],
  }),
  'asset.download': rule({
    on: 'asset',
    summary:
      'Download the original, or get a link to it; revoke such a link (the person it was made for, or someone who may share the asset)',
    privileges: ['download'],
    permissions: ['view', 'download'],
    operations: ['GetAssetContent', 'GetAssetUrl', 'RevokeAssetLink'],
  }),
  'asset.download_out_of_rights': rule({
    on: 'asset',
    summary:
      "Download the original and renditions above preview size of an asset whose usage right has expired or not started, when the organization blocks or watermarks such downloads (holders of the other rows' permissions still need them)",
    privileges: [],
    anyPrivilege: ['quota_management', 'content_management'],
    permissions: ['view', 'download'],
    operations: [],
  }),
  'asset.deliver': rule({
    on: 'asset',
    summary: 'An image rendition on request, by parameters or by a delivery preset (made once, then cached)',
    privileges: ['download'],
    permissions: ['view', 'download'],
    operations: ['GetAssetDelivery'],
  }),
  'asset.transform': rule({
    on: 'asset',
    summary:
      'Transformed copies of assets behind expiring links, mailed to recipients; revoke them (who asked, or someone who may transform every asset in it)',
    privileges: ['download'],
    permissions: ['view', 'download', 'share'],
    operations: ['GetTransformation', 'RevokeTransformation'],
  }),
  'asset.share': rule({
    on: 'asset',
    summary: 'Mail download links of assets; revoke a share (the sharer, or someone who may share every asset in it)',
    privileges: ['download'],
    permissions: ['view', 'download', 'share'],
    operations: ['ShareAssets', 'RevokeAssetShare'],
  }),
  'asset.delete': rule({
    on: 'asset',
    summary: 'Send to the recycle bin, or restore',
    privileges: ['delete'],
    permissions: ['view', 'delete'],
    operations: ['DeleteAsset'],
  }),
  'asset.purge': rule({
    on: 'asset',
    summary: 'Remove recycle-bin assets for good (only those the caller may delete)',
    privileges: ['purge'],
    permissions: ['view', 'delete'],
    operations: ['PurgeAssets'],
  }),
  'asset.relationship': rule({
    on: 'asset',
    summary: 'Link and unlink related assets (the secondary must be viewable)',
    privileges: [],
    permissions: ['view', 'relationship'],
    operations: ['CreateRelationship', 'RemoveRelationship'],
  }),
  'asset.replace_preview': rule({
    on: 'asset',
    summary: "Replace an asset's preview renditions",
    privileges: ['replace_mezzanine', 'upload'],
    permissions: ['view', 'edit_metadata'],
    operations: ['ReplacePreview'],
  }),
  'asset.regenerate': rule({
    on: 'asset',
    summary: 'Re-render renditions of named assets',
    privileges: ['content_management'],
    permissions: [],
    operations: ['RegenerateRenditions'],
  }),
  'asset.sensitive_data': rule({
    on: 'asset',
    summary: 'Read and write `isRestricted` attributes (hidden from reads, results and facets otherwise)',
    privileges: ['sensitive_data'],
    permissions: ['view'],
    operations: [],
  }),
  // Collections
  'collection.create': rule({
    on: 'collection',
    summary: 'Create a collection (secured: only with templates granting the caller View)',
    privileges: ['collection'],
    permissions: [],
    operations: ['CreateCollection'],
  }),
  'collection.view': rule({
    on: 'collection',
    summary: 'Read a collection and its (viewable) members',
    privileges: ['collection'],
    permissions: ['view'],
    operations: ['GetCollection', 'GetCollectionAssets', 'SearchCollectionAssets'],
  }),
  'collection.search': rule({
    on: 'collection',
    summary: 'Find collections by name',
    privileges: ['collection'],
    permissions: ['view'],
    operations: ['SearchCollections'],
  }),
  'collection.edit': rule({
    on: 'collection',
    summary: 'Change a collection (owner, or Edit Metadata through its templates)',
    privileges: ['collection'],
    permissions: ['view', 'edit_metadata'],
    operations: ['UpdateCollection', 'UpdateCollectionNew'],
  }),
  'collection.delete': rule({
    on: 'collection',
    summary: "Delete a private collection (its owner's)",
    privileges: ['collection', 'delete'],
    permissions: [],
    operations: ['DeleteCollection'],
  }),
  'collection.delete_secured': rule({
    on: 'collection',
    summary: 'Delete a secured collection (its members are only dissociated)',
    privileges: ['collection', 'purge'],
    permissions: ['view'],
    operations: ['DeleteCollection'],
  }),
  'collection.share': rule({
    on: 'collection',
    summary:
      "Mail zips of a collection's assets (only assets the caller may Download and Share); revoke a share (the sharer, or an editor of the collection)",
    privileges: ['collection'],
    permissions: ['view'],
    operations: ['ShareCollection', 'RevokeCollectionShare'],
  }),
  // Story boards
  'storyboard.view': rule({
    on: 'storyboard',
    summary: 'List, read and view story boards',
    privileges: [],
    anyPrivilege: ['view_storyboards', 'storyboard_management'],
    permissions: ['view'],
    operations: ['listStoryboards', 'getStoryboard', 'viewStoryboard', 'listStoryboardShares'],
  }),
  'storyboard.create': rule({
    on: 'storyboard',
    summary: 'Create a story board',
    privileges: ['storyboard_management'],
    permissions: [],
    operations: ['createStoryboard'],
  }),
  'storyboard.edit': rule({
    on: 'storyboard',
    summary: 'Change, publish and arrange blocks',
    privileges: ['storyboard_management'],
    permissions: ['view', 'edit_metadata'],
    operations: [
      'updateStoryboard',
      'publishStoryboard',
      'unpublishStoryboard',
      'replaceStoryboardBlocks',
      'addStoryboardBlock',
      'reorderStoryboardBlocks',
      'updateStoryboardBlock',
      'deleteStoryboardBlock',
    ],
  }),
  'storyboard.apply_security_template': rule({
    on: 'storyboard',
    summary: "Change a story board's security templates",
    privileges: ['storyboard_management'],
    permissions: ['view', 'edit_metadata', 'apply_security_template'],
    operations: ['updateStoryboard'],
  }),
  'storyboard.delete': rule({
    on: 'storyboard',
    summary: 'Delete a story board',
    privileges: ['storyboard_management'],
    permissions: ['view', 'delete'],
    operations: ['deleteStoryboard'],
  }),
  'storyboard.share_internal': rule({
    on: 'storyboard',
    summary: 'Share with users and groups of the organization',
    privileges: [],
    anyPrivilege: ['view_storyboards', 'storyboard_management'],
    permissions: ['view', 'share'],
    operations: ['shareStoryboard', 'unshareStoryboard'],
  }),
  'storyboard.share_external': rule({
    on: 'storyboard',
    summary: "Create and revoke public links (a person's own sign-in)",
    privileges: ['storyboard_management'],
    permissions: ['view', 'share'],
    operations: ['createStoryboardLink', 'revokeStoryboardLink'],
    ownSignIn: true,
  }),
  // Saved searches
  'saved_search.use': rule({
    on: 'saved_search',
    summary: 'Create, list, read and run saved searches (results hold only viewable assets)',
    privileges: [],
    permissions: ['view'],
    operations: ['CreateSavedSearch', 'ListSavedSearches', 'GetSavedSearch', 'RunSavedSearch'],
  }),
  'saved_search.edit': rule({
    on: 'saved_search',
    summary: 'Change or delete a saved search (owner, or Edit Metadata through its templates)',
    privileges: [],
    permissions: ['view', 'edit_metadata'],
    operations: ['UpdateSavedSearch', 'DeleteSavedSearch'],
  }),
  // CDN
  'cdn.manage': rule({
    on: 'cdn',
    summary: 'Configure pull zones, purge, sign URLs, read statistics and edges',
    privileges: ['cdn_management'],
    permissions: [],
    operations: [
      'cdnConfigure',
      'editCdnConfiguration',
      'getPullZoneStats',
      'createPullZone',
      'listPullZones',
      'getPullZone',
      'editPullZone',
      'deletePullZone',
      'purgePullZoneCache',
      'getPullZoneStatistics',
      'getPullZoneDashboard',
      'signPullZoneUrl',
      'listCdnEdges',
      'cdnUnpublish',
    ],
  }),
  'cdn.publish': rule({
    on: 'cdn',
    summary: 'Publish assets to a pull zone (each asset needs Download)',
    privileges: ['cdn_management'],
    permissions: ['view', 'download'],
    operations: ['cdnPublish'],
  }),
  // The organization
  'delivery_preset.read': rule({
    on: 'organization',
    summary: "List the organization's delivery presets",
    privileges: [],
    permissions: [],
    operations: ['ListDeliveryPresets'],
  }),
  'delivery_preset.manage': rule({
    on: 'organization',
    summary: 'Create, change and delete delivery presets',
    privileges: ['content_management'],
    permissions: [],
    operations: ['CreateDeliveryPreset', 'UpdateDeliveryPreset', 'DeleteDeliveryPreset'],
  }),
  'audit.read': rule({
    on: 'organization',
    summary: "Read and export the audit trail (an asset's own history needs only View on it)",
    privileges: ['audit_log'],
    permissions: [],
    operations: ['ListAuditLog', 'ExportAuditLog', 'VerifyAuditLog'],
  }),
  'quota.read': rule({
    on: 'organization',
    summary: "Read the organization's quotas, limits and current usage (and its usage-rights settings)",
    privileges: [],
    anyPrivilege: ['quota_management', 'audit_log'],
    permissions: [],
    operations: ['GetOrganizationQuotas', 'GetRightsSettings'],
  }),
  'quota.manage': rule({
    on: 'organization',
    summary: "Set the organization's quotas and limits (and its usage-rights settings)",
    privileges: ['quota_management'],
    permissions: [],
    operations: ['UpdateOrganizationQuotas', 'UpdateRightsSettings'],
  }),
  // Capability links: no credentials; each dies with what it points at.
  'link.upload': rule({
    on: 'link',
    summary: 'Presigned upload URL (from asset.create)',
    privileges: [],
    permissions: [],
    operations: ['UploadContent', 'UploadPart'],
    capability: true,
  }),
  'link.content': rule({
    on: 'link',
    summary:
      'Signed content URL (from asset.download, asset.share); dies when the asset goes to the recycle bin, or when it (or its share) is revoked',
    privileges: [],
    permissions: [],
    operations: ['GetSignedContent'],
    capability: true,
  }),
  'link.transform': rule({
    on: 'link',
    summary: 'Transformed file (from asset.transform); dies when the asset goes to the recycle bin, or when revoked',
    privileges: [],
    permissions: [],
    operations: ['GetTransformedFile'],
    capability: true,
  }),
  'link.collection_share': rule({
    on: 'link',
    summary: 'Collection-share zip (from collection.share); dies with the collection, its assets, or a revoke',
    privileges: [],
    permissions: [],
    operations: ['GetSharedCollectionZip'],
    capability: true,
  }),
  'link.storyboard': rule({
    on: 'link',
    summary: 'Public story-board link (from storyboard.share_external)',
    privileges: [],
    permissions: [],
    operations: ['openStoryboardLink', 'unlockStoryboardLink', 'viewStoryboardLink', 'getStoryboardLinkRendition'],
    capability: true,
  }),
} as const satisfies Record<string, ActionRule>;

export type Action = keyof typeof ACTIONS;
export const ALL_ACTIONS = Object.keys(ACTIONS) as Action[];

/** The privileges `action` needs that the caller lacks, by name; empty when the caller may. */
export function missingPrivileges(principal: Pick<Principal, 'privileges'>, action: Action): string[] {
  const r: ActionRule = ACTIONS[action];
  const missing: string[] = r.privileges.filter((p) => !principal.privileges.has(p)).map((p) => PRIVILEGES[p].name);
  if (r.anyPrivilege && !r.anyPrivilege.some((p) => principal.privileges.has(p)))
    missing.push(`one of ${r.anyPrivilege.map((p) => PRIVILEGES[p].name).join(', ')}`);
  return missing;
}

export function mayPerform(principal: Pick<Principal, 'privileges'>, action: Action): boolean {
  return missingPrivileges(principal, action).length === 0;
}

/** 403 unless the caller's role holds what `action` needs (the privilege half of the table). */
export function requireAction(principal: Principal, action: Action): void {
  const missing = missingPrivileges(principal, action);
  if (missing.length > 0) throw forbidden(`Missing privilege: ${missing.join(', ')}`);
}

/** The template permissions `action` needs on the thing (the permission half of the table). */
export function permissionsFor(action: Action): readonly Permission[] {
  return ACTIONS[action].permissions;
}

/** Whether permissions held on a thing (through its templates) satisfy `action`'s permission half. */
export function permitted(held: ReadonlySet<Permission>, action: Action): boolean {
  return ACTIONS[action].permissions.every((p) => held.has(p));
}

/** Both halves: the caller's role and the permissions they hold on the thing. */
export function allows(principal: Principal, held: ReadonlySet<Permission>, action: Action): boolean {
  return mayPerform(principal, action) && permitted(held, action);
}

/** The table as Markdown rows (docs/security-audit.md holds this, checked by the matrix test). */
export function permissionTableMarkdown(): string {
  const rows = ALL_ACTIONS.map((a) => {
    const r: ActionRule = ACTIONS[a];
    const privileges =
      [
        ...r.privileges.map((p) => PRIVILEGES[p].name),
        ...(r.anyPrivilege ? [`one of ${r.anyPrivilege.map((p) => PRIVILEGES[p].name).join(' / ')}`] : []),
      ].join(' + ') || (r.capability ? '— (signed link)' : '—');
    const permissions = r.permissions.map((p) => PERMISSIONS[p].name).join(' + ') || '—';
    return `| \`${a}\` | ${r.summary} | ${privileges} | ${permissions} | ${r.operations.map((o) => `\`${o}\``).join(', ') || '(applies inside reads and writes)'} |`;
  });
  return [
    '| Action | What | Role privileges | Template permissions on the thing | Operations |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
