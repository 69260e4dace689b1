import type { Deps } from '../../../deps.ts';
import type { App } from '../../../core/http/app-types.ts';
import { principalOf } from '../../../core/http/authenticate.ts';
import { MEDIA, scimErrors, scimErrorsWithPath, tags } from '../protocol/route-schemas.ts';
import { createGroup, deleteGroup, getGroup, listGroups, patchGroup, replaceGroup } from './groups.service.ts';
import {
  IdParamsSchema,
  ListQuerySchema,
  PatchOpSchema,
  ScimGroupBodySchema,
  ScimGroupListSchema,
  ScimGroupSchema,
} from '../scim.schemas.ts';

/** SCIM Groups (RFC 7644 §3): the organization's groups and their members. */
export function groupRoutes(app: App, deps: Deps): void {
  app.get(
    '/Groups',
    {
      schema: {
        operationId: 'ScimListGroups',
        tags,
        summary: 'SCIM: list or find groups (filter: displayName, externalId, id with eq and and)',
        querystring: ListQuerySchema,
        produces: MEDIA,
        response: { 200: ScimGroupListSchema, ...scimErrors(400) },
      },
    },
    async (request) => listGroups(deps, principalOf(request), request.query),
  );
  app.post(
    '/Groups',
    {
      schema: {
        operationId: 'ScimCreateGroup',
        tags,
        summary: 'SCIM: create a group with members',
        body: ScimGroupBodySchema,
        consumes: MEDIA,
        produces: MEDIA,
        response: { 201: ScimGroupSchema, ...scimErrors(400, 409) },
      },
    },
    async (request, reply) => {
      const group = await createGroup(deps, principalOf(request), request.body);
      reply.code(201).header('location', group.meta.location);
      return group;
    },
  );
  app.get(
    '/Groups/:id',
    {
      schema: {
        operationId: 'ScimGetGroup',
        tags,
        summary: 'SCIM: a group and its members',
        params: IdParamsSchema,
        produces: MEDIA,
        response: { 200: ScimGroupSchema, ...scimErrorsWithPath(400, 404) },
      },
    },
    async (request) => getGroup(deps, principalOf(request), request.params.id),
  );
  app.put(
    '/Groups/:id',
    {
      schema: {
        operationId: 'ScimReplaceGroup',
        tags,
        summary: 'SCIM: replace a group (name and members)',
        params: IdParamsSchema,
        body: ScimGroupBodySchema,
        consumes: MEDIA,
        produces: MEDIA,
        response: { 200: ScimGroupSchema, ...scimErrorsWithPath(400, 404, 409) },
      },
    },
    async (request) => replaceGroup(deps, principalOf(request), request.params.id, request.body),
  );
  app.patch(
    '/Groups/:id',
    {
      schema: {
        operationId: 'ScimPatchGroup',
        tags,
        summary: 'SCIM: change a group (PatchOp: add/remove members, members[value eq "id"], displayName)',
        params: IdParamsSchema,
        body: PatchOpSchema,
        consumes: MEDIA,
        produces: MEDIA,
        response: { 200: ScimGroupSchema, ...scimErrorsWithPath(400, 404, 409) },
      },
    },
    async (request) => patchGroup(deps, principalOf(request), request.params.id, request.body),
  );
  app.delete(
    '/Groups/:id',
    {
      schema: {
        operationId: 'ScimDeleteGroup',
        tags,
        summary: 'SCIM: delete a group (its memberships and template grants go with it)',
        params: IdParamsSchema,
        response: { 204: { type: 'null', description: 'Deleted' }, ...scimErrorsWithPath(400, 404, 409) },
      },
    },
    async (request, reply) => {
      await deleteGroup(deps, principalOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}
