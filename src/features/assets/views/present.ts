import type { Deps } from '../../../deps.ts';
import { fromJson } from '../../../core/db/json.ts';
import type { AssetRow, AssetWithOrg, AssetSecurity } from '../assets.repo.ts';
import { securityDenormalized } from '../access.ts';
import {
  itemsWithoutRestricted,
  NO_RESTRICTED,
  restrictedOfTemplate,
  withoutRestricted,
  type CompiledTemplate,
  type RestrictedAttributes,
} from '../../metadata/index.ts';
import { forLegacyRead, forSimplifiedRead, isEmptyValue, type LegacyItem } from '../metadata-seam/metadata-seam.ts';
import { lookupTable } from '../../../core/lookup.ts';

export interface StoredRendition {
  key: string;
  width: number;
  height: number;
  contentType: string;
  size: number;
  etag: string;
  placeholder?: boolean;
}

export const RENDITION_NAMES = ['imageThumb', 'imagePreview', 'imagePreviewLarge', 'mezzaninePreview'] as const;
export type RenditionName = (typeof RENDITION_NAMES)[number];
/** The names webhook and 1.5 payloads use for the same renditions. */
export const SHORT_NAMES: Record<RenditionName, string> = {
  imageThumb: 'thumbnail',
  imagePreview: 'preview',
  imagePreviewLarge: 'large',
  mezzaninePreview: 'mezzanine',
};

/** The stored renditions by name, with no prototype: a caller's name (`constructor`) finds nothing. */
export function storedRenditions(
  asset: Pick<AssetRow, 'renditions'>,
): Readonly<Record<string, StoredRendition | undefined>> {
  return lookupTable(fromJson<Record<string, StoredRendition>>(asset.renditions, {}));
}

export function renditionUrl(deps: Deps, objectId: string, name: string): string {
  return `${deps.config.publicUrl}/v1/asset/${objectId}/rendition/${name}`;
}

export function renditionUrls(deps: Deps, asset: AssetWithOrg, short = false): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, r] of Object.entries(storedRenditions(asset))) {
    if (!r) continue;
    const key = short ? (SHORT_NAMES[name as RenditionName] ?? name) : name;
    out[key] = renditionUrl(deps, asset.id, name);
  }
  return out;
}

/**
 * `placeholder: { thumbhash, dominantColor }` of a visual asset (image, video poster, PDF page 1…),
 * set by the renditions job; nothing for an asset without a picture of its own.
 */
export function placeholderOf(asset: Pick<AssetWithOrg, 'placeholder'>): {
  placeholder?: { thumbhash: string; dominantColor: string };
} {
  const value = fromJson<{ thumbhash: string; dominantColor: string } | null>(asset.placeholder, null);
  return value ? { placeholder: value } : {};
}

export function fileState(asset: AssetWithOrg): 'available' | 'recycle bin' {
  return asset.deleted_at === null ? 'available' : 'recycle bin';
}

/** Technical metadata as shown: the extracted full text stays in the search index, not in every record. */
function withoutText(tech: Record<string, unknown>): Record<string, unknown> {
  if (!('extractedText' in tech)) return tech;
  const { extractedText: _text, ...rest } = tech;
  return rest;
}

/**
 * What a reader may not see of an asset's metadata: nothing hidden for a holder of Sensitive Data
 * (or the search index, which filters when it answers); else the template's restricted attributes.
 */
export function hiddenOf(template: CompiledTemplate | undefined, sensitive: boolean): RestrictedAttributes {
  return sensitive ? NO_RESTRICTED : restrictedOfTemplate(template);
}

/**
 * The reference's legacy Asset object (§7.1). `hidden`: attributes left out of `metadata` and
 * `metadataDenormalized` (restricted ones for a caller without Sensitive Data, see hiddenOf).
 */
export function presentLegacy(
  deps: Deps,
  asset: AssetWithOrg,
  security: AssetSecurity,
  template: CompiledTemplate | undefined,
  hidden: RestrictedAttributes,
) {
  return withoutRestricted(legacyRecord(deps, asset, security, template), hidden);
}

