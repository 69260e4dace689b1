import { Type, type Static, type TSchema } from 'typebox';
import type { Compile } from 'typebox/compile';
import type { ClaimedJob } from './worker.ts';

/**
 * Every background job Tessera runs: its name, what it does and the JSON Schema of its payload.
 * `enqueueJob` and the handlers are both typed by this table (as events are by
 * core/events/catalog.ts), so a payload that does not match its job does not compile, and the
 * worker checks each claimed payload against the same schema before its handler sees it (a
 * payload that cannot match is a dead job, not a crash in a handler). Each feature names its jobs
 * and handles them in its `<feature>.jobs.ts`; src/workers.ts assembles the handlers, and must
 * have one for every entry here (its type says so; test/job-catalog.test.ts checks it too).
 */
const Id = Type.String({ minLength: 1 });
/** What createAction (features/actions) enqueues for every Action: the work reads its input from the actions row. */
const ActionRef = Type.Object({ actionId: Id });

export const JOB_CATALOG = {
  'audit.prune': {
    description:
      "Deletes audit rows older than TESSERA_AUDIT_RETENTION_DAYS and re-anchors each organization's chain (daily)",
    payload: Type.Null(),
  },
  'rights.expiry_sweep': {
    description:
      'Announces every usage right that expired and was not announced yet: one rm.agreement.expired per asset and expiry date (hourly)',
    payload: Type.Null(),
  },
  'auth.cleanup': {
    description: 'Deletes ended sessions, old authorization codes and stale failure counters (at most hourly)',
    payload: Type.Null(),
  },
  'assets.renditions': {
    description: 'Renders the renditions (thumbnail, previews) of an asset whose content arrived or changed',
    payload: Type.Object({
      assetId: Id,
      /** A replacement preview (POST /v1/asset/content/preview) to render imagePreview from. */
      previewKey: Type.Optional(Type.String()),
      force: Type.Optional(Type.Boolean()),
    }),
  },
  'assets.embedded_metadata': {
    description:
      'Reads the IPTC, XMP and EXIF fields embedded in new content onto the metadata attributes that declare them',
    payload: Type.Object({
      assetId: Id,
      /** Replace values already set (a version upload that asked for it); otherwise only empty attributes are filled. */
      overwrite: Type.Optional(Type.Boolean()),
    }),
  },
  'assets.visual_backfill': {
    description:
      'Fills the placeholder and perceptual hash of assets rendered before they existed, from their stored thumbnails (enqueued at start when any lacks them)',
    payload: Type.Object({
      /** Where the previous job of the chain stopped (asset ids in order). */
      after: Type.Optional(Type.String()),
    }),
  },
  'assets.upload.watch': {
    description: 'Watches a presigned upload until its bytes arrive in the store, then completes it',
    payload: Type.Object({ uploadId: Id }),
  },
  'assets.upload.expire': {
    description: 'Discards an upload that was never completed once it expires',
    payload: Type.Object({ uploadId: Id }),
  },
  'mail.send': {
    description: 'One delivery attempt of one outbox mail (collection shares)',
    payload: Type.Object({ mailId: Id }),
  },
  'metadata.template.action_object': {
    description: 'Creates, updates or retires the Action object (an asset) of an action-type metadata template',
    payload: Type.Object({
      templateId: Id,
      /** Sent when the template was deleted: the object to retire. */
      actionObjectId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    }),
  },
  'assets.transform_cleanup': {
    description: "Deletes a transformation's files once their links expire",
    payload: Type.Object({ actionId: Type.String() }),
  },
  'collections.share_cleanup': {
    description: "Deletes a collection share's packaged files once its links expire",
    payload: Type.Object({ shareId: Type.String() }),
  },
  // Actions (GET /v1/action/{id}): each is a job whose payload names its actions row.
  'metadata.apply': {
    description: 'Action: hands pending metadata definition changes to every feature that stores metadata',
    payload: ActionRef,
  },
  'assets.bulk_edit': { description: 'Action: applies one metadata/security edit to many assets', payload: ActionRef },
  'assets.purge': { description: 'Action: permanently deletes assets from the recycle bin', payload: ActionRef },
  'assets.regenerate_renditions': {
    description: 'Action: renders the renditions of many assets again',
    payload: ActionRef,
  },
  'collections.share': { description: 'Action: packages a collection and mails its share links', payload: ActionRef },
  'assets.transform': {
    description: 'Action: makes transformed copies of assets (POST /v1/asset/transform), links and mails them',
    payload: ActionRef,
  },
} as const satisfies Record<string, { description: string; payload: TSchema }>;

export type JobType = keyof typeof JOB_CATALOG;
export type JobPayload<T extends JobType> = Static<(typeof JOB_CATALOG)[T]['payload']>;

/** The job types whose payload is `{ actionId }`: Actions, run by features/actions' actionJobHandler. */
export type ActionJobType = { [T in JobType]: JobPayload<T> extends { actionId: string } ? T : never }[JobType];

/** A claimed job of type T, its payload checked against the catalog. */
export interface Job<T extends JobType> extends ClaimedJob {
  readonly type: T;
  readonly payload: JobPayload<T>;
}

export type TypedJobHandler<T extends JobType> = (job: Job<T>) => Promise<void>;

/** Some of the handlers (the worker's handler table, tests that run only some jobs). */
export type JobHandlers = { readonly [T in JobType]?: TypedJobHandler<T> };

/** Every job's handler: what src/workers.ts assembles (a missing one does not compile). */
export type AllJobHandlers = HandlersFor<JobType>;

const checks = new Map<string, ReturnType<typeof Compile>>();

/**
 * Null when `payload` fits the catalog entry of `type` (or `type` is not in the catalog: the
 * worker's own tests run ad-hoc types), else what is wrong with it. Compiled once per type; the
 * compiler is loaded with the first job, not at start (test/lean-start.test.ts).
 */
export async function payloadProblem(type: string, payload: unknown): Promise<string | null> {
  if (!Object.hasOwn(JOB_CATALOG, type)) return null;
  let check = checks.get(type);
  if (!check) {
    const { Compile: compile } = await import('typebox/compile');
    checks.set(type, (check = compile(JOB_CATALOG[type as JobType].payload)));
  }
  if (check.Check(payload)) return null;
  const first = check.Errors(payload)[0];
  return first ? `${first.instancePath || '/'} ${first.message}` : 'does not match its schema';
}

/** The handlers of the jobs T, every one present: what a feature's `<feature>.jobs.ts` returns for its jobs. */
export type HandlersFor<T extends JobType> = { readonly [K in T]: TypedJobHandler<K> };
