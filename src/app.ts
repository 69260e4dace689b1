import cors from '@fastify/cors';
import helmet from '@fastify/helmet';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { anyJsonDoc, docAs, openApiTransform, openApiTransformObject } from './core/http/doc-schema.ts';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify from 'fastify';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from './deps.ts';
import type { App } from './core/http/app-types.ts';
import { registerAuthentication, type CredentialResolver } from './core/http/authenticate.ts';
import { registerErrorHandling } from './core/http/error-handler.ts';
import { clientErrorHandler, frameworkErrors } from './core/http/framework-errors.ts';
import { registerInputGuards } from './core/http/input-guard.ts';
import { registerRequestContext } from './core/http/request-context.ts';
import { auditRoutes } from './features/audit/index.ts';
import { ssoOAuthHooks, ssoRoutes } from './features/sso/index.ts';
import { requestIdFor } from './core/http/request-id.ts';
import { setActiveTraceparent, type RequestSpan } from './core/tracing.ts';
import { ErrorBodySchema } from './core/http/responses.ts';
import { lazySchemas, type LazySchemas } from './core/http/lazy-schemas.ts';
import { apiKeyResolver, apiKeyRoutes, registerApiKeyAlongsideUser } from './features/api-keys/index.ts';
import { healthRoutes, metricsRoutes } from './features/health/index.ts';
import { identityRoutes } from './features/identity/index.ts';
import { authenticationRoutes, oauthRoutes, tokenResolver, wellKnownRoutes } from './features/auth/index.ts';
import { webhookEventsDocument, webhookRoutes } from './features/webhooks/index.ts';
import { metadataRoutes, type UsageProbe } from './features/metadata/index.ts';
import { actionRoutes } from './features/actions/index.ts';
import {
  ActionObjectSchema,
  assetsRoutes,
  assetTemplateUsage,
  readActionObject,
  shareMailsLastHour,
} from './features/assets/index.ts';
import { quotaRoutes, registerApiKeyRequestLimit } from './features/quotas/index.ts';
import { indexBeforeAnswer, savedSearchRoutes, searchRoutes } from './features/search/index.ts';
import { collectionRoutes } from './features/collections/index.ts';
import { storyboardRoutes, storyboardSharedRoutes } from './features/storyboards/index.ts';
import { adaptiveTemplateLaunchRoutes, adaptiveTemplateRoutes } from './features/adaptive-templates/index.ts';
import { cdnRoutes } from './features/cdn/index.ts';
import { webAppRoutes } from './features/web-app/index.ts';
import { scimRoutes } from './features/scim/index.ts';

/**
 * CORS for in-browser integrations (TESSERA_CORS_ORIGINS). Preflights are answered before
 * authentication, and every response — errors included — carries the headers, so a browser
 * client can read a 401. Credentials travel in headers (AccessToken, Authorization, X-API-Key),
 * never cookies, so `Access-Control-Allow-Credentials` is not needed.
 */
async function registerCors(app: App, origins: readonly string[]): Promise<void> {
  await app.register(cors, {
    origin: origins[0] === '*' ? '*' : [...origins],
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['AccessToken', 'Authorization', 'X-API-Key', 'Content-Type', 'X-Request-Id', 'Idempotency-Key'],
    exposedHeaders: ['X-Request-Id', 'Retry-After', 'WWW-Authenticate', 'Location'],
    maxAge: 600,
  });
}

/** The docs page's logo and icon: four mosaic tiles and the name. */
const TESSERA_LOGO = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="150" height="32" viewBox="0 0 150 32"><title>Tessera</title>' +
    '<rect x="0" y="0" width="14" height="14" rx="2" fill="#2f6fde"/><rect x="16" y="0" width="14" height="14" rx="2" fill="#f2a93b"/>' +
    '<rect x="0" y="16" width="14" height="14" rx="2" fill="#3bb273"/><rect x="16" y="16" width="14" height="14" rx="2" fill="#e4572e"/>' +
    '<text x="38" y="24" font-family="Helvetica, Arial, sans-serif" font-size="22" font-weight="700" fill="#ffffff">Tessera</text></svg>',
);

