import { randomInt } from 'node:crypto';
import type { Deps } from '../../deps.ts';
import { requireAction } from '../../core/authz/permissions.ts';
import type { Principal } from '../../core/authz/principal.ts';
import { isUniqueViolation } from '../../core/db/connect.ts';
import { fromJson, toJson } from '../../core/db/json.ts';
import type { CdnZonesTable } from '../../core/db/schema.ts';
import { AppError, conflict, invalidField, notFound } from '../../core/http/errors.ts';
import { newId } from '../../core/ids.ts';
import { assertAllowedTarget, isTargetNotAllowed } from '../../core/net/ssrf.ts';
import { checkPublishable } from './origin/asset-origin.ts';
import {
  findZone,
  hostnamesTaken,
  listZoneRows,
  monthlyBytes,
  monthStartUtc,
  publishedCounts,
  replaceHostnames,
} from './cdn.repo.ts';
import type { PurgeInput, Zone, ZoneCreate, ZoneUpdate } from './cdn.schemas.ts';
import { pushToEdges, type PurgeMessage } from './edge-contract/control.ts';
import {
  defaultSettings,
  isHostname,
  isReferrerPattern,
  parseIpRule,
  SETTING_KEYS,
  signToken,
  type ZoneSettings,
} from './edge-contract/zone-model.ts';

const iso = (ms: number) => new Date(ms).toISOString();

function toZone(row: CdnZonesTable, published: number, used: number): Zone {
  const s: ZoneSettings = { ...defaultSettings(), ...fromJson<Partial<ZoneSettings>>(row.settings, {}) };
  return {
    id: Number(row.id),
    name: row.name,
    dateModified: iso(row.updated_at),
    dateCreated: iso(row.created_at),
    deleted: false,
    storageUsed: 0,
    filesStored: published,
    region: row.region,
    replicationRegions: s.enableGeoReplication ? ['de', 'ny', 'la', 'sg'].filter((r) => r !== row.region) : [],
    enabled: row.enabled === 1,
    edgePathPrefix: `/${row.name}/`,
    monthlyBandwidthUsed: used,
    ...s,
  };
}

async function zonesOut(deps: Deps, rows: CdnZonesTable[]): Promise<Zone[]> {
  const ids = rows.map((r) => Number(r.id));
  const [published, used] = await Promise.all([
    publishedCounts(deps.db, ids),
    monthlyBytes(deps.db, ids, monthStartUtc(deps.clock.now())),
  ]);
  return rows.map((r) => toZone(r, published.get(Number(r.id)) ?? 0, used.get(Number(r.id)) ?? 0));
}

async function visibleZone(deps: Deps, principal: Principal, id: number): Promise<CdnZonesTable> {
  requireAction(principal, 'cdn.manage');
  const row = await findZone(deps.db, principal.orgId, id);
  if (!row) throw notFound('Pull zone');
  return row;
}

function hostOfUrl(value: string, field: string): string {
  let host = value.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(host)) {
    try {
      const u = new URL(host);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
      host = u.hostname;
    } catch {
      throw invalidField(field, 'must be an http(s) URL or a host name');
    }
  }
  host = host.toLowerCase().replace(/\.$/, '');
  if (!isHostname(host)) throw invalidField(field, `"${value}" is not a valid host name`);
  return host;
}

function uniqueLower(values: string[]): string[] {
  return [...new Set(values.map((v) => v.trim().toLowerCase()))];
}

