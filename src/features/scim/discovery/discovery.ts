import type { Deps } from '../../../deps.ts';
import { MAX_RESULTS } from '../protocol/messages.ts';
import { GROUP_SCHEMA, USER_SCHEMA } from '../scim.schemas.ts';

/** RFC 7643 §5–7: what this service provider supports, honestly (docs/scim.md). */

const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

export function serviceProviderConfig(deps: Deps) {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
    documentationUri: `${base(deps)}/docs`,
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'API key as a bearer token',
        description: 'Authorization: Bearer <Tessera API key>; the key’s role must hold User Management (docs/scim.md)',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base(deps)}/scim/v2/ServiceProviderConfig` },
  };
}

function base(deps: Deps): string {
  return deps.config.publicUrl.replace(/\/+$/, '');
}

function resourceType(deps: Deps, name: 'User' | 'Group') {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
    id: name,
    name,
    endpoint: `/${name}s`,
    description: name === 'User' ? 'A person of the organization' : 'A group of people of the organization',
    schema: name === 'User' ? USER_SCHEMA : GROUP_SCHEMA,
    schemaExtensions: [],
    meta: { resourceType: 'ResourceType', location: `${base(deps)}/scim/v2/ResourceTypes/${name}` },
  };
}

export function resourceTypes(deps: Deps) {
  const resources = [resourceType(deps, 'User'), resourceType(deps, 'Group')];
  return {
    schemas: [LIST],
    totalResults: resources.length,
    itemsPerPage: resources.length,
    startIndex: 1,
    Resources: resources,
  };
}

const attr = (
  name: string,
  type: string,
  extra: {
    required?: boolean;
    multiValued?: boolean;
    mutability?: string;
    uniqueness?: string;
    caseExact?: boolean;
    subAttributes?: unknown[];
    description?: string;
  } = {},
) => ({
  name,
  type,
  multiValued: extra.multiValued ?? false,
  description: extra.description ?? name,
  required: extra.required ?? false,
  caseExact: extra.caseExact ?? false,
  mutability: extra.mutability ?? 'readWrite',
  returned: 'default',
  uniqueness: extra.uniqueness ?? 'none',
  ...(extra.subAttributes ? { subAttributes: extra.subAttributes } : {}),
});

function schema(deps: Deps, id: string, name: string, attributes: unknown[]) {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
    id,
    name,
    description: `${name} as Tessera keeps it`,
    attributes,
    meta: { resourceType: 'Schema', location: `${base(deps)}/scim/v2/Schemas/${id}` },
  };
}

export function schemas(deps: Deps) {
  const ref = (description: string) => [
    attr('value', 'string', { mutability: 'immutable', description: 'The id' }),
    attr('display', 'string', { mutability: 'readOnly', description }),
  ];
  const user = schema(deps, USER_SCHEMA, 'User', [
    attr('userName', 'string', { required: true, uniqueness: 'server', description: 'Unique across the server' }),
    attr('name', 'complex', {
      subAttributes: [
        attr('givenName', 'string'),
        attr('familyName', 'string'),
        attr('formatted', 'string', { mutability: 'readOnly' }),
      ],
    }),
    attr('displayName', 'string', { mutability: 'readOnly', description: 'givenName familyName' }),
    attr('emails', 'complex', {
      multiValued: true,
      description: 'One address is kept: the primary one (else the first)',
      subAttributes: [attr('value', 'string'), attr('type', 'string'), attr('primary', 'boolean')],
    }),
    attr('active', 'boolean', { description: 'false disables the user and ends their sessions' }),
    attr('groups', 'complex', { multiValued: true, mutability: 'readOnly', subAttributes: ref('The group name') }),
    attr('externalId', 'string', { caseExact: true }),
  ]);
  const group = schema(deps, GROUP_SCHEMA, 'Group', [
    attr('displayName', 'string', { required: true, uniqueness: 'server', description: 'Unique in the organization' }),
    attr('members', 'complex', { multiValued: true, subAttributes: ref('The userName') }),
    attr('externalId', 'string', { caseExact: true }),
  ]);
  return { schemas: [LIST], totalResults: 2, itemsPerPage: 2, startIndex: 1, Resources: [user, group] };
}
