import type { Deps } from '../../../deps.ts';
import type { App } from '../../../core/http/app-types.ts';
import { principalOf } from '../../../core/http/authenticate.ts';
import { MEDIA, scimErrors, scimErrorsWithPath, tags } from '../protocol/route-schemas.ts';
import {
  IdParamsSchema,
  ListQuerySchema,
  PatchOpSchema,
  ScimUserBodySchema,
  ScimUserListSchema,
  ScimUserSchema,
} from '../scim.schemas.ts';
import { createUser, deleteUser, getUser, listUsers, patchUser, replaceUser } from './users.service.ts';

/** SCIM Users (RFC 7644 §3): provisioning the organization's people. */
export function userRoutes(app: App, deps: Deps): void {
  app.get(
    '/Users',
    {
      schema: {
        operationId: 'ScimListUsers',
        tags,
        summary: 'SCIM: list or find users (filter: userName, externalId, emails.value, id with eq and and)',
        querystring: ListQuerySchema,
        produces: MEDIA,
        response: { 200: ScimUserListSchema, ...scimErrors(400) },
      },
    },
    async (request) => listUsers(deps, principalOf(request), request.query),
  );
  app.post(
    '/Users',
    {
      schema: {
        operationId: 'ScimCreateUser',
        tags,
        summary: 'SCIM: provision a user (federated: signs in through the identity provider)',
        body: ScimUserBodySchema,
        consumes: MEDIA,
        produces: MEDIA,
        response: { 201: ScimUserSchema, ...scimErrors(400, 409) },
      },
    },
    async (request, reply) => {
      const user = await createUser(deps, principalOf(request), request.body);
      reply.code(201).header('location', user.meta.location);
      return user;
    },
  );
  app.get(
    '/Users/:id',
    {
      schema: {
        operationId: 'ScimGetUser',
        tags,
        summary: 'SCIM: a user',
        params: IdParamsSchema,
        produces: MEDIA,
        response: { 200: ScimUserSchema, ...scimErrorsWithPath(400, 404) },
      },
    },
    async (request) => getUser(deps, principalOf(request), request.params.id),
  );
  app.put(
    '/Users/:id',
    {
      schema: {
        operationId: 'ScimReplaceUser',
        tags,
        summary: 'SCIM: replace a user',
        params: IdParamsSchema,
        body: ScimUserBodySchema,
        consumes: MEDIA,
        produces: MEDIA,
        response: { 200: ScimUserSchema, ...scimErrorsWithPath(400, 404, 409) },
      },
    },
    async (request) => replaceUser(deps, principalOf(request), request.params.id, request.body),
  );
  app.patch(
    '/Users/:id',
    {
      schema: {
        operationId: 'ScimPatchUser',
        tags,
        summary: 'SCIM: change a user (PatchOp: add, replace, remove; active=false disables)',
        params: IdParamsSchema,
        body: PatchOpSchema,
        consumes: MEDIA,
        produces: MEDIA,
        response: { 200: ScimUserSchema, ...scimErrorsWithPath(400, 404, 409) },
      },
    },
    async (request) => patchUser(deps, principalOf(request), request.params.id, request.body),
  );
  app.delete(
    '/Users/:id',
    {
      schema: {
        operationId: 'ScimDeleteUser',
        tags,
        summary: 'SCIM: deprovision a user (disabled, sessions ended, out of every group; then 404)',
        params: IdParamsSchema,
        response: { 204: { type: 'null', description: 'Deleted' }, ...scimErrorsWithPath(400, 404, 409) },
      },
    },
    async (request, reply) => {
      await deleteUser(deps, principalOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}
