import formbody from '@fastify/formbody';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { clientIp, principalOf } from '../../core/http/authenticate.ts';
import { AppError } from '../../core/http/errors.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../core/http/responses.ts';
import { hasPrivilege } from '../../core/authz/authorize.ts';
import {
  AdaptiveTemplateSchema,
  FillQuerySchema,
  IdParamsSchema,
  LaunchResultSchema,
  LaunchSchema,
  RegisterSchema,
  SavedSchema,
  SaveSchema,
  TemplateSearchResultSchema,
  TemplateSearchSchema,
  TokenParamsSchema,
} from './adaptive-templates.schemas.ts';
import {
  deleteTemplate,
  getTemplate,
  launchTemplate,
  openLaunch,
  registerTemplate,
  renderTemplate,
  saveDerivative,
  searchTemplates,
} from './adaptive-templates.service.ts';
import { launchPage, launchSecurity, RENDERED_HTML_CSP } from './launch.page.ts';
import { bag } from '../../core/lookup.ts';

const tags = ['adaptive templates'];
const errors = (...extra: Parameters<typeof errorResponses>) => errorResponses(...AUTHENTICATED_ERRORS, ...extra);
const Html = { description: 'HTML page', content: { 'text/html': { schema: Type.String() } } };

/** `f_<name>=value` pairs (query or form) as field values. */
function fieldValues(params: Record<string, unknown>): Record<string, string> {
  const out = bag<string>();
  for (const [key, value] of Object.entries(params))
    if (key.startsWith('f_') && typeof value === 'string') out[key.slice(2)] = value;
  return out;
}

function html(reply: FastifyReply, status: number, body: string, csp: string) {
  return reply
    .code(status)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': csp,
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
    })
    .send(body);
}