function legacyRecord(deps: Deps, asset: AssetWithOrg, security: AssetSecurity, template?: CompiledTemplate) {
  const state = fileState(asset);
  return {
    objectId: asset.id,
    objectType: asset.object_type,
    fileId: asset.file_id,
    originalFileId: asset.original_file_id,
    filename: asset.filename,
    fileState: state,
    metadataState: state,
    currentVersion: asset.is_current === 1 ? ('Y' as const) : ('N' as const),
    versionNumber: asset.version_number,
    customerId: asset.customer_id,
    createdBy: asset.created_by,
    lastUpdatedBy: asset.updated_by,
    createdEpoch: asset.created_at,
    lastUpdatedEpoch: asset.updated_at,
    metadataDeletedEpoch: asset.deleted_at,
    metadataTemplateId: asset.metadata_template_id,
    metadata: forLegacyRead(template, fromJson<LegacyItem[]>(asset.metadata, [])),
    metadataDenormalized: fromJson<Record<string, unknown>>(asset.metadata_denormalized, {}),
    securityTemplateIds: security.templateIds,
    securityDenormalized: securityDenormalized(security),
    renditions: {
      ...renditionUrls(deps, asset),
      ...(asset.width !== null ? { width: asset.width } : {}),
      ...(asset.height !== null ? { height: asset.height } : {}),
    },
    renditionsState: asset.renditions_state,
    ...placeholderOf(asset),
    technicalMetadata: withoutText(fromJson<Record<string, unknown>>(asset.technical_metadata, {})),
    contentState: asset.content_state,
    contentType: asset.content_type,
    fileSizeInBytes: asset.size,
    isFederated: asset.federated === 1,
  };
}

export interface SimplifiedOptions {
  empty: boolean;
  system: boolean;
}

function systemFields(asset: AssetWithOrg): { name: string; value: unknown }[] {
  return [
    { name: 'system_created_epoch', value: asset.created_at },
    { name: 'system_created_by', value: asset.created_by },
    { name: 'system_last_updated_date', value: asset.updated_at },
    { name: 'system_last_updated_by', value: asset.updated_by },
    { name: 'system_mime_type', value: asset.content_type },
    { name: 'system_checksum', value: asset.sha256 },
    { name: 'system_is_federated', value: asset.federated === 1 },
    { name: 'system_skip_transcode', value: asset.skip_transcode === 1 },
  ];
}

/** The 1.5 simplified asset (`data` of GET /v1/assets/asset/{id}). */
export function presentSimplified(
  deps: Deps,
  asset: AssetWithOrg,
  security: AssetSecurity,
  securityTemplates: { id: string; name: string }[],
  template: CompiledTemplate | undefined,
  options: SimplifiedOptions,
  hidden: RestrictedAttributes,
) {
  // Restricted attributes, and restricted columns inside tables, are left out.
  const doc = itemsWithoutRestricted(fromJson<LegacyItem[]>(asset.metadata, []), hidden);
  let metadata: { name: string; value: unknown }[] = forSimplifiedRead(template, doc) as unknown as {
    name: string;
    value: unknown;
  }[];
  if (options.system) metadata = [...metadata, ...systemFields(asset)];
  if (!options.empty) metadata = metadata.filter((item) => !isEmptyValue(item.value));
  const state = fileState(asset);
  return {
    objectId: asset.id,
    fileId: asset.file_id,
    originalFileId: asset.original_file_id,
    filename: asset.filename,
    fileSizeInBytes: asset.size,
    contentType: asset.content_type,
    createdDate: new Date(asset.created_at).toISOString(),
    lastUpdatedDate: new Date(asset.updated_at).toISOString(),
    createdEpoch: asset.created_at,
    lastUpdatedEpoch: asset.updated_at,
    createdBy: asset.created_by,
    lastUpdatedBy: asset.updated_by,
    versionNumber: asset.version_number,
    currentVersion: asset.is_current === 1 ? ('Y' as const) : ('N' as const),
    fileState: state,
    metadataState: state,
    metadataTemplate: asset.metadata_template_id
      ? { id: asset.metadata_template_id, name: template?.name ?? '' }
      : null,
    securityTemplates:
      securityTemplates.length > 0 ? securityTemplates : security.templateIds.map((id) => ({ id, name: '' })),
    metadata,
    renditions: {
      ...renditionUrls(deps, asset, true),
      ...(asset.width !== null ? { width: asset.width, height: asset.height } : {}),
    },
    ...placeholderOf(asset),
  };
}

/** The asset as webhook payloads describe it (reference §14.5). */
export function eventAsset(
  asset: Pick<AssetWithOrg, 'id' | 'filename' | 'metadata_template_id'>,
  securityTemplates: { id: string; name: string }[],
) {
  return {
    id: asset.id,
    filename: asset.filename,
    metadataTemplate: asset.metadata_template_id ? { id: asset.metadata_template_id, name: '' } : null,
    securityTemplates,
  };
}
