import type { Selectable } from 'kysely';
import type { Deps } from '../../deps.ts';
import { audit } from '../../core/audit.ts';
import { hasPrivilege, requirePrivileges } from '../../core/authz/authorize.ts';
import type { Principal } from '../../core/authz/principal.ts';
import { isUniqueViolation } from '../../core/db/connect.ts';
import { fromJson, toJson } from '../../core/db/json.ts';
import type { AdaptiveTemplatesTable } from '../../core/db/schema.ts';
import { conflict, forbidden, invalidField, notFound } from '../../core/http/errors.ts';
import { newId } from '../../core/ids.ts';
import { customerIdOf as orgCustomerId, loadUserPrincipal } from '../identity/index.ts';
import { content, type AssetCard } from '../storyboards/index.ts';
import type { AdaptiveTemplate, RegisterInput, TemplateSearch } from './adaptive-templates.schemas.ts';
import { LAUNCH_TTL_MS, signLaunch, verifyLaunch } from './launch-token.ts';
import {
  MAX_SOURCE_BYTES,
  checkSource,
  checkValues,
  extractFields,
  fill,
  kindOf,
  renderSvg,
  type FieldDefinition,
} from './render.ts';
import { lookupTable } from '../../core/lookup.ts';

export type TemplateRow = Selectable<AdaptiveTemplatesTable>;

export function fieldsOf(row: TemplateRow): FieldDefinition[] {
  return fromJson<FieldDefinition[]>(row.fields, []);
}

function present(row: TemplateRow, card: AssetCard | undefined, customerId: string): AdaptiveTemplate {
  return {
    templateId: row.id,
    objectId: row.asset_id,
    objectType: 'Asset',
    filename: card?.filename ?? row.name,
    kind: row.kind,
    fields: fieldsOf(row),
    customerId,
    createdBy: row.created_by,
    lastUpdatedBy: row.created_by,
    createdEpoch: row.created_at,
    lastUpdatedEpoch: row.updated_at,
    renditionsDocument: card?.renditions ?? {},
    metadataDocument: {
      template_title: row.name,
      title: row.name,
      description: row.description,
      system_mime_type: row.kind === 'svg' ? 'image/svg+xml' : 'text/html',
      system_created_epoch: row.created_at,
      system_created_by: row.created_by,
      system_last_updated_date: row.updated_at,
    },
  };
}

function customerIdOf(deps: Deps, orgId: string): Promise<string> {
  return orgCustomerId(deps.db, orgId);
}

/** An asset the caller cannot view hides the template registered on it: visibility follows the asset. */
async function visibleTemplates(
  deps: Deps,
  principal: Principal,
  rows: TemplateRow[],
): Promise<{ row: TemplateRow; card: AssetCard }[]> {
  if (rows.length === 0) return [];
  const cards = new Map(
    (
      await content.visibleAssets(
        deps,
        principal,
        rows.map((r) => r.asset_id),
      )
    ).map((c) => [c.id, c]),
  );
  return rows.flatMap((row) => {
    const card = cards.get(row.asset_id);
    return card ? [{ row, card }] : [];
  });
}

async function loadTemplate(
  deps: Deps,
  principal: Principal,
  id: string,
): Promise<{ row: TemplateRow; card: AssetCard }> {
  const row = await deps.db
    .selectFrom('adaptive_templates')
    .selectAll()
    .where('org_id', '=', principal.orgId)
    .where('id', '=', id)
    .executeTakeFirst();
  const [visible] = row ? await visibleTemplates(deps, principal, [row]) : [];
  if (!visible) throw notFound('Template');
  return visible;
}

