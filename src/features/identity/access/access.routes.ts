import { Type } from 'typebox';
import type { Deps } from '../../../deps.ts';
import type { App } from '../../../core/http/app-types.ts';
import { clientIp, principalOf } from '../../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../../core/http/responses.ts';
import {
  GroupCreateSchema,
  GroupSchema,
  GroupUpdateSchema,
  IdParamsSchema,
  PermissionsResponseSchema,
  PrivilegesQuerySchema,
  PrivilegesResponseSchema,
  RoleCreateSchema,
  RoleSchema,
  RoleUpdateSchema,
  SecurityTemplateSchema,
  SecurityTemplateUpdateSchema,
  SecurityTemplateWriteSchema,
} from '../identity.schemas.ts';
import { createGroup, deleteGroup, getGroup, listGroups, updateGroup } from './groups.service.ts';
import { createRole, deleteRole, getRole, listPrivileges, listRoles, updateRole } from './roles.service.ts';
import {
  createTemplate,
  deleteTemplate,
  getTemplate,
  listPermissions,
  listTemplates,
  updateTemplate,
} from './security-templates.service.ts';

const tags = ['security'];
const read = errorResponses(...AUTHENTICATED_ERRORS, 'forbidden', 'not_found');
const write = errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found', 'conflict');
const NoContent = Type.Null({ description: 'Deleted' });

