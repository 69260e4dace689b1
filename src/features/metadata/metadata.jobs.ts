import type { Deps } from '../../deps.ts';
import type { HandlersFor } from '../../core/jobs/catalog.ts';
import { APPLY_ACTION, applyChangesJob } from './apply/apply.service.ts';
import type { MetadataJobHooks } from './hooks.ts';

/**
 * The metadata feature's jobs (payloads in core/jobs/catalog.ts), for src/workers.ts, which hands
 * in the apply handlers of the features that store metadata. ACTION_OBJECT_JOB is named here
 * (definitions/templates/template-types.ts) but run by the assets feature, which stores Action objects.
 */
export function metadataJobHandlers(deps: Deps, hooks: MetadataJobHooks): HandlersFor<typeof APPLY_ACTION> {
  return {
    // POST /v1/metadata/apply.
    [APPLY_ACTION]: applyChangesJob(deps, hooks),
  };
}