/**
 * `Content-Type: application/json` with an empty body is "no body" (clients of the reference send
 * it on DELETEs and other body-less calls); a route that needs a body still answers 400 naming it.
 */
function acceptEmptyJsonBodies(app: App): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body.length === 0 || (typeof body === 'string' && body.trim() === '')) return done(null, undefined);
    return parseJson(request, body as string, done);
  });
}

export interface BuildAppOptions {
  /** Extra credential resolvers, tried before the built-in ones (only tests pass any; production never does). */
  extraResolvers?: CredentialResolver[];
  /** Extra metadata usage probes, after the built-in ones (only tests pass any; production never does). */
  usageProbes?: UsageProbe[];
  /** Called for every route as it is registered (the OpenAPI completeness test uses it). */
  onRoute?: (route: { method: string | string[]; url: string; hidden: boolean }) => void;
}

function trustHops(hops: number) {
  return (_address: string, hop: number) => hop < hops;
}

const schemasOf = new WeakMap<App, LazySchemas>();

/**
 * Route schemas are compiled when a route first needs them (see core/http/lazy-schemas.ts); this
 * compiles all the rest now, so that a test sees a broken schema without calling its route.
 */
export function compileRouteSchemas(app: App): number {
  return schemasOf.get(app)?.compileAll() ?? 0;
}

/**
 * One route table served at its own paths and again under `alias`: both are real routes, but the
 * alias is hidden from the OpenAPI document, so each operation is listed (and named) once.
 */
async function registerWithHiddenAlias(app: App, routes: (scope: App) => void, alias: string): Promise<void> {
  await app.register(async (scope: App) => routes(scope));
  await app.register(
    async (scope: App) => {
      scope.addHook('onRoute', (route) => {
        route.schema = { ...route.schema, hide: true };
      });
      routes(scope);
    },
    { prefix: alias },
  );
}

