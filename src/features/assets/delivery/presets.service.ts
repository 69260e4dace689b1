import type { Principal } from '../../../core/authz/principal.ts';
import { requireAction } from '../../../core/authz/permissions.ts';
import type { DbOrTrx } from '../../../core/db/connect.ts';
import { conflict, invalidField, notFound } from '../../../core/http/errors.ts';
import { isUuid, newId } from '../../../core/ids.ts';
import type { Deps } from '../../../deps.ts';

export const FITS = ['inside', 'cover', 'contain', 'fill', 'outside'] as const;
export const FORMATS = ['jpeg', 'png', 'webp', 'avif'] as const;
export type Fit = (typeof FITS)[number];
export type DeliveryFormat = (typeof FORMATS)[number];

/** What an image rendition on request is made with: by parameters, or a preset's. */
export interface DeliveryParams {
  width: number | null;
  height: number | null;
  fit: Fit;
  format: DeliveryFormat;
  quality: number;
}

export interface PresetInput {
  name?: string;
  width?: number | null;
  height?: number | null;
  fit?: string;
  format?: string;
  quality?: number;
}

const NAME = /^[\p{L}\p{N}][\p{L}\p{N} _.-]{0,49}$/u;

/** Checks and completes parameters (defaults: fit inside, JPEG, quality 80); `at` prefixes field names. */
export function deliveryParams(input: PresetInput, at: string, base?: DeliveryParams): DeliveryParams {
  const size = (value: number | null | undefined, field: string, fallback: number | null) => {
    if (value === undefined) return fallback;
    if (value === null) return null;
    if (!Number.isInteger(value) || value < 1 || value > 8192)
      throw invalidField(`${at}.${field}`, 'must be an integer from 1 to 8192');
    return value;
  };
  const fit = (input.fit ?? base?.fit ?? 'inside').toLowerCase();
  if (!(FITS as readonly string[]).includes(fit)) throw invalidField(`${at}.fit`, `must be one of ${FITS.join(', ')}`);
  let format = (input.format ?? base?.format ?? 'jpeg').toLowerCase();
  if (format === 'jpg') format = 'jpeg';
  if (!(FORMATS as readonly string[]).includes(format))
    throw invalidField(`${at}.format`, `must be one of ${FORMATS.join(', ')} (jpg accepted)`);
  const quality = input.quality ?? base?.quality ?? 80;
  if (!Number.isInteger(quality) || quality < 1 || quality > 100)
    throw invalidField(`${at}.quality`, 'must be an integer from 1 to 100');
  return {
    width: size(input.width, 'width', base?.width ?? null),
    height: size(input.height, 'height', base?.height ?? null),
    fit: fit as Fit,
    format: format as DeliveryFormat,
    quality,
  };
}

interface PresetRow {
  id: string;
  name: string;
  width: number | null;
  height: number | null;
  fit: string;
  format: string;
  quality: number;
  created_at: number;
  updated_at: number;
}

function present(row: PresetRow) {
  return {
    id: row.id,
    name: row.name,
    width: row.width,
    height: row.height,
    fit: row.fit,
    format: row.format,
    quality: row.quality,
    createdEpoch: Number(row.created_at),
    lastUpdatedEpoch: Number(row.updated_at),
  };
}

const columns = ['id', 'name', 'width', 'height', 'fit', 'format', 'quality', 'created_at', 'updated_at'] as const;

/** A preset of the organization by name (any case), or undefined. */
export async function presetByName(db: DbOrTrx, orgId: string, name: string): Promise<PresetRow | undefined> {
  return db
    .selectFrom('delivery_presets')
    .select(columns)
    .where('org_id', '=', orgId)
    .where('name_key', '=', name.trim().toLowerCase())
    .executeTakeFirst();
}

export async function listPresets(deps: Deps, principal: Principal) {
  requireAction(principal, 'delivery_preset.read');
  const rows = await deps.db
    .selectFrom('delivery_presets')
    .select(columns)
    .where('org_id', '=', principal.orgId)
    .orderBy('name_key')
    .execute();
  return { presets: rows.map(present) };
}

function checkedName(name: unknown): string {
  if (typeof name !== 'string' || !NAME.test(name.trim()))
    throw invalidField(
      'body.name',
      'must be 1 to 50 letters, digits, spaces, dots, dashes or underscores, starting with a letter or digit',
    );
  return name.trim();
}

async function ensureFree(db: DbOrTrx, orgId: string, name: string, except?: string) {
  const taken = await presetByName(db, orgId, name);
  if (taken && taken.id !== except) throw conflict(`A delivery preset named ${taken.name} exists`, 'body.name');
}

export async function createPreset(deps: Deps, principal: Principal, body: PresetInput) {
  requireAction(principal, 'delivery_preset.manage');
  const name = checkedName(body.name);
  const params = deliveryParams(body, 'body');
  const now = deps.clock.now();
  const row = {
    id: newId(now),
    org_id: principal.orgId,
    name,
    name_key: name.toLowerCase(),
    ...params,
    created_at: now,
    updated_at: now,
  };
  await deps.db.transaction().execute(async (trx) => {
    await ensureFree(trx, principal.orgId, name);
    await trx.insertInto('delivery_presets').values(row).execute();
  });
  return present(row);
}

async function presetById(db: DbOrTrx, orgId: string, id: string): Promise<PresetRow> {
  const row = isUuid(id)
    ? await db
        .selectFrom('delivery_presets')
        .select(columns)
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .executeTakeFirst()
    : undefined;
  if (!row) throw notFound('Delivery preset');
  return row;
}

export async function updatePreset(deps: Deps, principal: Principal, id: string, body: PresetInput) {
  requireAction(principal, 'delivery_preset.manage');
  return deps.db.transaction().execute(async (trx) => {
    const current = await presetById(trx, principal.orgId, id);
    const name = body.name === undefined ? current.name : checkedName(body.name);
    const params = deliveryParams(body, 'body', current as DeliveryParams);
    await ensureFree(trx, principal.orgId, name, current.id);
    const now = deps.clock.now();
    await trx
      .updateTable('delivery_presets')
      .set({ name, name_key: name.toLowerCase(), ...params, updated_at: now })
      .where('org_id', '=', principal.orgId)
      .where('id', '=', current.id)
      .execute();
    return present({ ...current, name, ...params, updated_at: now });
  });
}

export async function deletePreset(deps: Deps, principal: Principal, id: string) {
  requireAction(principal, 'delivery_preset.manage');
  const row = await presetById(deps.db, principal.orgId, id);
  await deps.db.deleteFrom('delivery_presets').where('org_id', '=', principal.orgId).where('id', '=', row.id).execute();
  return { message: 'Success' };
}