/** Applies the given fields onto `base`, validating each; returns the new settings. */
async function applyFields(deps: Deps, base: ZoneSettings, input: ZoneUpdate): Promise<ZoneSettings> {
  const next: ZoneSettings = { ...base };
  const given = input as Record<string, unknown>;
  for (const key of SETTING_KEYS) {
    if (key === 'zoneSecurityKey') continue;
    if (given[key] !== undefined) (next as unknown as Record<string, unknown>)[key] = given[key];
  }
  if (input.hostnames !== undefined) {
    next.hostnames = uniqueLower(input.hostnames).map((h, i) => hostOfUrl(h, `body.hostnames[${i}]`));
  }
  if (input.url !== undefined) {
    const host = hostOfUrl(input.url, 'body.url');
    next.url = input.url;
    if (!next.hostnames.includes(host)) next.hostnames = [...next.hostnames, host];
  }
  if (input.originUrl !== undefined && input.originUrl !== null) {
    try {
      next.originUrl = (await assertAllowedTarget(input.originUrl, { allowPrivate: deps.config.allowPrivateTargets }))
        .toString()
        .replace(/\/+$/, '');
    } catch (error) {
      if (isTargetNotAllowed(error)) throw invalidField('body.originUrl', error.message);
      throw error;
    }
    if (input.originType === undefined) next.originType = 'url';
  }
  if (next.originType === 'url' && !next.originUrl)
    throw invalidField('body.originUrl', "is required when originType is 'url'");
  if (
    input.originHostHeader !== undefined &&
    input.originHostHeader !== null &&
    !isHostname(input.originHostHeader.toLowerCase().replace(/:\d+$/, ''))
  ) {
    throw invalidField('body.originHostHeader', 'must be a host name');
  }
  for (const field of ['allowedReferrers', 'blockedReferrers'] as const) {
    if (input[field] === undefined) continue;
    next[field] = uniqueLower(input[field]);
    next[field].forEach((v, i) => {
      if (!isReferrerPattern(v))
        throw invalidField(`body.${field}[${i}]`, `"${v}" is not a host name or *.domain pattern`);
    });
  }
  if (input.blockedIPs !== undefined) {
    next.blockedIPs = [...new Set(input.blockedIPs.map((v) => v.trim()))];
    next.blockedIPs.forEach((v, i) => {
      if (!parseIpRule(v)) throw invalidField(`body.blockedIPs[${i}]`, `"${v}" is not an IP address or CIDR range`);
    });
  }
  if (input.blockedCountries !== undefined) {
    next.blockedCountries = [...new Set(input.blockedCountries.map((v) => v.trim().toUpperCase()))];
    next.blockedCountries.forEach((v, i) => {
      if (!/^[A-Z]{2}$/.test(v))
        throw invalidField(`body.blockedCountries[${i}]`, `"${v}" is not a two-letter country code`);
    });
  }
  if (input.accessControlOriginHeaderExtensions !== undefined) {
    next.accessControlOriginHeaderExtensions = uniqueLower(input.accessControlOriginHeaderExtensions).map((v) =>
      v.replace(/^\./, ''),
    );
    next.accessControlOriginHeaderExtensions.forEach((v, i) => {
      if (!/^[a-z0-9]{1,16}$/.test(v))
        throw invalidField(`body.accessControlOriginHeaderExtensions[${i}]`, `"${v}" is not a file extension`);
    });
  }
  return next;
}

async function checkHostnames(deps: Deps, hostnames: string[], zoneId?: number): Promise<void> {
  const taken = await hostnamesTaken(deps.db, hostnames, zoneId);
  if (taken.length > 0)
    throw conflict(`Hostname already used by another pull zone: ${taken.join(', ')}`, 'body.hostnames');
}

export async function createZone(deps: Deps, principal: Principal, input: ZoneCreate): Promise<Zone> {
  requireAction(principal, 'cdn.manage');
  const base = defaultSettings();
  if (input.originUrl === undefined || input.originUrl === null) base.originType = 'assets';
  const settings = await applyFields(deps, base, input);
  await checkHostnames(deps, settings.hostnames);
  const now = deps.clock.now();
  for (let attempt = 0; ; attempt++) {
    const id = randomInt(10_000_000_000, 99_999_999_999);
    try {
      await deps.db.transaction().execute(async (trx) => {
        await trx
          .insertInto('cdn_zones')
          .values({
            id,
            org_id: principal.orgId,
            name: input.name,
            name_key: input.name.toLowerCase(),
            region: input.region ?? 'de',
            enabled: input.enabled === false ? 0 : 1,
            settings: toJson(settings),
            version: 1,
            created_at: now,
            updated_at: now,
          })
          .execute();
        await replaceHostnames(trx, principal.orgId, id, settings.hostnames);
      });
      await pushToEdges(deps.db, deps.keys, now, { reload: [id] });
      return (await zonesOut(deps, [(await findZone(deps.db, principal.orgId, id))!]))[0]!;
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const byName = await deps.db
        .selectFrom('cdn_zones')
        .select('id')
        .where('name_key', '=', input.name.toLowerCase())
        .executeTakeFirst();
      if (byName) throw conflict(`A pull zone named "${input.name}" already exists`, 'body.name');
      await checkHostnames(deps, settings.hostnames);
      if (attempt > 3) throw error;
    }
  }
}

export async function listZones(deps: Deps, principal: Principal): Promise<{ items: Zone[]; total: number }> {
  requireAction(principal, 'cdn.manage');
  const items = await zonesOut(deps, await listZoneRows(deps.db, principal.orgId));
  return { items, total: items.length };
}

export async function getZone(deps: Deps, principal: Principal, id: number): Promise<Zone> {
  return (await zonesOut(deps, [await visibleZone(deps, principal, id)]))[0]!;
}

