export { apiKeyRoutes } from './api-keys.routes.ts';
export {
  apiKeyResolver,
  registerApiKeyAlongsideUser,
  verifyApiKey,
  API_KEY_HEADER,
  INVALID_KEY_MESSAGE,
} from './authenticate/verify.ts';
export { flushApiKeyUsage } from './authenticate/usage.ts';
export { generateKey, isWellFormedKey, secretPart, KEY_PATTERN, KEY_PREFIX } from './secrets/key-format.ts';
export { createApiKeyRuntime, type ApiKeyRuntime } from './runtime.ts';
export { rotateApiKeySecrets } from './secrets/secret-rotation.ts';
