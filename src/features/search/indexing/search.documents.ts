import type { DbOrTrx } from '../../../core/db/connect.ts';
import { fromJson } from '../../../core/db/json.ts';
import type { Deps } from '../../../deps.ts';
import { presentLegacy, securityOf, type AssetToIndex } from '../../assets/index.ts';
import type { SearchDocumentInput } from './search-index.repo.ts';
import { loadTemplate, NO_RESTRICTED, type CompiledTemplate } from '../../metadata/index.ts';

/**
 * Turns assets into index documents: text (filename, ids, metadata values, extracted content),
 * facets (file type, metadata template, and every controlled-vocabulary value), sort values
 * (every attribute value, dates as epoch ms), security templates and the legacy record returned
 * in results (reference §7.1).
 */
const DATE_US = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/;
const DATE_ISO = /^(\d{4})-(\d{2})-(\d{2})(T.*)?$/;

export function dateValue(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const us = DATE_US.exec(value);
  if (us) return Date.UTC(Number(us[3]), Number(us[1]) - 1, Number(us[2]));
  const iso = DATE_ISO.exec(value);
  if (iso) {
    const ms = Date.parse(value);
    return Number.isFinite(ms) ? ms : null;
  }
  return null;
}

function textOf(value: unknown, out: string[]): void {
  if (value === null || value === undefined) return;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    out.push(String(value));
  } else if (Array.isArray(value)) {
    for (const v of value) textOf(v, out);
  } else if (typeof value === 'object') {
    const o = value as Record<string, unknown>;
    // Vocabulary values: the label is what people search; ids stay out of the text.
    if ('label' in o || 'value' in o || 'name' in o) textOf(o.label ?? o.value ?? o.name, out);
    else for (const v of Object.values(o)) textOf(v, out);
  }
}

function fileTypeOf(filename: string, contentType: string | null): string {
  const dot = filename.lastIndexOf('.');
  if (dot > 0 && dot < filename.length - 1) return filename.slice(dot + 1).toLowerCase();
  return contentType ? contentType.split('/').pop()!.toLowerCase() : 'none';
}

export async function buildDocuments(
  deps: Deps,
  db: DbOrTrx,
  assets: readonly AssetToIndex[],
): Promise<SearchDocumentInput[]> {
  if (assets.length === 0) return [];
  const orgId = assets[0]!.org_id;
  const security = await securityOf(
    db,
    orgId,
    assets.map((a) => a.id),
  );
  const templateIds = [...new Set(assets.map((a) => a.metadata_template_id).filter((t): t is string => Boolean(t)))];
  const templates = new Map<string, CompiledTemplate>();
  for (const id of templateIds) {
    const t = await loadTemplate(db, orgId, id);
    if (t) templates.set(id, t);
  }
  return assets.map((asset) => {
    const sec = security.get(asset.id) ?? { templateIds: [], byGroup: new Map() };
    const denormalized = fromJson<Record<string, unknown>>(asset.metadata_denormalized, {});
    const text: string[] = [];
    const facets: { facet: string; value: string }[] = [];
    const sorts: { field: string; num?: number | null; txt?: string | null }[] = [];
    const template = asset.metadata_template_id ? templates.get(asset.metadata_template_id) : undefined;
    const defs = new Map((template?.attributes ?? []).map((a) => [a.searchField, a]));
    for (const [field, value] of Object.entries(denormalized)) {
      const def = defs.get(field);
      // Restricted (Sensitive Data) values are never free text: a match would show who holds them.
      if (!def?.restricted) textOf(value, text);
      const date = def?.type === 'date' || !def ? dateValue(value) : null;
      if (date !== null) sorts.push({ field, num: date });
      else if (typeof value === 'number') sorts.push({ field, num: value });
      else if (typeof value === 'string') sorts.push({ field, txt: value.slice(0, 200) });
      // Facetable attributes (vocabulary values by label, text values as written).
      if (def?.facetable && def.searchField !== 'system_file_type') {
        for (const v of Array.isArray(value) ? value : [value]) {
          if (typeof v === 'string' && v.trim() !== '') facets.push({ facet: def.name, value: v.slice(0, 200) });
        }
      }
    }
    const fileType = fileTypeOf(asset.filename, asset.content_type);
    facets.push({ facet: 'File Type', value: fileType });
    if (template) facets.push({ facet: 'Metadata Template', value: template.name });
    const technical = fromJson<Record<string, unknown>>(asset.technical_metadata, {});
    const content = typeof technical.extractedText === 'string' ? technical.extractedText : '';
    return {
      orgId: asset.org_id,
      assetId: asset.id,
      fileId: asset.file_id,
      originalFileId: asset.original_file_id,
      filename: asset.filename,
      fileType,
      metadataTemplateId: asset.metadata_template_id,
      securityTemplateIds: sec.templateIds,
      deleted: asset.deleted_at !== null,
      currentVersion: asset.is_current === 1,
      createdEpoch: Number(asset.created_at),
      updatedEpoch: Number(asset.updated_at),
      assetVersion: Number(asset.row_version),
      metadataText: text.join(' '),
      contentText: content,
      facets,
      sorts,
      // The whole record: restricted attributes are left out when a search answers (search.service.ts).
      record: presentLegacy(deps, asset, sec, undefined, NO_RESTRICTED) as unknown as Record<string, unknown>,
    };
  });
}