/** The whole HTTP surface. Tests and production build it the same way. */
export async function buildApp(deps: Deps, options: BuildAppOptions = {}): Promise<App> {
  const schemas = lazySchemas();
  const app = Fastify({
    schemaController: schemas.schemaController,
    loggerInstance: deps.log,
    genReqId: requestIdFor,
    bodyLimit: deps.config.bodyLimitBytes,
    // Slow clients are cut off (Fastify's own defaults leave the request time unlimited): 408 for
    // headers or a body that takes too long, a close for a silent connection. Node checks the
    // first two every connectionsCheckingInterval, so that follows the smaller of them.
    requestTimeout: deps.config.http.requestTimeoutMs,
    connectionTimeout: deps.config.http.idleTimeoutMs,
    keepAliveTimeout: deps.config.http.keepAliveTimeoutMs,
    http: {
      headersTimeout: deps.config.http.headersTimeoutMs,
      requestTimeout: deps.config.http.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(deps.config.http.headersTimeoutMs / 4))),
    },
    // A hop count believes only the n nearest proxies (Fastify's own number handling, typed as a function).
    trustProxy: typeof deps.config.trustProxy === 'number' ? trustHops(deps.config.trustProxy) : deps.config.trustProxy,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    frameworkErrors,
    clientErrorHandler,
    ajv: { customOptions: { removeAdditional: true, coerceTypes: 'array', useDefaults: true, allErrors: false } },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;
  schemasOf.set(app, schemas);

  if (options.onRoute) {
    const report = options.onRoute;
    // `hidden` is read when asked: hooks of inner scopes (which run after this one) may still hide the route.
    app.addHook('onRoute', (route) =>
      report({
        method: route.method,
        url: route.url,
        get hidden() {
          return Boolean((route.schema as { hide?: boolean } | undefined)?.hide);
        },
      }),
    );
  }
  // Every handler runs with its request as the origin of the audit rows it writes (core/audit.ts).
  registerRequestContext(app);
  app.removeContentTypeParser('text/plain');
  acceptEmptyJsonBodies(app);
  // A request that committed an asset write answers once the search index covers it, so its
  // client's next search (on any process) finds it, and searches need not index first (decision 0027).
  // The hook is synchronous unless there is a pass to wait for. A handler that calls `reply.send`
  // and then resolves to `undefined` would make Fastify send again while the first answer waits (its
  // reply is not yet written): such handlers await the reply instead (GET /v1/user, GET
  // /v1/asset/{id}), and as a guard for any other, a second send while an answer waits is dropped
  // rather than going out first, empty, or failing with ERR_HTTP_HEADERS_SENT.
  const waitingForIndex = new WeakSet<FastifyRequest>();
  app.addHook('onSend', (request, _reply, payload, done) => {
    if (waitingForIndex.has(request)) return;
    const wait = indexBeforeAnswer(deps, request);
    if (wait === undefined) return done(null, payload);
    waitingForIndex.add(request);
    void wait.then(() => {
      waitingForIndex.delete(request);
      done(null, payload);
    });
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // Draining (SIGTERM): each answer ends its connection, so clients reconnect to another process.
    if (deps.lifecycle.draining) reply.header('connection', 'close');
  });
  // Prometheus (GET /metrics): each answer by its route pattern, when metrics are on (core/metrics.ts).
  const metrics = deps.metrics;
  if (metrics)
    app.addHook('onResponse', (request, reply, done) => {
      metrics.observeRequest(
        request.method,
        request.routeOptions.url ?? 'unmatched',
        reply.statusCode,
        reply.elapsedTime / 1000,
      );
      done();
    });
  // OpenTelemetry (core/tracing.ts): a server span per request, when an OTLP endpoint is configured.
  const tracing = deps.tracing;
  if (tracing) {
    const spans = new WeakMap<object, RequestSpan>();
    app.addHook('onRequest', (request, _reply, done) => {
      const header = request.headers.traceparent;
      const span = tracing.startRequest(request.method, typeof header === 'string' ? header : undefined);
      spans.set(request, span);
      setActiveTraceparent(request, span.traceparent);
      done();
    });
    app.addHook('onResponse', (request, reply, done) => {
      spans.get(request)?.end(request.routeOptions.url ?? 'unmatched', reply.statusCode, String(request.id));
      done();
    });
  }
  registerErrorHandling(app);
  registerInputGuards(app);
  await app.register(helmet, { contentSecurityPolicy: false, global: true });
  if (deps.config.corsOrigins.length > 0) await registerCors(app, deps.config.corsOrigins);
  app.addSchema(ErrorBodySchema);
  // The shared schemas as written, by $id: Fastify keeps a copy without the document-only marks
  // (core/http/doc-schema.ts), which /openapi.json needs. Plugin scopes inherit this addSchema.
  const shared: Record<string, unknown> = {};
  const addSchema = app.addSchema;
  app.addSchema = function (this: App, schema: { $id?: string }) {
    if (schema.$id) shared[schema.$id] = schema;
    return addSchema.call(this, schema);
  } as typeof app.addSchema;
  const sharedSchemas = () => shared;

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Tessera Content Asset Platform API',
        version: '1.5.0',
        description: 'Self-hostable digital asset management. Compatible with the Content Asset Platform API v1.5.',
      },
      servers: [{ url: deps.config.publicUrl }],
      components: {
        securitySchemes: {
          AccessToken: {
            type: 'apiKey',
            in: 'header',
            name: 'AccessToken',
            description: 'session.accessToken from POST /v1/auth/token',
          },
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'session.authorization (raw or with Bearer)',
          },
          ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key (tsk_…)' },
        },
      },
      security: [{ AccessToken: [] }, { bearerAuth: [] }, { ApiKeyAuth: [] }],
    },
    // Document-only marks (core/http/doc-schema.ts): fields the services require, raw and multipart bodies.
    transform: openApiTransform,
    transformObject: openApiTransformObject(sharedSchemas, () => ({ webhooks: webhookEventsDocument() })),
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    theme: {
      title: 'Tessera API reference',
      favicon: [{ filename: 'favicon.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: TESSERA_LOGO }],
    },
    logo: { type: 'image/svg+xml', content: TESSERA_LOGO, href: '/docs', target: '_self' },
  });
  app.get(
    '/openapi.json',
    {
      config: { public: true },
      schema: {
        operationId: 'GetOpenApiDocument',
        tags: ['system'],
        summary: 'This OpenAPI 3.1 document',
        security: [],
        response: {
          200: docAs(Type.Object({}, { additionalProperties: true }), {
            type: 'object',
            description: 'OpenAPI 3.1 document (https://spec.openapis.org/oas/v3.1.0)',
            required: ['openapi', 'info', 'paths'],
            properties: {
              openapi: { const: '3.1.0' },
              info: {
                type: 'object',
                required: ['title', 'version'],
                properties: { title: { type: 'string' }, version: { type: 'string' }, description: { type: 'string' } },
              },
              servers: {
                type: 'array',
                items: { type: 'object', required: ['url'], properties: { url: { type: 'string' } } },
              },
              security: {
                type: 'array',
                items: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
              },
              paths: {
                type: 'object',
                description: 'Path → Path Item (method → Operation)',
                additionalProperties: { type: 'object', additionalProperties: anyJsonDoc('An Operation object') },
              },
              webhooks: {
                type: 'object',
                description: 'Event type → the request Tessera sends a webhook endpoint',
                additionalProperties: { type: 'object', additionalProperties: anyJsonDoc('An Operation object') },
              },
              components: {
                type: 'object',
                properties: {
                  schemas: { type: 'object', additionalProperties: anyJsonDoc('A JSON Schema') },
                  securitySchemes: { type: 'object', additionalProperties: anyJsonDoc('A Security Scheme object') },
                },
              },
            },
          }),
        },
      },
    },
    async () => app.swagger(),
  );

  healthRoutes(app, deps);
  metricsRoutes(app, deps);
  wellKnownRoutes(app, deps);
  webAppRoutes(app, deps);

  // Everything below requires credentials unless a route says `config: { public: true }`.
  await app.register(async (api: App) => {
    // Order matters: user credentials come before API keys, so that when both are sent the user
    // is the principal (and the key is only checked to belong to the same organization).
    const resolvers: CredentialResolver[] = [tokenResolver(deps), apiKeyResolver(deps)];
    registerAuthentication(api, [...(options.extraResolvers ?? []), ...resolvers]);
    registerApiKeyAlongsideUser(api, deps);
    // Requests of an API key count against the organization's per-key limit (features/quotas).
    registerApiKeyRequestLimit(api, deps);
    await api.register(
      async (v1: App) => {
        identityRoutes(v1, deps);
        authenticationRoutes(v1, deps);
        // The login page offers the organization's identity providers; signing out ends their session too.
        await oauthRoutes(v1, deps, ssoOAuthHooks(deps));
        ssoRoutes(v1, deps);
        // Cross-feature hooks are wired here, never registered at import time: metadata asks assets
        // what uses a template; GET /v1/action/{id} reads Action objects, which assets store.
        metadataRoutes(v1, deps, { usageProbes: [assetTemplateUsage, ...(options.usageProbes ?? [])] });
        actionRoutes(v1, deps, { objectSchema: ActionObjectSchema, readObject: readActionObject });
        assetsRoutes(v1, deps);
        searchRoutes(v1, deps);
        savedSearchRoutes(v1, deps);
        collectionRoutes(v1, deps);
        cdnRoutes(v1, deps);
        auditRoutes(v1, deps);
        storyboardRoutes(v1, deps);
        adaptiveTemplateRoutes(v1, deps);
        // Usage shown beside the quotas: share mails are counted in the assets feature's outbox.
        quotaRoutes(v1, deps, { shareMailUsage: shareMailsLastHour });
      },
      { prefix: '/v1' },
    );
    await api.register(
      async (keys: App) => {
        apiKeyRoutes(keys, deps);
      },
      { prefix: '/api/v1/api-key' },
    );
    // SCIM 2.0 provisioning for identity providers (an API key as the bearer token; features/scim).
    await scimRoutes(api, deps);
    // The spec shows webhook paths without a version; the reference serves them under /v1 too.
    await registerWithHiddenAlias(api, (scope) => webhookRoutes(scope, deps), '/v1');
    // Public pages outside /v1: story-board share links and the adaptive-template launch page.
    await api.register(async (scope: App) => storyboardSharedRoutes(scope, deps));
    await api.register(async (scope: App) => adaptiveTemplateLaunchRoutes(scope, deps));
  });

  await app.ready();
  return app;
}
