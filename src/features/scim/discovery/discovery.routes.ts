import type { Deps } from '../../../deps.ts';
import type { App } from '../../../core/http/app-types.ts';
import { resourceTypes, schemas, serviceProviderConfig } from './discovery.ts';
import { MEDIA, tags } from '../protocol/route-schemas.ts';
import { ResourceTypesSchema, SchemasSchema, ScimErrorSchema, ServiceProviderConfigSchema } from '../scim.schemas.ts';

const errors = { 401: ScimErrorSchema, 403: ScimErrorSchema, 429: ScimErrorSchema };

/** RFC 7644 §4 discovery: static documents (they need credentials, as the rest of /scim/v2). */
export function discoveryRoutes(app: App, deps: Deps): void {
  app.get(
    '/ServiceProviderConfig',
    {
      schema: {
        operationId: 'ScimServiceProviderConfig',
        tags,
        summary: 'SCIM: what this service provider supports',
        produces: MEDIA,
        response: { 200: ServiceProviderConfigSchema, ...errors },
      },
    },
    async () => serviceProviderConfig(deps),
  );
  app.get(
    '/ResourceTypes',
    {
      schema: {
        operationId: 'ScimResourceTypes',
        tags,
        summary: 'SCIM: the resource types (User, Group)',
        produces: MEDIA,
        response: { 200: ResourceTypesSchema, ...errors },
      },
    },
    async () => resourceTypes(deps),
  );
  app.get(
    '/Schemas',
    {
      schema: {
        operationId: 'ScimSchemas',
        tags,
        summary: 'SCIM: the User and Group schemas as Tessera keeps them',
        produces: MEDIA,
        response: { 200: SchemasSchema, ...errors },
      },
    },
    async () => schemas(deps),
  );
}