export async function registerTemplate(
  deps: Deps,
  principal: Principal,
  input: RegisterInput,
  ip: string,
): Promise<AdaptiveTemplate> {
  requirePrivileges(principal, 'upload');
  const original = await content.original(deps, principal, input.assetId, MAX_SOURCE_BYTES + 1);
  if (!original) throw invalidField('body.assetId', 'asset not found');
  const kind = kindOf(original.mimeType, original.filename);
  if (!kind) throw invalidField('body.assetId', 'must be an SVG or HTML asset');
  const source = original.bytes.toString('utf8');
  checkSource(kind, source, 'body.assetId');
  const fields = extractFields(source);
  for (const [i, override] of (input.fields ?? []).entries()) {
    const target = fields.find((f) => f.name === override.name);
    if (!target) throw invalidField(`body.fields.${i}.name`, 'is not a field of the template source');
    if (override.label !== undefined) target.label = override.label;
    if (override.default !== undefined) target.default = override.default;
    if (override.maxLength !== undefined) target.maxLength = override.maxLength;
    if (override.multiline !== undefined) target.multiline = override.multiline;
  }
  const now = deps.clock.now();
  const name = input.name?.trim() || original.filename.replace(/\.[^.]+$/, '');
  const row: TemplateRow = {
    id: newId(now),
    org_id: principal.orgId,
    asset_id: input.assetId,
    name,
    name_key: name.toLowerCase(),
    description: input.description?.trim() ?? '',
    kind,
    source,
    fields: toJson(fields),
    created_by: principal.userId,
    created_at: now,
    updated_at: now,
  };
  try {
    await deps.db.transaction().execute(async (trx) => {
      await trx.insertInto('adaptive_templates').values(row).execute();
      await audit(trx, {
        orgId: principal.orgId,
        at: now,
        actorId: principal.userId,
        action: 'adaptive_template.registered',
        targetType: 'adaptive_template',
        targetId: row.id,
        ip,
        data: { assetId: input.assetId },
      });
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict('This asset is already registered as a template', 'body.assetId');
    throw error;
  }
  return getTemplate(deps, principal, row.id);
}

export async function getTemplate(deps: Deps, principal: Principal, id: string): Promise<AdaptiveTemplate> {
  const { row, card } = await loadTemplate(deps, principal, id);
  return present(row, card, await customerIdOf(deps, principal.orgId));
}

export async function deleteTemplate(deps: Deps, principal: Principal, id: string, ip: string): Promise<void> {
  requirePrivileges(principal, 'upload');
  const { row } = await loadTemplate(deps, principal, id);
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('adaptive_templates').where('id', '=', row.id).where('org_id', '=', principal.orgId).execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'adaptive_template.deleted',
      targetType: 'adaptive_template',
      targetId: row.id,
      ip,
    });
  });
}

const SORTS = lookupTable<(r: TemplateRow) => string | number>({
  template_title: (r) => r.name_key,
  title: (r) => r.name_key,
  name: (r) => r.name_key,
  filename: (r) => r.name_key,
  createdepoch: (r) => r.created_at,
  system_created_epoch: (r) => r.created_at,
  system_created_date: (r) => r.created_at,
  lastupdatedepoch: (r) => r.updated_at,
  system_last_updated_date: (r) => r.updated_at,
});

/**
 * POST /v1/template (reference §6.1): the templates whose asset the caller may view, matching the
 * terms (on name and description; `*` or none for all; AND by default), sorted and paged.
 */
export async function searchTemplates(deps: Deps, principal: Principal, body: TemplateSearch) {
  const from = body.from ?? 0;
  const limit = body.limit ?? 50;
  const op = (body.operation ?? 'AND').trim().toUpperCase();
  if (op !== 'AND' && op !== 'OR') throw invalidField('body.operation', 'must be AND or OR');
  const raw =
    body.searchTerm === null || body.searchTerm === undefined
      ? []
      : typeof body.searchTerm === 'string'
        ? [body.searchTerm]
        : body.searchTerm;
  const terms = raw.map((t) => t.trim().replace(/^"|"$/g, '').replace(/\*$/, '').toLowerCase()).filter((t) => t !== '');
  const sorts = (body.sortBy ?? []).map((s, i) => {
    const key = SORTS[s.metadataDefinitionSearchField.trim().toLowerCase()];
    if (!key)
      throw invalidField(
        `body.sortBy.${i}.metadataDefinitionSearchField`,
        `cannot sort by this field (one of ${Object.keys(SORTS).join(', ')})`,
      );
    const order = (s.order ?? 'asc').trim().toLowerCase();
    if (order !== 'asc' && order !== 'desc') throw invalidField(`body.sortBy.${i}.order`, 'must be asc or desc');
    return { key, dir: order === 'asc' ? 1 : -1 };
  });
  if (sorts.length === 0) sorts.push({ key: SORTS.name!, dir: 1 });
  const rows = await deps.db
    .selectFrom('adaptive_templates')
    .selectAll()
    .where('org_id', '=', principal.orgId)
    .execute();
  const visible = (await visibleTemplates(deps, principal, rows)).filter(({ row }) => {
    if (terms.length === 0) return true;
    const hay = `${row.name_key} ${row.description.toLowerCase()}`;
    return op === 'AND' ? terms.every((t) => hay.includes(t)) : terms.some((t) => hay.includes(t));
  });
  visible.sort((a, b) => {
    for (const s of sorts) {
      const x = s.key(a.row);
      const y = s.key(b.row);
      if (x !== y) return (x < y ? -1 : 1) * s.dir;
    }
    return a.row.id < b.row.id ? -1 : 1;
  });
  const customerId = await customerIdOf(deps, principal.orgId);
  const page = visible.slice(from, from + limit).map(({ row, card }) => present(row, card, customerId));
  return { hitCount: page.length, totalCount: visible.length, from, limit, result: page };
}