export async function updateZone(deps: Deps, principal: Principal, id: number, input: ZoneUpdate): Promise<Zone> {
  const row = await visibleZone(deps, principal, id);
  const current: ZoneSettings = { ...defaultSettings(), ...fromJson<Partial<ZoneSettings>>(row.settings, {}) };
  const settings = await applyFields(deps, current, input);
  const hostsChanged = settings.hostnames.join(',') !== current.hostnames.join(',');
  if (hostsChanged) await checkHostnames(deps, settings.hostnames, id);
  const now = deps.clock.now();
  try {
    await deps.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('cdn_zones')
        .set({
          ...(input.name !== undefined ? { name: input.name, name_key: input.name.toLowerCase() } : {}),
          ...(input.region !== undefined ? { region: input.region } : {}),
          ...(input.enabled !== undefined ? { enabled: input.enabled ? 1 : 0 } : {}),
          settings: toJson(settings),
          version: row.version + 1,
          updated_at: Math.max(now, row.updated_at + 1),
        })
        .where('id', '=', id)
        .where('org_id', '=', principal.orgId)
        .execute();
      if (hostsChanged) await replaceHostnames(trx, principal.orgId, id, settings.hostnames);
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    if (input.name !== undefined) throw conflict(`A pull zone named "${input.name}" already exists`, 'body.name');
    throw conflict('Hostname already used by another pull zone', 'body.hostnames');
  }
  // Configuration that changes what may be served (origin, access rules) also empties edge caches
  // where cached bytes would now be wrong.
  const originChanged =
    settings.originUrl !== current.originUrl ||
    settings.originType !== current.originType ||
    settings.originHostHeader !== current.originHostHeader ||
    settings.optimizerEnabled !== current.optimizerEnabled ||
    settings.optimizerImageQuality !== current.optimizerImageQuality ||
    settings.optimizerMaxWidth !== current.optimizerMaxWidth ||
    settings.optimizerMinifyCSS !== current.optimizerMinifyCSS ||
    settings.optimizerMinifyJavaScript !== current.optimizerMinifyJavaScript ||
    settings.ignoreQueryStrings !== current.ignoreQueryStrings;
  const purges = originChanged ? [await recordPurge(deps, principal.orgId, id, 'all', '*')] : [];
  await pushToEdges(deps.db, deps.keys, now, { reload: [id], purges });
  return getZone(deps, principal, id);
}

export async function deleteZone(deps: Deps, principal: Principal, id: number): Promise<void> {
  await visibleZone(deps, principal, id);
  const purge = await recordPurge(deps, principal.orgId, id, 'all', '*');
  await deps.db.deleteFrom('cdn_zones').where('id', '=', id).where('org_id', '=', principal.orgId).execute();
  await pushToEdges(deps.db, deps.keys, deps.clock.now(), { reload: [id], purges: [purge] });
}

/** Reference PATCH /cdn/configure: the zone named by `id`, or the organization's only zone. */
export async function configurePatch(
  deps: Deps,
  principal: Principal,
  input: ZoneUpdate & { id?: number },
): Promise<void> {
  requireAction(principal, 'cdn.manage');
  const { id, ...fields } = input;
  const zoneId = id ?? (await soleZone(deps, principal, () => true));
  await updateZone(deps, principal, zoneId, fields);
}

async function soleZone(deps: Deps, principal: Principal, filter: (s: ZoneSettings) => boolean): Promise<number> {
  const rows = (await listZoneRows(deps.db, principal.orgId)).filter((r) =>
    filter({ ...defaultSettings(), ...fromJson<Partial<ZoneSettings>>(r.settings, {}) }),
  );
  if (rows.length === 0) throw notFound('Pull zone');
  if (rows.length > 1) throw invalidField('body.id', 'the organization has several pull zones: name one by its id');
  return Number(rows[0]!.id);
}

// --- publishing assets (reference POST /cdn/publish, /cdn/unpublish) ---

export async function publishAssets(
  deps: Deps,
  principal: Principal,
  input: { assets: string[]; pullZoneId?: number },
  publish: boolean,
): Promise<{ success: boolean }> {
  requireAction(principal, publish ? 'cdn.publish' : 'cdn.manage');
  const zoneId = input.pullZoneId ?? (await soleZone(deps, principal, (s) => s.originType === 'assets'));
  const row = await visibleZone(deps, principal, zoneId);
  let ids = [...new Set(input.assets.map((a) => a.toLowerCase()))];
  const now = deps.clock.now();
  if (publish) {
    if (row.enabled !== 1)
      throw new AppError('conflict', 'The pull zone is disabled: publishing is blocked (unpublishing still works)');
    ids = await checkPublishable(deps, principal, ids);
    for (let i = 0; i < ids.length; i += 500) {
      await deps.db
        .insertInto('cdn_published_assets')
        .values(
          ids
            .slice(i, i + 500)
            .map((asset_id) => ({ zone_id: zoneId, asset_id, org_id: principal.orgId, published_at: now })),
        )
        .onConflict((oc) => oc.columns(['zone_id', 'asset_id']).doNothing())
        .execute();
    }
    return { success: true };
  }
  for (let i = 0; i < ids.length; i += 500) {
    await deps.db
      .deleteFrom('cdn_published_assets')
      .where('zone_id', '=', zoneId)
      .where('asset_id', 'in', ids.slice(i, i + 500))
      .execute();
  }
  const purges = await Promise.all(ids.map((asset) => recordPurge(deps, principal.orgId, zoneId, 'asset', asset)));
  await pushToEdges(deps.db, deps.keys, now, { purges });
  return { success: true };
}