/** Groups, roles, privileges, security templates and permissions. */
export function accessRoutes(app: App, deps: Deps): void {
  app.addSchema(GroupSchema);
  app.addSchema(RoleSchema);
  app.addSchema(SecurityTemplateSchema);

  // Groups (the reference reads them; creating, changing and deleting them is Tessera's addition)
  app.get(
    '/security/groups',
    {
      schema: {
        operationId: 'GetSecurityGroups',
        tags,
        summary: 'Groups (User Management)',
        response: { 200: Type.Array(Type.Ref('Group')), ...read },
      },
    },
    async (request) => listGroups(deps, principalOf(request)),
  );
  app.post(
    '/security/groups',
    {
      schema: {
        operationId: 'CreateSecurityGroup',
        tags,
        summary: 'Create a group (User Management)',
        body: GroupCreateSchema,
        response: { 201: Type.Ref('Group'), ...write },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createGroup(deps, principalOf(request), request.body, clientIp(request))),
  );
  app.get(
    '/security/groups/:id',
    {
      schema: {
        operationId: 'GetSecurityGroup',
        tags,
        summary: 'A group',
        params: IdParamsSchema,
        response: { 200: Type.Ref('Group'), ...read },
      },
    },
    async (request) => getGroup(deps, principalOf(request), request.params.id),
  );
  app.patch(
    '/security/groups/:id',
    {
      schema: {
        operationId: 'UpdateSecurityGroup',
        tags,
        summary: 'Rename or describe a group',
        params: IdParamsSchema,
        body: GroupUpdateSchema,
        response: { 200: Type.Ref('Group'), ...write },
      },
    },
    async (request) => updateGroup(deps, principalOf(request), request.params.id, request.body, clientIp(request)),
  );
  app.delete(
    '/security/groups/:id',
    {
      schema: {
        operationId: 'DeleteSecurityGroup',
        tags,
        summary: 'Delete a group, its memberships and its grants',
        params: IdParamsSchema,
        response: { 204: NoContent, ...read },
      },
    },
    async (request, reply) => {
      await deleteGroup(deps, principalOf(request), request.params.id, clientIp(request));
      return reply.code(204).send(null);
    },
  );

  // Roles and privileges
  app.get(
    '/roles',
    {
      schema: {
        operationId: 'GetRoles',
        tags,
        summary: 'Roles (User Management or Role Management)',
        response: { 200: Type.Array(Type.Ref('Role')), ...read },
      },
    },
    async (request) => listRoles(deps, principalOf(request)),
  );
  for (const path of ['/roles/privileges', '/role/privileges']) {
    app.get(
      path,
      {
        schema: {
          operationId: path === '/roles/privileges' ? 'GetPrivileges' : 'GetRolePrivileges',
          tags,
          summary: 'Every role privilege, marked enabled when the caller holds it',
          querystring: PrivilegesQuerySchema,
          response: { 200: PrivilegesResponseSchema, ...read },
        },
      },
      async (request) => listPrivileges(principalOf(request), request.query.filter),
    );
  }
  app.post(
    '/roles',
    {
      schema: {
        operationId: 'CreateRole',
        tags,
        summary: 'Create a role',
        body: RoleCreateSchema,
        response: { 201: Type.Ref('Role'), ...write },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createRole(deps, principalOf(request), request.body, clientIp(request))),
  );
  app.get(
    '/roles/:id',
    {
      schema: {
        operationId: 'GetRole',
        tags,
        summary: 'A role',
        params: IdParamsSchema,
        response: { 200: Type.Ref('Role'), ...read },
      },
    },
    async (request) => getRole(deps, principalOf(request), request.params.id),
  );
  app.patch(
    '/roles/:id',
    {
      schema: {
        operationId: 'UpdateRole',
        tags,
        summary: 'Change a role',
        params: IdParamsSchema,
        body: RoleUpdateSchema,
        response: { 200: Type.Ref('Role'), ...write },
      },
    },
    async (request) => updateRole(deps, principalOf(request), request.params.id, request.body, clientIp(request)),
  );
  app.delete(
    '/roles/:id',
    {
      schema: {
        operationId: 'DeleteRole',
        tags,
        summary: 'Delete a role no user holds',
        params: IdParamsSchema,
        response: { 204: NoContent, ...write },
      },
    },
    async (request, reply) => {
      await deleteRole(deps, principalOf(request), request.params.id, clientIp(request));
      return reply.code(204).send(null);
    },
  );

  // Security templates and permissions
  app.get(
    '/security/permissions',
    {
      schema: {
        operationId: 'GetSecurityPermissions',
        tags,
        summary: 'Every security-template permission',
        response: { 200: PermissionsResponseSchema, ...read },
      },
    },
    async () => listPermissions(),
  );
  app.get(
    '/security/template',
    {
      schema: {
        operationId: 'GetSecurityTemplates',
        tags,
        summary: 'Security templates (Security Template Management)',
        response: { 200: Type.Array(Type.Ref('SecurityTemplate')), ...read },
      },
    },
    async (request) => listTemplates(deps, principalOf(request)),
  );
  app.post(
    '/security/template',
    {
      schema: {
        operationId: 'CreateSecurityTemplate',
        tags,
        summary: 'Create a security template',
        body: SecurityTemplateWriteSchema,
        response: { 201: Type.Ref('SecurityTemplate'), ...write },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createTemplate(deps, principalOf(request), request.body, clientIp(request))),
  );
  app.get(
    '/security/template/:id',
    {
      schema: {
        operationId: 'GetSecurityTemplate',
        tags,
        summary: 'A security template',
        params: IdParamsSchema,
        response: { 200: Type.Ref('SecurityTemplate'), ...read },
      },
    },
    async (request) => getTemplate(deps, principalOf(request), request.params.id),
  );
  app.patch(
    '/security/template/:id',
    {
      schema: {
        operationId: 'UpdateSecurityTemplate',
        tags,
        summary: 'Change a security template (grants are replaced when sent)',
        params: IdParamsSchema,
        body: SecurityTemplateUpdateSchema,
        response: { 200: Type.Ref('SecurityTemplate'), ...write },
      },
    },
    async (request) => updateTemplate(deps, principalOf(request), request.params.id, request.body, clientIp(request)),
  );
  app.delete(
    '/security/template/:id',
    {
      schema: {
        operationId: 'DeleteSecurityTemplate',
        tags,
        summary: 'Delete a security template',
        params: IdParamsSchema,
        response: { 204: NoContent, ...read },
      },
    },
    async (request, reply) => {
      await deleteTemplate(deps, principalOf(request), request.params.id, clientIp(request));
      return reply.code(204).send(null);
    },
  );
}
