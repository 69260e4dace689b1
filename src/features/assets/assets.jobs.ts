import type { Deps } from '../../deps.ts';
import type { HandlersFor } from '../../core/jobs/catalog.ts';
import { ACTION_OBJECT_JOB } from '../metadata/index.ts';
import { actionObjectJobHandler } from './bulk/action-objects.ts';
import {
  type BULK_EDIT_ACTION,
  bulkJobHandlers,
  type PURGE_ACTION,
  type REGENERATE_ACTION,
} from './bulk/bulk.service.ts';
import { MAIL_JOB, sendQueuedMail } from './share/mail-outbox.ts';
import { runRenditions } from './renditions/job/renditions.ts';
import { EMBEDDED_JOB, runEmbeddedMetadata } from './embedded/apply-embedded.ts';
import { runVisualBackfill, VISUAL_BACKFILL_JOB } from './renditions/visual-summary/backfill.ts';
import { actionJobHandler } from '../actions/index.ts';
import {
  TRANSFORM_ACTION,
  TRANSFORM_CLEANUP_JOB,
  transformCleanup,
  transformWork,
} from './transform/transform.service.ts';
import { rightsJobHandlers, type RIGHTS_SWEEP_JOB } from './rights/rights.ts';
import {
  RENDITIONS_JOB,
  type UPLOAD_EXPIRE_JOB,
  type UPLOAD_WATCH_JOB,
  uploadJobHandlers,
} from './upload/uploads.service.ts';

type AssetJob =
  | typeof RENDITIONS_JOB
  | typeof UPLOAD_WATCH_JOB
  | typeof UPLOAD_EXPIRE_JOB
  | typeof MAIL_JOB
  | typeof ACTION_OBJECT_JOB
  | typeof EMBEDDED_JOB
  | typeof VISUAL_BACKFILL_JOB
  | typeof BULK_EDIT_ACTION
  | typeof PURGE_ACTION
  | typeof REGENERATE_ACTION
  | typeof TRANSFORM_ACTION
  | typeof TRANSFORM_CLEANUP_JOB
  | typeof RIGHTS_SWEEP_JOB;

/** The assets feature's jobs (payloads in core/jobs/catalog.ts), for src/workers.ts. */
export function assetJobHandlers(deps: Deps): HandlersFor<AssetJob> {
  return {
    // Presigned uploads: completed when their bytes arrive, discarded when they expire.
    ...uploadJobHandlers(deps),
    // Actions: bulk edit, purge from the recycle bin, regenerate renditions.
    ...bulkJobHandlers(deps),
    // After content arrives or changes (uploads, previews, regeneration).
    [RENDITIONS_JOB]: (job) => runRenditions(deps, job.payload, job.signal),
    // Embedded IPTC, XMP and EXIF fields onto the attributes that read them (new content).
    [EMBEDDED_JOB]: (job) => runEmbeddedMetadata(deps, job.payload),
    // Placeholders and perceptual hashes for assets rendered before they existed.
    [VISUAL_BACKFILL_JOB]: (job) => runVisualBackfill(deps, job.payload),
    // Named by metadata (an action-type template changed); assets store its Action object.
    [ACTION_OBJECT_JOB]: actionObjectJobHandler(deps),
    // The outbox's mails (collection shares).
    [MAIL_JOB]: (job) => sendQueuedMail(deps, job),
    // POST /v1/asset/transform: make the files, link and mail them; remove them when the links expire.
    [TRANSFORM_ACTION]: actionJobHandler(deps, (ctx) => transformWork(deps, ctx)),
    [TRANSFORM_CLEANUP_JOB]: (job) => transformCleanup(deps, job.payload),
    // Hourly: usage rights that expired are announced once each (rm.agreement.expired).
    ...rightsJobHandlers(deps),
  };
}
