// Delivery building blocks for the webhook worker: signing, retry schedule, one-shot
// send, endpoint OAuth tokens and per-endpoint rate limits (the SSRF guard they use is core/net/ssrf.ts). Pure or self-contained; no DB access.
export {
  generateSecret,
  isValidSecret,
  secretKey,
  sign,
  signatureHeader,
  webhookHeaders,
  SECRET_PREFIX,
  USER_AGENT,
  type WebhookHeaders,
} from './credentials/signing.ts';
export {
  AUTO_DISABLE_AFTER_MS,
  decideAfterAttempt,
  JITTER_RATIO,
  MAX_ATTEMPTS,
  MAX_JITTER_MS,
  MAX_RETRY_AFTER_MS,
  RETRY_SCHEDULE_MS,
  nextAttemptAt,
  nextDelayMs,
  shouldDisable,
  type AttemptDecision,
  type DecideOptions,
  type NextDelayOptions,
} from './pacing/schedule.ts';
export {
  classifyError,
  DEFAULT_TIMEOUT_MS,
  KEPT_RESPONSE_HEADERS,
  MAX_RESPONSE_BYTES,
  MAX_TIMEOUT_MS,
  parseRetryAfter,
  sendOnce,
  type ErrorClass,
  type SendInput,
  type SendResult,
} from './send/send.ts';
export {
  configHash,
  createTokenProvider,
  refreshSkewMs,
  sendWithOAuth,
  TokenFetchError,
  TokenProviderCache,
  withOAuthRetry,
  type ClientAuthMethod,
  type OAuthSendResult,
  type TokenProvider,
  type TokenProviderConfig,
  type TokenProviderOptions,
} from './credentials/oauth-token.ts';
export {
  createInflightLimiter,
  createRateLimiter,
  type InflightLimiter,
  type RateLimiter,
  type RateLimiterOptions,
} from './pacing/rate-limit.ts';
