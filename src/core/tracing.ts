import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { stripPaths } from './recorded-error.ts';

/**
 * Optional OpenTelemetry traces (docs/operations.md › Traces): a server span per API request and a
 * consumer span per job run, exported over OTLP/HTTP to the collector that OTEL_EXPORTER_OTLP_ENDPOINT
 * (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) names. A job enqueued while a request is handled carries the
 * request span's W3C `traceparent`, so its run joins the request's trace in whatever process it runs.
 * Unset, nothing of the SDK is loaded and a request pays one `undefined` check.
 */
export interface Tracing {
  /** Starts the span of an incoming request; `traceparent` is the caller's header, if any. */
  startRequest(method: string, traceparent: string | undefined): RequestSpan;
  /** Runs a job's handler inside a span whose parent is the traceparent stored with the job. */
  runJob<T>(job: JobSpanInfo, run: () => Promise<T>): Promise<T>;
  /** Exports what is buffered and stops (on shutdown). */
  shutdown(): Promise<void>;
}

export interface RequestSpan {
  /** W3C traceparent of this span: what a job enqueued by the request records. */
  readonly traceparent: string;
  end(route: string, status: number, requestId: string): void;
}

export interface JobSpanInfo {
  id: string;
  type: string;
  attempt: number;
  requestId: string | null;
  traceparent: string | null;
}

export interface TracingSettings {
  /** Full URL of the OTLP/HTTP traces endpoint (…/v1/traces). */
  readonly endpoint: string;
  readonly serviceName: string;
  /** Extra headers for the exporter (OTEL_EXPORTER_OTLP_HEADERS: `k=v,k2=v2`). */
  readonly headers: Readonly<Record<string, string>>;
  /** Share of root traces kept, 0…1 (a caller's sampled flag is followed). */
  readonly sampleRatio: number;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The W3C traceparent's parts, or undefined when it is malformed (then a new trace starts). */
export function parseTraceparent(
  header: string | undefined | null,
): { traceId: string; spanId: string; sampled: boolean } | undefined {
  if (typeof header !== 'string') return undefined;
  const match = TRACEPARENT.exec(header.trim());
  if (!match) return undefined;
  const [, traceId, spanId, flags] = match as unknown as [string, string, string, string];
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
}

/** The traceparent of the request now being handled (set by the request hook), for jobs it enqueues. */
const activeParents = new WeakMap<object, string>();
export function setActiveTraceparent(request: object, traceparent: string): void {
  activeParents.set(request, traceparent);
}
export function activeTraceparent(request: object | undefined): string | null {
  return request === undefined ? null : (activeParents.get(request) ?? null);
}

/**
 * Loads the SDK and the OTLP exporter (only when traces are configured; synchronously, so that
 * createDeps stays synchronous: the packages ship CommonJS).
 */
export function createTracing(settings: TracingSettings, role: string): Tracing {
  const require = createRequire(import.meta.url);
  const api = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
  const { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } =
    require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');

  const exporter = new OTLPTraceExporter({ url: settings.endpoint, headers: { ...settings.headers } });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.name': settings.serviceName,
      'service.instance.id': randomBytes(8).toString('hex'),
      'tessera.role': role,
    }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.sampleRatio) }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000, maxQueueSize: 4096 })],
  });
  const tracer = provider.getTracer('tessera');

  const parentContext = (traceparent: string | null | undefined) => {
    const parent = parseTraceparent(traceparent);
    if (!parent) return api.ROOT_CONTEXT;
    return api.trace.setSpanContext(api.ROOT_CONTEXT, {
      traceId: parent.traceId,
      spanId: parent.spanId,
      traceFlags: parent.sampled ? api.TraceFlags.SAMPLED : api.TraceFlags.NONE,
      isRemote: true,
    });
  };
  const traceparentOf = (span: import('@opentelemetry/api').Span): string => {
    const context = span.spanContext();
    return `00-${context.traceId}-${context.spanId}-${(context.traceFlags & 1) === 1 ? '01' : '00'}`;
  };

  return {
    startRequest(method, traceparent) {
      const span = tracer.startSpan(
        method,
        { kind: api.SpanKind.SERVER, attributes: { 'http.request.method': method } },
        parentContext(traceparent),
      );
      return {
        traceparent: traceparentOf(span),
        end(route, status, requestId) {
          span.updateName(`${method} ${route}`);
          span.setAttributes({
            'http.route': route,
            'http.response.status_code': status,
            'tessera.request_id': requestId,
          });
          if (status >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR });
          span.end();
        },
      };
    },
    async runJob(job, run) {
      const span = tracer.startSpan(
        `job ${job.type}`,
        {
          kind: api.SpanKind.CONSUMER,
          attributes: {
            'tessera.job.id': job.id,
            'tessera.job.type': job.type,
            'tessera.job.attempt': job.attempt,
            ...(job.requestId === null ? {} : { 'tessera.request_id': job.requestId }),
          },
        },
        parentContext(job.traceparent),
      );
      try {
        return await run();
      } catch (error) {
        span.setStatus({
          code: api.SpanStatusCode.ERROR,
          message: stripPaths(error instanceof Error ? error.message : 'failed').slice(0, 500),
        });
        throw error;
      } finally {
        span.end();
      }
    },
    async shutdown() {
      await provider.shutdown();
    },
  };
}
