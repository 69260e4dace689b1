import { forEachEngine } from '../../../test/helpers/context.ts';
import { securitySuite } from '../../../test/helpers/security.ts';

// The shared security suite for the asset routes that no other asset test file covers.
forEachEngine('assets: security of Action cancel and the form upload', (ctx) => {
  securitySuite(ctx, 'POST /v1/action/{id}/cancel', {
    method: 'POST', resource: true,
    prepare: async (c, o) => {
      const res = await c.inject({ method: 'POST', url: '/v1/metadata/apply', headers: o.admin.headers, payload: {} });
      return { url: `/v1/action/${res.json().actionId}/cancel` };
    },
  });
  securitySuite(ctx, 'POST /v1/asset/upload', { method: 'POST', prepare: () => ({ url: '/v1/asset/upload', body: {} }) });
});
