import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { assetRoutes } from './assets.routes.ts';
import { contentRoutes } from './download/download.routes.ts';
import { rightsRoutes } from './rights/rights.routes.ts';
import { relationRoutes } from './relations/relations.routes.ts';
import { bulkRoutes } from './bulk/bulk.routes.ts';
import { shareRoutes } from './share/share.routes.ts';
import { renditionRoutes } from './renditions/renditions.routes.ts';
import { uploadFormRoutes } from './upload/upload-form.routes.ts';
import { recycleBinRoutes } from './recycle-bin/recycle-bin.routes.ts';
import { renditionLinkRoutes } from './download/rendition-links.ts';
import { transformRoutes } from './transform/transform.routes.ts';
import { similarRoutes } from './similar/similar.routes.ts';
import { deliveryRoutes } from './delivery/delivery.routes.ts';
export { asksForDelivery, deliverPublished } from './delivery/deliver.service.ts';
export type { Servable } from './download/serve.ts';

export { loadAsset, callerPermissions, requirePermissions, assetNotFound, type AccessibleAsset } from './access.ts';
export {
  findAsset,
  securityOf,
  assetsForIndexing,
  type AssetToIndex,
  existingAssetIds,
  liveAssetIds,
  objectIdsByAnyId,
  servedContentOf,
  type AssetRow,
  type AssetWithOrg,
  type AssetSecurity,
} from './assets.repo.ts';
export { createAsset, updateAsset, type CreateAssetInput } from './assets.service.ts';
export { firstVersionRow } from './new-row.ts';
export {
  checkShareMailLimits,
  shareMailsLastHour,
  queueMail,
  mailStatus,
  MAIL_JOB,
  type OutgoingMail,
} from './share/mail-outbox.ts';
export { receiveSingle } from './upload/uploads.service.ts';
export { insertLink } from './relations/links.service.ts';
export {
  hiddenOf,
  presentLegacy,
  presentSimplified,
  renditionUrls,
  storedRenditions,
  type StoredRendition,
} from './views/present.ts';
// For features that hand out stored bytes by mail and signed link (collection share).
export { mailConfigured, type MailMessage } from './share/mail.ts';
export { shareSourcesByFileId, type ShareSource } from './share/share-sources.ts';
export { signPath, verifySignedPath } from './upload/signed-urls.ts';
export { serveBlob } from './download/serve.ts';
export { SignedQuery, ActionObjectSchema, AssetRecordSchema } from './assets.schemas.ts';
// Hooks the composition roots hand to other features: Action objects to actions (src/app.ts),
// template usage and metadata apply to metadata (src/app.ts, src/workers.ts).
export { readActionObject } from './bulk/action-objects.ts';
export { assetTemplateUsage, applyMetadataToAssets } from './bulk/bulk.service.ts';
export { createAssetRuntime, type AssetRuntime } from './runtime.ts';
export { assetJobHandlers } from './assets.jobs.ts';
export { scheduleRightsSweep, sweepExpiredRights, rightsOf, type Rights } from './rights/rights.ts';
export { backfillVisualSummaries, scheduleVisualBackfill } from './renditions/visual-summary/backfill.ts';
export {
  exemptPrincipal,
  outOfRights,
  refusalAmong,
  refusalOutOfRights,
  rightsGate,
  rightsRefusal,
  serveWatermarked,
  UNGATED_RENDITIONS,
} from './rights/gate.ts';
export { resumePendingRenditions, startPendingRenditionSweep } from './renditions/job/resume-pending.ts';

export function assetsRoutes(app: App, deps: Deps): void {
  assetRoutes(app, deps);
  contentRoutes(app, deps);
  renditionLinkRoutes(app, deps);
  relationRoutes(app, deps);
  bulkRoutes(app, deps);
  shareRoutes(app, deps);
  renditionRoutes(app, deps);
  uploadFormRoutes(app, deps);
  recycleBinRoutes(app, deps);
  transformRoutes(app, deps);
  similarRoutes(app, deps);
  deliveryRoutes(app, deps);
  rightsRoutes(app, deps);
}
