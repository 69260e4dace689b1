import { reserveHoldings } from '../../quotas/index.ts';
import type { Deps } from '../../../deps.ts';
import { requireAction } from '../../../core/authz/permissions.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { insertRows } from '../../../core/db/insert-rows.ts';
import { publishEvents } from '../../../core/events/index.ts';
import { AppError, invalidField, type ErrorDetail } from '../../../core/http/errors.ts';
import { isUuid } from '../../../core/ids.ts';
import type { CompiledTemplate } from '../../metadata/index.ts';
import type { AssetRow } from '../assets.repo.ts';
import {
  assetCreatedEvent,
  checkTemplatesNamed,
  MISSING_METADATA_TEMPLATE,
  newAssetRow,
  type CreateAssetInput,
} from '../assets.service.ts';
import { prepareCreate, templateForWrite } from '../metadata-seam/metadata-seam.ts';

/** Items per POST /v1/assets/bulk. */
export const BULK_CREATE_MAX = 1000;

type NamedTemplates = Awaited<ReturnType<typeof checkTemplatesNamed>>;

/**
 * What one request has already checked: each distinct metadata template is loaded (and its use by
 * the caller checked) once, each distinct set of security templates is looked up once. Only
 * successes are kept, so every failing item gets its own error naming its own path.
 */
class RequestLookups {
  private readonly metadataTemplates = new Map<string, CompiledTemplate>();
  private readonly securityTemplates = new Map<string, NamedTemplates>();
  private readonly deps: Deps;
  private readonly principal: Principal;
  constructor(deps: Deps, principal: Principal) {
    this.deps = deps;
    this.principal = principal;
  }

  async metadataTemplate(id: string, field: string): Promise<CompiledTemplate> {
    const key = id.toLowerCase();
    let t = this.metadataTemplates.get(key);
    if (!t) this.metadataTemplates.set(key, (t = await templateForWrite(this.deps.db, this.principal, id, field)));
    return t;
  }

  async securityTemplateSet(ids: readonly string[], field: string): Promise<NamedTemplates> {
    const key = ids.map((id) => id.toLowerCase()).join(',');
    let named = this.securityTemplates.get(key);
    if (!named)
      this.securityTemplates.set(
        key,
        (named = await checkTemplatesNamed(this.deps.db, this.principal.orgId, ids, field)),
      );
    return named;
  }
}

interface PreparedItem {
  row: AssetRow;
  templates: NamedTemplates;
}

/**
 * One item: the checks of a new metadata-only asset in createAsset (same functions, same order),
 * with every error naming `body.assets.<i>…`. Bulk creates new metadata-only assets only: items that
 * would need content (a filename), federated content or a new version are refused.
 */
async function prepareItem(
  principal: Principal,
  lookups: RequestLookups,
  input: CreateAssetInput,
  path: string,
  now: number,
): Promise<PreparedItem> {
  if (input.filename !== undefined)
    throw invalidField(
      `${path}.filename`,
      'bulk creation is metadata-only: an asset with content (filename) needs an upload; create it with POST /v1/assets/asset',
    );
  if (input.contentPath !== undefined)
    throw invalidField(
      `${path}.contentPath`,
      'bulk creation is metadata-only: create federated assets with POST /v1/assets/asset',
    );
  if (input.originalFileId !== undefined)
    throw invalidField(
      `${path}.originalFileId`,
      'bulk creation makes new assets only: add versions with POST /v1/assets/asset',
    );
  const templateId = input.metadataTemplateId ?? null;
  if (templateId === null) throw invalidField(`${path}.metadataTemplateId`, MISSING_METADATA_TEMPLATE);
  if (!isUuid(templateId)) throw invalidField(`${path}.metadataTemplateId`, 'must be a UUID');
  const templates = await lookups.securityTemplateSet(input.securityTemplateIds ?? [], `${path}.securityTemplateIds`);
  const template = await lookups.metadataTemplate(templateId, `${path}.metadataTemplateId`);
  const metadata = prepareCreate(principal, template, input.metadata ?? [], `${path}.metadata`);
  return {
    row: newAssetRow(principal, now, { expectsContent: false, federated: false, templateId, metadata }),
    templates,
  };
}

/**
 * POST /v1/assets/bulk: 1–1000 metadata-only assets, all or nothing. Every item is checked first
 * and every problem reported at once (400, nothing created); otherwise all rows, their security
 * grants and one `asset.created` event per asset are written in one transaction with multi-row
 * inserts. Returns the rows in request order.
 */
export async function createAssetsBulk(
  deps: Deps,
  principal: Principal,
  inputs: readonly CreateAssetInput[],
): Promise<AssetRow[]> {
  requireAction(principal, 'asset.create');
  if (inputs.length === 0) throw invalidField('body.assets', 'send 1 to 1000 assets');
  if (inputs.length > BULK_CREATE_MAX)
    throw invalidField('body.assets', `at most ${BULK_CREATE_MAX} assets per request`);
  const now = deps.clock.now();
  const lookups = new RequestLookups(deps, principal);
  const prepared: PreparedItem[] = [];
  const problems: ErrorDetail[] = [];
  let failed = 0;
  for (let i = 0; i < inputs.length; i++) {
    try {
      prepared.push(await prepareItem(principal, lookups, inputs[i]!, `body.assets.${i}`, now));
    } catch (error) {
      // Only validation failures are per item; anything else (a 403, the database) ends the request.
      if (!(error instanceof AppError) || error.code !== 'validation_failed') throw error;
      failed++;
      problems.push(...(error.details ?? [{ field: `body.assets.${i}`, message: error.message }]));
    }
  }
  if (failed > 0) {
    const first = problems[0]!;
    throw new AppError(
      'validation_failed',
      `${failed} of ${inputs.length} assets are invalid; nothing was created. First: ${first.field}: ${first.message}`,
      { details: problems },
    );
  }
  // The audit rows (one per asset, from the events) are sealed as they are inserted, not by a
  // second write of each after commit (decision 0039): they go in last, under the chain head's lock.
  const sealAudit = await deps.runtime.assets.auditSealer();
  await deps.db.transaction().execute(async (trx) => {
    // All or nothing against the asset quota too (features/quotas).
    await reserveHoldings(trx, deps.config, principal.orgId, now, { assets: prepared.length });
    await insertRows(
      trx,
      'assets',
      prepared.map((p) => p.row),
    );
    await insertRows(
      trx,
      'asset_security',
      prepared.flatMap((p) =>
        p.templates.ids.map((template_id) => ({ org_id: p.row.org_id, asset_id: p.row.id, template_id })),
      ),
    );
    await publishEvents(
      trx,
      now,
      prepared.map((p) => assetCreatedEvent(principal, p.row, p.templates.named)),
      sealAudit,
    );
  });
  return prepared.map((p) => p.row);
}
