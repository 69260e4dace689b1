import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { toAppError } from '../../core/http/error-handler.ts';
import { discoveryRoutes } from './discovery/discovery.routes.ts';
import { ERROR_SCHEMA, ScimError } from './protocol/errors.ts';
import { userRoutes } from './users/users.routes.ts';
import { groupRoutes } from './groups/groups.routes.ts';

export const SCIM_CONTENT_TYPE = 'application/scim+json; charset=utf-8';

/** Every error under /scim/v2 in SCIM's shape (RFC 7644 §3.12), credentials and validation included. */
function sendScimError(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  const appError = toAppError(error);
  if (appError.status >= 500) request.log.error({ err: error }, 'request failed');
  else request.log.info({ code: appError.code, status: appError.status }, appError.message);
  if (appError.headers) reply.headers(appError.headers);
  if (appError.status === 401 && !reply.hasHeader('www-authenticate'))
    reply.header('www-authenticate', 'Bearer realm="tessera"');
  const scimType =
    error instanceof ScimError
      ? error.scimType
      : appError.code === 'validation_failed'
        ? 'invalidValue'
        : appError.code === 'invalid_json'
          ? 'invalidSyntax'
          : undefined;
  return reply
    .code(appError.status)
    .type(SCIM_CONTENT_TYPE)
    .send({
      schemas: [ERROR_SCHEMA],
      status: String(appError.status),
      ...(scimType ? { scimType } : {}),
      detail: appError.message,
    });
}

/** SCIM 2.0 (RFC 7643/7644) under /scim/v2: register inside the authenticated scope. */
export async function scimRoutes(app: App, deps: Deps): Promise<void> {
  await app.register(
    async (scim: App) => {
      scim.setErrorHandler(sendScimError);
      // application/scim+json is JSON; an empty body is no body (as for application/json).
      const parseJson = scim.getDefaultJsonParser('error', 'error');
      scim.addContentTypeParser('application/scim+json', { parseAs: 'string' }, (request, body, done) => {
        if (body.length === 0 || (typeof body === 'string' && body.trim() === '')) return done(null, undefined);
        return parseJson(request, body as string, done);
      });
      scim.addHook('onRequest', async (_request, reply) => {
        reply.type(SCIM_CONTENT_TYPE);
      });
      discoveryRoutes(scim, deps);
      userRoutes(scim, deps);
      groupRoutes(scim, deps);
    },
    { prefix: '/scim/v2' },
  );
}
