import { Type, type Static } from 'typebox';
import { anyJsonDoc, docAs } from '../../core/http/doc-schema.ts';

/** Request and response shapes of SCIM 2.0 (RFC 7643 resources, RFC 7644 messages) as Tessera serves them. */

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

// Identity providers send attributes Tessera does not keep (title, addresses, the enterprise
// extension, …): bodies accept them and ignore them (docs/scim.md lists what is kept).
const open = { additionalProperties: true } as const;

/** Entra ID sends booleans as the strings "True"/"False". */
const ScimBoolean = (description: string) => ({
  description: `${description} (a boolean; "True"/"False" accepted)`,
  anyOf: [{ type: 'boolean' }, { type: 'string', enum: ['True', 'False', 'true', 'false'] }],
});

const Schemas = Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 20 }));
const Email = Type.Object(
  {
    value: Type.String({ maxLength: 254 }),
    type: Type.Optional(Type.String({ maxLength: 50 })),
    primary: Type.Optional(docAs(Type.Unknown(), ScimBoolean('The address to keep'))),
  },
  open,
);

export const ScimUserBodySchema = Type.Object(
  {
    schemas: Schemas,
    userName: Type.String({ minLength: 1, maxLength: 254, description: 'Unique across the server, case-insensitive' }),
    externalId: Type.Optional(Type.String({ maxLength: 255 })),
    name: Type.Optional(
      Type.Object(
        {
          givenName: Type.Optional(Type.String({ maxLength: 100 })),
          familyName: Type.Optional(Type.String({ maxLength: 100 })),
          formatted: Type.Optional(Type.String({ maxLength: 300 })),
        },
        open,
      ),
    ),
    displayName: Type.Optional(Type.String({ maxLength: 300 })),
    emails: Type.Optional(Type.Array(Email, { maxItems: 20, description: 'The primary one (else the first) is kept' })),
    active: Type.Optional(docAs(Type.Unknown(), ScimBoolean('false disables the user; default true'))),
  },
  { ...open, description: 'A SCIM User (urn:ietf:params:scim:schemas:core:2.0:User)' },
);
export type ScimUserBody = Static<typeof ScimUserBodySchema>;

const Member = Type.Object(
  { value: Type.String({ maxLength: 200 }), display: Type.Optional(Type.String({ maxLength: 300 })) },
  open,
);

export const ScimGroupBodySchema = Type.Object(
  {
    schemas: Schemas,
    displayName: Type.String({ minLength: 1, maxLength: 100 }),
    externalId: Type.Optional(Type.String({ maxLength: 255 })),
    members: Type.Optional(Type.Array(Member, { maxItems: 10000 })),
  },
  { ...open, description: 'A SCIM Group (urn:ietf:params:scim:schemas:core:2.0:Group)' },
);
export type ScimGroupBody = Static<typeof ScimGroupBodySchema>;

export const PatchOpSchema = Type.Object(
  {
    schemas: Schemas,
    Operations: Type.Array(
      Type.Object(
        {
          op: Type.String({ maxLength: 20, description: 'add, replace or remove (any case)' }),
          path: Type.Optional(Type.String({ maxLength: 500 })),
          value: Type.Optional(
            docAs(
              Type.Unknown(),
              anyJsonDoc(
                'By path (RFC 7644 §3.5.2): a string, a boolean ("True"/"False" accepted), a list of {value} members or emails, or, without a path, an object of attributes',
              ),
            ),
          ),
        },
        open,
      ),
      { minItems: 1, maxItems: 1000 },
    ),
  },
  { ...open, description: 'A PatchOp (urn:ietf:params:scim:api:messages:2.0:PatchOp)' },
);
export type PatchOp = Static<typeof PatchOpSchema>;

export const IdParamsSchema = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });

export const ListQuerySchema = Type.Object({
  filter: Type.Optional(Type.String({ maxLength: 2000, description: 'attribute eq "value" [and …]' })),
  startIndex: Type.Optional(Type.Integer({ description: '1-based; less than 1 means 1' })),
  count: Type.Optional(Type.Integer({ description: 'Page size (default 100, at most 200); less than 0 means 0' })),
  attributes: Type.Optional(Type.String({ maxLength: 2000, description: 'Accepted; the full resource is returned' })),
  excludedAttributes: Type.Optional(
    Type.String({ maxLength: 2000, description: 'Accepted; the full resource is returned' }),
  ),
});
export type ListQuery = Static<typeof ListQuerySchema>;

const Meta = Type.Object({
  resourceType: Type.String(),
  created: Type.String({ format: 'date-time' }),
  lastModified: Type.String({ format: 'date-time' }),
  location: Type.String(),
});

