import type { FastifyReply } from 'fastify';
import type { Principal } from '../../../core/authz/principal.ts';
import { createRevisionCache, type RevisionCache } from '../../../core/db/revision-cache.ts';
import type { Deps } from '../../../deps.ts';
import { templateAccess, type CompiledTemplate, type TemplateAccess } from '../../metadata/index.ts';
import { assetNotFound, assetVisibleTo } from '../access.ts';
import { findAsset, securityOf, type AssetSecurity, type AssetWithOrg } from '../assets.repo.ts';
import { templateOf } from '../metadata-seam/metadata-seam.ts';

/**
 * Asset views: what GET /v1/asset/{id} and GET /v1/assets/asset/{id} answer, kept in memory per
 * (organization, objectId or fileId). Neither answer depends on the caller once the caller may view
 * the asset, so a view holds the asset row, its security (what the per-request permission check
 * reads) and its metadata template, plus each response body once serialized: a hit costs a map
 * lookup, the view check and a write of the stored string.
 *
 * Exact, like the principal cache: a view is served only while neither the content revision (asset
 * rows, their templates and grants, metadata definitions) nor the identity revision (template
 * names and grants, groups, the organization) has moved since it was loaded (core/db/revision.ts).
 * On this instance a write moves it before the writing call returns; other instances follow within
 * a second (PostgreSQL: milliseconds). A load that raced with a change is answered but not kept.
 * Invisible and missing assets are never cached.
 */
export class AssetView {
  readonly asset: AssetWithOrg;
  readonly security: AssetSecurity;
  readonly template: CompiledTemplate | undefined;
  /** Who the metadata template is open to (its access templates change server_state: the view goes stale). */
  readonly access: TemplateAccess;
  private readonly bodies = new Map<string, string>();

  constructor(
    asset: AssetWithOrg,
    security: AssetSecurity,
    template: CompiledTemplate | undefined,
    access: TemplateAccess,
  ) {
    this.asset = asset;
    this.security = security;
    this.template = template;
    this.access = access;
  }

  /** The security templates with their names (the simplified shape), from the security query. */
  get securityTemplates(): { id: string; name: string }[] {
    return this.security.templateIds.map((id) => ({ id, name: this.security.names?.get(id) ?? '' }));
  }

  /**
   * The response body `key` names (route and options), made once by `make` (the route's own
   * serializer, so the bytes are those Fastify would send) and reused while the view is current.
   */
  body(key: string, make: () => string): string {
    let body = this.bodies.get(key);
    if (body === undefined) {
      body = make();
      this.bodies.set(key, body);
    }
    return body;
  }
}

/** Views kept per process; the byte bound keeps a few huge metadata documents from crowding memory. */
const MAX_VIEWS = 10_000;
const MAX_BYTES = 32 * 1024 * 1024;

/** Roughly what a view keeps: the row's text (twice: parsed and in up to a few serialized bodies) and a fixed part. */
function weigh(view: AssetView): number {
  const a = view.asset;
  return (
    2048 + 4 * (a.metadata.length + a.metadata_denormalized.length + a.technical_metadata.length + a.renditions.length)
  );
}

/** The per-process cache of asset views (held by the runtime: deps.runtime.assets.views). */
export function createAssetViewCache(deps: Deps): RevisionCache<AssetView> {
  return createRevisionCache<AssetView>(deps, MAX_VIEWS, { revision: 'content', maxWeight: MAX_BYTES, weigh });
}

export function assetViews(deps: Deps): RevisionCache<AssetView> {
  return deps.runtime.assets.views;
}

async function loadView(
  deps: Deps,
  orgId: string,
  id: string,
): Promise<{ value: AssetView; validUntil: number } | null> {
  const asset = await findAsset(deps.db, orgId, id);
  if (!asset) return null;
  const security = (await securityOf(deps.db, orgId, [asset.id])).get(asset.id)!;
  const [template, access] = await Promise.all([
    templateOf(deps.db, orgId, asset.metadata_template_id),
    templateAccess(deps.db, orgId, asset.metadata_template_id),
  ]);
  return { value: new AssetView(asset, security, template, access), validUntil: Infinity };
}

/**
 * The cached view of an asset, synchronously (a hit then costs the route no promise): undefined when
 * none is current (call viewAsset), 404 when the caller may not view it, exactly as viewAsset.
 */
function cachedAssetView(deps: Deps, principal: Principal, id: string): AssetView | undefined {
  const view = assetViews(deps).peek(`${principal.orgId}\u0000${id}`);
  if (view !== undefined && !assetVisibleTo(principal, view.security, view.access)) throw assetNotFound();
  return view;
}

/** The view of an asset the caller may view (objectId or fileId); 404 when missing or invisible, as loadAsset. */
async function viewAsset(deps: Deps, principal: Principal, id: string): Promise<AssetView> {
  const view = await assetViews(deps).get(`${principal.orgId}\u0000${id}`, () => loadView(deps, principal.orgId, id));
  if (view === null || !assetVisibleTo(principal, view.security, view.access)) throw assetNotFound();
  return view;
}

/**
 * Calls `send` with the view of an asset the caller may view: at once (nothing returned: the reply
 * is sent) when a current view is cached, so a hit costs the route no promise; else once it is
 * loaded, and the promise settles when the answer is written (the reply is a thenable), so Fastify
 * never sends a second, empty answer while the first is on its way. 404 as viewAsset.
 */
export function withAssetView(
  deps: Deps,
  principal: Principal,
  id: string,
  send: (view: AssetView) => FastifyReply,
): Promise<void> | undefined {
  const cached = cachedAssetView(deps, principal, id);
  if (cached === undefined)
    return viewAsset(deps, principal, id).then(async (view) => {
      await send(view);
    });
  send(cached);
  return undefined;
}
