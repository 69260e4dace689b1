import { Type } from 'typebox';
import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { clientIp, principalOf } from '../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../core/http/responses.ts';
import { listEventTypes } from './event-types.ts';
import { listAttempts, listMessages, recoverMessages, resendMessage } from './messages.service.ts';
import {
  AttemptListQuerySchema,
  AttemptListSchema,
  EndpointCreateSchema,
  EndpointCreatedSchema,
  EndpointIdParamsSchema,
  EndpointSchema,
  EndpointUpdateSchema,
  EventTypeListQuerySchema,
  EventTypeSchema,
  IdParamsSchema,
  ListQuerySchema,
  MessageListQuerySchema,
  MessageListSchema,
  MessageParamsSchema,
  OAuthSchema,
  RecoverSchema,
  RecoveredSchema,
  ResentSchema,
  RotateSecretSchema,
  SecretSchema,
} from './webhooks.schemas.ts';
import {
  createEndpoints,
  deleteEndpoint,
  getEndpoint,
  getSecret,
  listEndpoints,
  removeOAuthClient,
  rotateSecret,
  setOAuthClient,
  updateEndpoint,
} from './endpoints/endpoints.service.ts';

const tags = ['webhooks'];
const NoContent = Type.Null({ description: 'Done' });
const errors = (...extra: Parameters<typeof errorResponses>) =>
  errorResponses(...AUTHENTICATED_ERRORS, 'forbidden', ...extra);