export const ScimUserSchema = Type.Object({
  schemas: Type.Array(Type.String()),
  id: Type.String(),
  externalId: Type.Optional(Type.String()),
  userName: Type.String(),
  name: Type.Object({ givenName: Type.String(), familyName: Type.String(), formatted: Type.String() }),
  displayName: Type.String(),
  emails: Type.Array(Type.Object({ value: Type.String(), type: Type.String(), primary: Type.Boolean() })),
  active: Type.Boolean(),
  groups: Type.Array(Type.Object({ value: Type.String(), display: Type.String() })),
  meta: Meta,
});
export type ScimUser = Static<typeof ScimUserSchema>;

export const ScimGroupSchema = Type.Object({
  schemas: Type.Array(Type.String()),
  id: Type.String(),
  externalId: Type.Optional(Type.String()),
  displayName: Type.String(),
  members: Type.Array(Type.Object({ value: Type.String(), display: Type.String() })),
  meta: Meta,
});
export type ScimGroup = Static<typeof ScimGroupSchema>;

const listOf = <T extends typeof ScimUserSchema | typeof ScimGroupSchema>(item: T) =>
  Type.Object({
    schemas: Type.Array(Type.String()),
    totalResults: Type.Integer(),
    itemsPerPage: Type.Integer(),
    startIndex: Type.Integer(),
    Resources: Type.Array(item),
  });
export const ScimUserListSchema = listOf(ScimUserSchema);
export const ScimGroupListSchema = listOf(ScimGroupSchema);

export const ScimErrorSchema = Type.Object(
  {
    schemas: Type.Array(Type.String()),
    status: Type.String({ description: 'The HTTP status, as a string' }),
    scimType: Type.Optional(Type.String()),
    detail: Type.String(),
  },
  { description: 'A SCIM error (urn:ietf:params:scim:api:messages:2.0:Error)' },
);

/** Discovery documents are static JSON (RFC 7643 §5–7), declared in the document (discovery.ts writes them). */
const str = { type: 'string' };
const supported = { type: 'object', required: ['supported'], properties: { supported: { type: 'boolean' } } };
const meta = {
  type: 'object',
  required: ['resourceType', 'location'],
  properties: { resourceType: str, location: { type: 'string', format: 'uri' } },
};
const list = (item: Record<string, unknown>) => ({
  type: 'object',
  required: ['schemas', 'totalResults', 'itemsPerPage', 'startIndex', 'Resources'],
  properties: {
    schemas: { type: 'array', items: str },
    totalResults: { type: 'integer' },
    itemsPerPage: { type: 'integer' },
    startIndex: { type: 'integer' },
    Resources: { type: 'array', items: item },
  },
});
const discovery = (shown: Record<string, unknown>) => docAs(Type.Object({}, { additionalProperties: true }), shown);
export const ServiceProviderConfigSchema = discovery({
  type: 'object',
  description: 'What this service provider supports (RFC 7643 §5)',
  required: ['schemas', 'patch', 'bulk', 'filter', 'changePassword', 'sort', 'etag', 'authenticationSchemes'],
  properties: {
    schemas: { type: 'array', items: str },
    documentationUri: { type: 'string', format: 'uri' },
    patch: supported,
    bulk: {
      type: 'object',
      properties: {
        supported: { type: 'boolean' },
        maxOperations: { type: 'integer' },
        maxPayloadSize: { type: 'integer' },
      },
    },
    filter: { type: 'object', properties: { supported: { type: 'boolean' }, maxResults: { type: 'integer' } } },
    changePassword: supported,
    sort: supported,
    etag: supported,
    authenticationSchemes: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type', 'name'],
        properties: { type: str, name: str, description: str, primary: { type: 'boolean' } },
      },
    },
    meta,
  },
});
export const ResourceTypesSchema = discovery({
  ...list({
    type: 'object',
    required: ['id', 'name', 'endpoint', 'schema'],
    properties: {
      schemas: { type: 'array', items: str },
      id: str,
      name: str,
      endpoint: str,
      description: str,
      schema: str,
      schemaExtensions: { type: 'array', items: str },
      meta,
    },
  }),
  description: 'The resource types served: User and Group (RFC 7643 §6)',
});
const scimAttribute = (sub: Record<string, unknown> | undefined) => ({
  type: 'object',
  required: ['name', 'type'],
  properties: {
    name: str,
    type: { type: 'string', description: 'string, boolean, complex, …' },
    multiValued: { type: 'boolean' },
    description: str,
    required: { type: 'boolean' },
    caseExact: { type: 'boolean' },
    mutability: str,
    returned: str,
    uniqueness: str,
    ...(sub ? { subAttributes: { type: 'array', items: sub } } : {}),
  },
});
export const SchemasSchema = discovery({
  ...list({
    type: 'object',
    required: ['id', 'name', 'attributes'],
    properties: {
      schemas: { type: 'array', items: str },
      id: str,
      name: str,
      description: str,
      attributes: { type: 'array', items: scimAttribute(scimAttribute(undefined)) },
      meta,
    },
  }),
  description: 'The User and Group schemas as Tessera keeps them (RFC 7643 §7)',
});
