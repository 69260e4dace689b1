import { forEachEngine, type TestContext } from '../../../test/helpers/context.ts';
import type { TestOrg } from '../../../test/helpers/factories.ts';
import { securitySuite } from '../../../test/helpers/security.ts';
import { metadataApi, rnd } from '../../../test/helpers/metadata.ts';

const MM = ['metadata_management' as const];

async function vocabulary(ctx: TestContext, org: TestOrg) {
  return (await metadataApi(ctx, org).vocabulary(`V ${rnd()}`, ['a'])).metadataDefinitionId as string;
}
async function attribute(ctx: TestContext, org: TestOrg) {
  return (await metadataApi(ctx, org).attribute({ name: `A ${rnd()}`, type: 'text' })).id as string;
}
async function group(ctx: TestContext, org: TestOrg) {
  return (await metadataApi(ctx, org).group(`G ${rnd()}`, [])).id as string;
}
async function template(ctx: TestContext, org: TestOrg) {
  return (await metadataApi(ctx, org).template(`T ${rnd()}`, [])).templateId as string;
}

forEachEngine('metadata: shared security suite', (ctx) => {
  // Reads for anyone who fills metadata in (Metadata Management, Metadata Template Management or Upload: see templates/vocabularies tests).
  securitySuite(ctx, '/v1/metadata/template', { method: 'GET', prepare: () => ({ url: '/v1/metadata/template' }) });
  securitySuite(ctx, '/v1/metadata/template/{id}', {
    method: 'GET',
    resource: true,
    prepare: async (c, org) => ({ url: `/v1/metadata/template/${await template(c, org)}` }),
  });
  securitySuite(ctx, '/v1/metadata/vocabulary', { method: 'GET', prepare: () => ({ url: '/v1/metadata/vocabulary' }) });
  securitySuite(ctx, '/v1/metadata/vocabulary/{id}', {
    method: 'GET',
    resource: true,
    prepare: async (c, org) => ({ url: `/v1/metadata/vocabulary/${await vocabulary(c, org)}` }),
  });

  // Administration: Metadata Management.
  securitySuite(ctx, '/v1/metadata/template (create)', {
    method: 'POST',
    privileges: MM,
    prepare: () => ({ url: '/v1/metadata/template', body: { name: `T ${rnd()}`, groupIds: [] } }),
  });
  securitySuite(ctx, '/v1/metadata/template/{id} (update)', {
    method: 'PATCH',
    resource: true,
    privileges: MM,
    prepare: async (c, org) => ({
      url: `/v1/metadata/template/${await template(c, org)}`,
      body: { name: `T ${rnd()}` },
    }),
  });
  securitySuite(ctx, '/v1/metadata/template/{id} (delete)', {
    method: 'DELETE',
    resource: true,
    privileges: MM,
    prepare: async (c, org) => ({ url: `/v1/metadata/template/${await template(c, org)}` }),
  });
  securitySuite(ctx, '/v1/metadata/templates', {
    method: 'GET',
    privileges: MM,
    prepare: () => ({ url: '/v1/metadata/templates' }),
  });
  securitySuite(ctx, '/v1/metadata/vocabulary (create)', {
    method: 'POST',
    privileges: MM,
    prepare: () => ({ url: '/v1/metadata/vocabulary', body: { name: `V ${rnd()}`, values: ['a'] } }),
  });
  securitySuite(ctx, '/v1/metadata/vocabulary/{id} (update)', {
    method: 'PATCH',
    resource: true,
    privileges: MM,
    prepare: async (c, org) => ({ url: `/v1/metadata/vocabulary/${await vocabulary(c, org)}`, body: { add: ['b'] } }),
  });
  securitySuite(ctx, '/v1/metadata/vocabulary/{id} (delete)', {
    method: 'DELETE',
    resource: true,
    privileges: MM,
    prepare: async (c, org) => ({ url: `/v1/metadata/vocabulary/${await vocabulary(c, org)}` }),
  });
  securitySuite(ctx, '/v1/metadata/attributes', {
    method: 'GET',
    privileges: MM,
    prepare: () => ({ url: '/v1/metadata/attributes' }),
  });
  securitySuite(ctx, '/v1/metadata/attributes (create)', {
    method: 'POST',
    privileges: MM,
    prepare: () => ({ url: '/v1/metadata/attributes', body: { name: `A ${rnd()}`, type: 'text' } }),
  });
  securitySuite(ctx, '/v1/metadata/attributes/{id}', {
    method: 'GET',
    resource: true,
    privileges: MM,
    prepare: async (c, org) => ({ url: `/v1/metadata/attributes/${await attribute(c, org)}` }),
  });
  securitySuite(ctx, '/v1/metadata/attributes/{id} (update)', {
    method: 'PATCH',
    resource: true,
    privileges: MM,
    prepare: async (c, org) => ({
      url: `/v1/metadata/attributes/${await attribute(c, org)}`,
      body: { visible: false },
    }),
  });
  securitySuite(ctx, '/v1/metadata/attributes/{id} (delete)', {
    method: 'DELETE',
    resource: true,
    privileges: MM,
    prepare: async (c, org) => ({ url: `/v1/metadata/attributes/${await attribute(c, org)}` }),
  });
  securitySuite(ctx, '/v1/metadata/groups', {
    method: 'GET',
    privileges: MM,
    prepare: () => ({ url: '/v1/metadata/groups' }),
  });
  securitySuite(ctx, '/v1/metadata/groups (create)', {
    method: 'POST',
    privileges: MM,
    prepare: () => ({ url: '/v1/metadata/groups', body: { name: `G ${rnd()}` } }),
  });
  securitySuite(ctx, '/v1/metadata/groups/{id}', {
    method: 'GET',
    resource: true,
    privileges: MM,
    prepare: async (c, org) => ({ url: `/v1/metadata/groups/${await group(c, org)}` }),
  });
  securitySuite(ctx, '/v1/metadata/groups/{id} (update)', {
    method: 'PATCH',
    resource: true,
    privileges: MM,
    prepare: async (c, org) => ({ url: `/v1/metadata/groups/${await group(c, org)}`, body: { description: 'x' } }),
  });
  securitySuite(ctx, '/v1/metadata/groups/{id} (delete)', {
    method: 'DELETE',
    resource: true,
    privileges: MM,
    prepare: async (c, org) => ({ url: `/v1/metadata/groups/${await group(c, org)}` }),
  });
  securitySuite(ctx, '/v1/metadata/changes', {
    method: 'GET',
    privileges: MM,
    prepare: () => ({ url: '/v1/metadata/changes' }),
  });
  securitySuite(ctx, '/v1/metadata/apply', {
    method: 'POST',
    privileges: MM,
    prepare: () => ({ url: '/v1/metadata/apply', body: {} }),
  });
  securitySuite(ctx, '/v1/action/{id}', {
    method: 'GET',
    resource: true,
    prepare: async (c, org) => {
      const res = await c.inject({
        method: 'POST',
        url: '/v1/metadata/apply',
        headers: org.admin.headers,
        payload: {},
      });
      return { url: `/v1/action/${res.json().actionId}` };
    },
  });
});