// --- purge ---

async function recordPurge(
  deps: Deps,
  orgId: string,
  zoneId: number,
  kind: PurgeMessage['kind'],
  value: string,
): Promise<PurgeMessage> {
  const now = deps.clock.now();
  const id = newId(now);
  await deps.db
    .insertInto('cdn_purges')
    .values({ id, zone_id: zoneId, org_id: orgId, kind, value, created_at: Date.now() })
    .execute();
  return { id, zoneId, kind, value };
}

/** The path inside the zone that a purge URL names (see docs/cdn.md). */
export function zonePath(value: string, zone: { name: string; hostnames: string[] }): string {
  let path = value.trim();
  if (/^https?:\/\//i.test(path)) {
    const u = new URL(path);
    path = `${u.pathname}${u.search}`;
    if (zone.hostnames.includes(u.hostname.toLowerCase())) return path;
  }
  if (!path.startsWith('/')) path = `/${path}`;
  const prefix = `/${zone.name}/`;
  if (path.toLowerCase().startsWith(prefix.toLowerCase())) path = path.slice(prefix.length - 1);
  return path;
}

export async function purgeZone(
  deps: Deps,
  principal: Principal,
  id: number,
  input: PurgeInput,
): Promise<{ id: string; kind: string; value: string; edges: number; unreachableEdges: number }> {
  const row = await visibleZone(deps, principal, id);
  const given = (['url', 'prefix', 'tag', 'everything'] as const).filter(
    (k) => input[k] !== undefined && input[k] !== false,
  );
  if (given.length !== 1) throw invalidField('body', 'give exactly one of url, prefix, tag or everything: true');
  const settings = { ...defaultSettings(), ...fromJson<Partial<ZoneSettings>>(row.settings, {}) };
  const zone = { name: row.name, hostnames: settings.hostnames };
  let kind: PurgeMessage['kind'];
  let value: string;
  if (input.everything) {
    kind = 'all';
    value = '*';
  } else if (input.tag !== undefined) {
    kind = 'tag';
    value = input.tag.trim();
  } else {
    const raw = (input.url ?? input.prefix)!;
    try {
      value = zonePath(raw.endsWith('*') ? raw.slice(0, -1) : raw, zone);
    } catch {
      throw invalidField(input.url !== undefined ? 'body.url' : 'body.prefix', 'is not a valid URL or path');
    }
    kind = input.prefix !== undefined || raw.endsWith('*') ? 'prefix' : 'url';
  }
  const purge = await recordPurge(deps, principal.orgId, id, kind, value);
  const pushed = await pushToEdges(deps.db, deps.keys, deps.clock.now(), { purges: [purge] });
  return { id: purge.id, kind, value, edges: pushed.acked, unreachableEdges: pushed.failed };
}

// --- signed URLs ---

export async function signUrl(
  deps: Deps,
  principal: Principal,
  id: number,
  input: { path: string; expiresInSeconds?: number; ip?: string },
) {
  const row = await visibleZone(deps, principal, id);
  const s = { ...defaultSettings(), ...fromJson<Partial<ZoneSettings>>(row.settings, {}) };
  const expires = Math.floor(deps.clock.now() / 1000) + (input.expiresInSeconds ?? 3600);
  if (s.zoneSecurityIncludeHashRemoteIP && !input.ip)
    throw invalidField('body.ip', 'is required: the zone binds signed URLs to the client IP');
  const token = signToken(
    s.zoneSecurityKey,
    input.path,
    expires,
    s.zoneSecurityIncludeHashRemoteIP ? input.ip : undefined,
  );
  const base = s.hostnames[0] ? `https://${s.hostnames[0]}` : `/${row.name}`;
  return { path: input.path, token, expires, url: `${base}${input.path}?token=${token}&expires=${expires}` };
}

export async function listEdges(deps: Deps, principal: Principal) {
  requireAction(principal, 'cdn.manage');
  const rows = await deps.db.selectFrom('cdn_edges').selectAll().orderBy('started_at').execute();
  // Every edge serves every zone, this organization's included, so each organization sees them all,
  // but only what a zone owner needs (region, liveness): never the internal control addresses.
  return rows.map((r) => ({
    id: r.id,
    region: r.region,
    startedAt: iso(r.started_at),
    lastSeenAt: iso(r.last_seen_at),
  }));
}
