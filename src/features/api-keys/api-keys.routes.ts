import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { clientIp, principalOf } from '../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../core/http/responses.ts';
import {
  ApiKeyCreateSchema,
  ApiKeyCreatedSchema,
  ApiKeyListSchema,
  ApiKeyPageSchema,
  ApiKeyRevokeSchema,
  ApiKeyRevokedSchema,
  ApiKeySchema,
} from './api-keys.schemas.ts';
import { createApiKey, listApiKeys, revokeApiKey } from './api-keys.service.ts';

const tags = ['api-keys'];

/** The spec's three API key operations, all POST, under /api/v1/api-key. */
export function apiKeyRoutes(app: App, deps: Deps): void {
  app.addSchema(ApiKeySchema);

  app.post(
    '/create-api-key',
    {
      schema: {
        operationId: 'CreateApiKey',
        tags,
        summary: 'Create an API key (API Key Management). The plaintext key is in this response only.',
        body: ApiKeyCreateSchema,
        response: {
          200: ApiKeyCreatedSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden'),
        },
      },
    },
    async (request) => createApiKey(deps, principalOf(request), request.body, clientIp(request)),
  );

  app.post(
    '/list-api-keys',
    {
      // A read, though POSTed (the reference's shape): tessera.read reaches it.
      config: { scope: 'read' },
      // An empty POST lists the first page with the defaults.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        operationId: 'ListApiKeys',
        tags,
        summary: "List the organization's API keys (API Key Management); never the keys themselves",
        body: ApiKeyListSchema,
        response: {
          200: ApiKeyPageSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden'),
        },
      },
    },
    async (request) => listApiKeys(deps, principalOf(request), request.body),
  );

  app.post(
    '/revoke-api-key',
    {
      schema: {
        operationId: 'RevokeApiKey',
        tags,
        summary: 'Revoke an API key (API Key Management): immediate, irreversible, idempotent',
        body: ApiKeyRevokeSchema,
        response: {
          200: ApiKeyRevokedSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found'),
        },
      },
    },
    async (request) => ({ apiKey: await revokeApiKey(deps, principalOf(request), request.body.id, clientIp(request)) }),
  );
}