/** The reference's two operations (§6) and Tessera's registration API, mounted under /v1 by app.ts. */
export function adaptiveTemplateRoutes(app: App, deps: Deps): void {
  app.addSchema(AdaptiveTemplateSchema);

  app.post(
    '/template',
    {
      // A search: a read-only (tessera.read) third-party token may call it.
      config: { scope: 'read' },
      schema: {
        operationId: 'getTemplates',
        tags,
        summary: 'Search the adaptive templates the caller may use',
        body: TemplateSearchSchema,
        response: { 200: TemplateSearchResultSchema, ...errors('validation_failed') },
      },
    },
    async (request) => searchTemplates(deps, principalOf(request), request.body),
  );

  app.post(
    '/template/launch',
    {
      schema: {
        operationId: 'lanchTemplate',
        tags,
        summary: 'A signed, expiring URL that opens a template in a browser',
        body: LaunchSchema,
        response: { 200: LaunchResultSchema, ...errors('validation_failed', 'not_found') },
      },
    },
    async (request) => launchTemplate(deps, principalOf(request), request.body.templateId),
  );

  app.post(
    '/adaptive-templates',
    {
      schema: {
        operationId: 'registerAdaptiveTemplate',
        tags,
        summary: 'Register an SVG or HTML asset with {{fields}} as an adaptive template (Upload)',
        body: RegisterSchema,
        response: { 201: Type.Ref('AdaptiveTemplate'), ...errors('validation_failed', 'forbidden', 'conflict') },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await registerTemplate(deps, principalOf(request), request.body, clientIp(request))),
  );

  app.get(
    '/adaptive-templates/:id',
    {
      schema: {
        operationId: 'getAdaptiveTemplate',
        tags,
        summary: 'One adaptive template',
        params: IdParamsSchema,
        response: { 200: Type.Ref('AdaptiveTemplate'), ...errors('not_found') },
      },
    },
    async (request) => getTemplate(deps, principalOf(request), request.params.id),
  );

  app.delete(
    '/adaptive-templates/:id',
    {
      schema: {
        operationId: 'deleteAdaptiveTemplate',
        tags,
        summary: 'Unregister a template (the asset stays)',
        params: IdParamsSchema,
        response: { 204: Type.Null({ description: 'Done' }), ...errors('forbidden', 'not_found') },
      },
    },
    async (request, reply) => {
      await deleteTemplate(deps, principalOf(request), request.params.id, clientIp(request));
      return reply.code(204).send(null);
    },
  );
}

/** The launch page behind the signed URL: fill in, see the result, save it as a derivative asset. */
export async function adaptiveTemplateLaunchRoutes(app: App, deps: Deps): Promise<void> {
  await app.register(formbody);
  const config = { public: true };

  app.get(
    '/adaptive-templates/launch/:token',
    {
      config,
      schema: {
        operationId: 'openAdaptiveTemplate',
        tags,
        summary: 'The launch page of a template (signed URL from POST /v1/template/launch)',
        security: [],
        params: TokenParamsSchema,
        querystring: FillQuerySchema,
        response: {
          200: Html,
          400: {
            description:
              'The page with the error (a value the template refuses), or a JSON error for a malformed URL or a token or query field the schema refuses',
            content: { 'text/html': { schema: Type.String() }, 'application/json': { schema: Type.Ref('Error') } },
          },
          ...errorResponses('not_found'),
        },
      },
    },
    async (request, reply) => {
      const opened = await openLaunch(deps, request.params.token);
      const query = request.query as Record<string, string>;
      const values = fieldValues(query);
      const security = launchSecurity();
      const search = new URLSearchParams(
        Object.entries(values).map(([k, v]): [string, string] => [`f_${k}`, v]),
      ).toString();
      const page = (error?: string) =>
        launchPage(
          {
            base: `/adaptive-templates/launch/${request.params.token}`,
            name: opened.row.name,
            kind: opened.row.kind,
            fields: opened.fields,
            values: { ...values, __filename: query.filename ?? '' },
            query: search,
            canSave: hasPrivilege(opened.principal, 'upload'),
            error,
          },
          security,
        );
      try {
        await renderTemplate(opened, values, 'query');
      } catch (error) {
        if (error instanceof AppError && error.status === 400)
          return html(reply, 400, page(error.message), security.csp);
        throw error;
      }
      return html(reply, 200, page(), security.csp);
    },
  );

  app.get(
    '/adaptive-templates/launch/:token/render',
    {
      config,
      schema: {
        operationId: 'renderAdaptiveTemplate',
        tags,
        summary: 'The template filled with f_<field> values: PNG for SVG templates, sandboxed HTML for HTML ones',
        security: [],
        params: TokenParamsSchema,
        querystring: FillQuerySchema,
        response: {
          200: {
            description: 'The rendered result',
            content: {
              'image/png': { schema: Type.String({ format: 'binary' }) },
              'text/html': { schema: Type.String() },
            },
          },
          ...errorResponses('validation_failed', 'not_found'),
        },
      },
    },
    async (request, reply) => {
      const opened = await openLaunch(deps, request.params.token);
      const rendered = await renderTemplate(opened, fieldValues(request.query as Record<string, string>), 'query');
      reply.headers({
        'content-type': rendered.contentType,
        'cache-control': 'private, no-store',
        'x-content-type-options': 'nosniff',
      });
      if (rendered.extension === 'html') reply.header('content-security-policy', RENDERED_HTML_CSP);
      return reply.send(rendered.body as never);
    },
  );

  app.post(
    '/adaptive-templates/launch/:token/save',
    {
      config,
      schema: {
        operationId: 'saveAdaptiveTemplate',
        tags,
        summary: 'Render and save as a new asset related to the template asset as derivative',
        security: [],
        params: TokenParamsSchema,
        body: SaveSchema,
        response: { 201: SavedSchema, 200: Html, ...errorResponses('validation_failed', 'forbidden', 'not_found') },
      },
    },
    async (request, reply) => {
      const opened = await openLaunch(deps, request.params.token);
      const body = request.body as Record<string, unknown> & { values?: Record<string, string>; filename?: string };
      const isForm = (request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
      const values = body.values ?? fieldValues(body);
      const saved = await saveDerivative(deps, opened, values, body.filename, body.values ? 'body.values' : 'body');
      if (!isForm) return reply.code(201).send(saved);
      const security = launchSecurity();
      const search = new URLSearchParams(
        Object.entries(values).map(([k, v]): [string, string] => [`f_${k}`, String(v)]),
      ).toString();
      return html(
        reply,
        200,
        launchPage(
          {
            base: `/adaptive-templates/launch/${request.params.token}`,
            name: opened.row.name,
            kind: opened.row.kind,
            fields: opened.fields,
            values: values as Record<string, string>,
            query: search,
            canSave: true,
            saved,
          },
          security,
        ),
        security.csp,
      );
    },
  );
}