export async function launchTemplate(
  deps: Deps,
  principal: Principal,
  templateId: string,
): Promise<{ url: string; expiresAt: string }> {
  if (principal.kind !== 'user' && !principal.userId) throw forbidden();
  const { row } = await loadTemplate(deps, principal, templateId);
  const expires = deps.clock.now() + LAUNCH_TTL_MS;
  const token = signLaunch(deps.keys, { t: row.id, u: principal.userId, o: principal.orgId, e: expires });
  return {
    url: `${deps.config.publicUrl.replace(/\/$/, '')}/adaptive-templates/launch/${token}`,
    expiresAt: new Date(expires).toISOString(),
  };
}

export interface OpenedLaunch {
  row: TemplateRow;
  card: AssetCard;
  principal: Principal;
  fields: FieldDefinition[];
}

/** The template behind a launch token, as its launcher still sees it; 404 for anything else. */
export async function openLaunch(deps: Deps, token: string): Promise<OpenedLaunch> {
  const claims = verifyLaunch(deps.keys, token, deps.clock.now());
  if (!claims) throw notFound('Launch link');
  const principal = await loadUserPrincipal(deps.db, claims.u);
  if (!principal || principal.orgId !== claims.o) throw notFound('Launch link');
  try {
    const { row, card } = await loadTemplate(deps, principal, claims.t);
    return { row, card, principal, fields: fieldsOf(row) };
  } catch {
    throw notFound('Launch link');
  }
}

export interface Rendered {
  contentType: string;
  body: Buffer;
  extension: string;
}

export async function renderTemplate(
  opened: OpenedLaunch,
  values: Record<string, unknown>,
  field: string,
): Promise<Rendered> {
  const filled = fill(opened.row.source, checkValues(opened.fields, values, field));
  if (opened.row.kind === 'svg') return { contentType: 'image/png', body: await renderSvg(filled), extension: 'png' };
  return { contentType: 'text/html; charset=utf-8', body: Buffer.from(filled), extension: 'html' };
}

/** Renders with the values and saves the result as a new asset of the launcher, related as `derivative`. */
export async function saveDerivative(
  deps: Deps,
  opened: OpenedLaunch,
  values: Record<string, unknown>,
  filename: string | undefined,
  field: string,
): Promise<{ assetId: string; templateId: string; relationship: 'derivative' }> {
  if (!hasPrivilege(opened.principal, 'upload')) throw forbidden('Missing privilege: Upload');
  const rendered = await renderTemplate(opened, values, field);
  const base = (
    filename?.trim() ||
    `${opened.row.name}-${new Date(deps.clock.now()).toISOString().slice(0, 19).replace(/[:T]/g, '-')}`
  )
    .replace(/[\\/]/g, '-')
    .replace(/\.(png|html?)$/i, '');
  const assetId = await content.createDerivative(deps, opened.principal, {
    parentAssetId: opened.row.asset_id,
    filename: `${base}.${rendered.extension}`,
    contentType: rendered.contentType.split(';')[0]!,
    bytes: rendered.body,
    title: base,
  });
  await audit(deps.db, {
    orgId: opened.principal.orgId,
    at: deps.clock.now(),
    actorId: opened.principal.userId,
    action: 'adaptive_template.rendered',
    targetType: 'adaptive_template',
    targetId: opened.row.id,
    data: { assetId },
  });
  return { assetId, templateId: opened.row.id, relationship: 'derivative' };
}
