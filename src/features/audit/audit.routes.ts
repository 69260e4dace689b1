import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { App } from '../../core/http/app-types.ts';
import { principalOf } from '../../core/http/authenticate.ts';
import { contentDisposition } from '../../core/http/content-disposition.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../core/http/responses.ts';
import { requireAction } from '../../core/authz/permissions.ts';
import type { Deps } from '../../deps.ts';
import {
  AuditEntrySchema,
  AuditExportQuerySchema,
  AuditPageSchema,
  AuditQuerySchema,
  HistoryQuerySchema,
  VerifyReportSchema,
} from './audit.schemas.ts';
import { assetHistory, exportAudit, listAudit, verifyOrganization } from './audit.service.ts';

const read = errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden');

/** The audit trail (docs/audit.md). Mounted under /v1. */
export function auditRoutes(app: App, deps: Deps): void {
  app.get(
    '/audit',
    {
      schema: {
        operationId: 'ListAuditLog',
        tags: ['audit'],
        summary:
          "The organization's audit trail, newest first, filtered by actor, API key, object, operation and time (Audit Log)",
        querystring: AuditQuerySchema,
        response: { 200: AuditPageSchema, ...read },
      },
    },
    async (request) => listAudit(deps, principalOf(request), request.query),
  );

  app.get(
    '/audit/export',
    {
      schema: {
        operationId: 'ExportAuditLog',
        tags: ['audit'],
        summary: 'Every matching audit row as a JSON array or CSV download (Audit Log)',
        querystring: AuditExportQuerySchema,
        response: {
          200: {
            description:
              'Every matching row: a JSON array (format=json) or CSV with a header line (format=csv), as a download',
            content: {
              'application/json': { schema: Type.Array(AuditEntrySchema) },
              'text/csv': { schema: Type.String({ description: 'CSV, header line first' }) },
            },
          },
          ...read,
        },
      },
    },
    async (request, reply) => {
      const out = await exportAudit(deps, principalOf(request), request.query);
      reply.header('content-type', out.contentType).header('content-disposition', contentDisposition(out.filename));
      // A stream, not the JSON the schema's serializer would write: sent as is.
      return (reply as FastifyReply).send(out.body);
    },
  );

  app.get(
    '/audit/verify',
    {
      schema: {
        operationId: 'VerifyAuditLog',
        tags: ['audit'],
        summary: "Recomputes the organization's hash chain and reports the first broken link (Audit Log)",
        response: { 200: VerifyReportSchema, ...read },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      requireAction(principal, 'audit.read');
      return verifyOrganization(deps, principal.orgId);
    },
  );

  app.get(
    '/asset/:id/history',
    {
      schema: {
        operationId: 'GetAssetHistory',
        tags: ['assets'],
        summary: "An asset's audit trail, newest first (View on the asset; addresses only with Audit Log)",
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, description: 'objectId' }) }),
        querystring: HistoryQuerySchema,
        response: {
          200: AuditPageSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'not_found'),
        },
      },
    },
    async (request) => assetHistory(deps, principalOf(request), request.params.id, request.query),
  );
}