/** The webhook management API (reference §14.1 plus secret, log and replay routes). Registered at / and /v1. */
export function webhookRoutes(app: App, deps: Deps): void {
  app.post(
    '/webhooks/endpoint',
    {
      schema: {
        operationId: 'createSubscription',
        tags,
        summary: 'Create 1–50 webhook endpoints (subscriptions)',
        body: EndpointCreateSchema,
        response: { 200: EndpointCreatedSchema, ...errors('validation_failed') },
      },
    },
    async (request) => {
      const created = await createEndpoints(deps, principalOf(request), request.body, clientIp(request));
      return { id: created[0]!.id, secret: created[0]!.secret, endpoints: created };
    },
  );

  app.get(
    '/webhooks/endpoint/list',
    {
      schema: {
        operationId: 'getEndpointSubscriptionsList',
        tags,
        summary: "The caller organization's endpoints (cursor: an endpoint id)",
        querystring: ListQuerySchema,
        response: { 200: Type.Array(EndpointSchema), ...errors('validation_failed') },
      },
    },
    async (request) => listEndpoints(deps, principalOf(request), request.query),
  );

  app.get(
    '/webhooks/event-type/list',
    {
      schema: {
        operationId: 'getEventTypeList',
        tags,
        summary: 'Every event type, with its description and JSON Schema (cursor: an event-type name)',
        querystring: EventTypeListQuerySchema,
        response: { 200: Type.Array(EventTypeSchema), ...errors('validation_failed') },
      },
    },
    async (request) => {
      principalOf(request);
      return listEventTypes(request.query);
    },
  );

  app.get(
    '/webhooks/endpoint/:id',
    {
      schema: {
        operationId: 'getEndpointById',
        tags,
        summary: 'One endpoint and its configuration',
        params: IdParamsSchema,
        response: { 200: EndpointSchema, ...errors('not_found') },
      },
    },
    async (request) => getEndpoint(deps, principalOf(request), request.params.id),
  );

  app.patch(
    '/webhooks/endpoint/:id',
    {
      schema: {
        operationId: 'updateEndpointById',
        tags,
        summary: 'Update an endpoint (also enable/disable it)',
        params: IdParamsSchema,
        body: EndpointUpdateSchema,
        response: { 204: NoContent, ...errors('validation_failed', 'not_found', 'conflict') },
      },
    },
    async (request, reply) => {
      await updateEndpoint(deps, principalOf(request), request.params.id, request.body, clientIp(request));
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/webhooks/endpoint/:id',
    {
      schema: {
        operationId: 'deleteWebhook',
        tags,
        summary: 'Delete an endpoint, its messages and attempt log',
        params: IdParamsSchema,
        response: { 204: NoContent, ...errors('not_found') },
      },
    },
    async (request, reply) => {
      await deleteEndpoint(deps, principalOf(request), request.params.id, clientIp(request));
      return reply.code(204).send(null);
    },
  );

  app.put(
    '/webhooks/endpoint/oauth/:endpointId',
    {
      schema: {
        operationId: 'CreateOauth',
        tags,
        summary: 'Authorize an OAuth client (client credentials) on an endpoint',
        params: EndpointIdParamsSchema,
        body: OAuthSchema,
        response: { 204: NoContent, ...errors('validation_failed', 'not_found', 'conflict') },
      },
    },
    async (request, reply) => {
      await setOAuthClient(deps, principalOf(request), request.params.endpointId, request.body, clientIp(request));
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/webhooks/endpoint/oauth/:endpointId',
    {
      schema: {
        operationId: 'DeleteOauth',
        tags,
        summary: 'Remove the OAuth client of an endpoint',
        params: EndpointIdParamsSchema,
        response: { 204: NoContent, ...errors('not_found') },
      },
    },
    async (request, reply) => {
      await removeOAuthClient(deps, principalOf(request), request.params.endpointId, clientIp(request));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/webhooks/endpoint/:id/secret',
    {
      schema: {
        operationId: 'getEndpointSecret',
        tags,
        summary: 'The current signing secret of an endpoint',
        params: IdParamsSchema,
        response: { 200: SecretSchema, ...errors('not_found') },
      },
    },
    async (request) => getSecret(deps, principalOf(request), request.params.id),
  );

  app.post(
    '/webhooks/endpoint/:id/secret/rotate',
    {
      schema: {
        operationId: 'rotateEndpointSecret',
        tags,
        summary: 'Rotate the signing secret; the old one stays valid for the overlap',
        params: IdParamsSchema,
        body: Type.Optional(RotateSecretSchema),
        response: { 200: SecretSchema, ...errors('validation_failed', 'not_found') },
      },
    },
    async (request) =>
      rotateSecret(deps, principalOf(request), request.params.id, request.body ?? {}, clientIp(request)),
  );

  app.get(
    '/webhooks/endpoint/:id/message/list',
    {
      schema: {
        operationId: 'getEndpointMessageList',
        tags,
        summary: 'Messages of an endpoint, newest first',
        params: IdParamsSchema,
        querystring: MessageListQuerySchema,
        response: { 200: MessageListSchema, ...errors('validation_failed', 'not_found') },
      },
    },
    async (request) => listMessages(deps, principalOf(request), request.params.id, request.query),
  );

  app.get(
    '/webhooks/endpoint/:id/attempt/list',
    {
      schema: {
        operationId: 'getEndpointAttemptList',
        tags,
        summary: 'Delivery attempts of an endpoint, newest first',
        params: IdParamsSchema,
        querystring: AttemptListQuerySchema,
        response: { 200: AttemptListSchema, ...errors('validation_failed', 'not_found') },
      },
    },
    async (request) => listAttempts(deps, principalOf(request), request.params.id, request.query),
  );

  app.post(
    '/webhooks/endpoint/:id/message/:messageId/resend',
    {
      schema: {
        operationId: 'resendMessage',
        tags,
        summary: 'Send one message again (same webhook-id, fresh retry schedule)',
        params: MessageParamsSchema,
        response: { 202: ResentSchema, ...errors('not_found', 'conflict') },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(
          await resendMessage(
            deps,
            principalOf(request),
            request.params.id,
            request.params.messageId,
            clientIp(request),
          ),
        ),
  );

  app.post(
    '/webhooks/endpoint/:id/recover',
    {
      schema: {
        operationId: 'recoverMessages',
        tags,
        summary: 'Resend every failed message created since a time',
        params: IdParamsSchema,
        body: RecoverSchema,
        response: { 202: RecoveredSchema, ...errors('validation_failed', 'not_found', 'conflict') },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(await recoverMessages(deps, principalOf(request), request.params.id, request.body, clientIp(request))),
  );
}
