import type { App } from '../../core/http/app-types.ts';
import { principalOf } from '../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../core/http/responses.ts';
import type { Deps } from '../../deps.ts';
import { QuotasSchema, QuotaUpdateSchema } from './quotas.schemas.ts';
import { getQuotas, updateQuotas, type ShareMailUsage } from './quotas.service.ts';

const tags = ['quotas'];

/** Quotas and limits (docs/quotas.md). Mounted under /v1. */
export function quotaRoutes(app: App, deps: Deps, hooks: { shareMailUsage: ShareMailUsage }): void {
  app.get(
    '/quotas',
    {
      schema: {
        operationId: 'GetOrganizationQuotas',
        tags,
        summary:
          "The organization's quotas and limits: each one's limit, whether it is the organization's own or the server default, and the current use (bytes, assets, per-user uploads and per-key requests in the current window, share mails in the last hour)",
        response: { 200: QuotasSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 'forbidden') },
      },
    },
    async (request) => getQuotas(deps, principalOf(request), hooks.shareMailUsage),
  );

  app.patch(
    '/quotas',
    {
      schema: {
        operationId: 'UpdateOrganizationQuotas',
        tags,
        summary:
          "Sets the organization's quotas (Quota Management): each field a limit, 0 for none, or null for the server default; fields left out stay as they are. A quota set below current use refuses what would add to it, and removes nothing",
        body: QuotaUpdateSchema,
        response: { 200: QuotasSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden') },
      },
    },
    async (request) => updateQuotas(deps, principalOf(request), request.body, hooks.shareMailUsage),
  );
}
