import { createHash, timingSafeEqual } from 'node:crypto';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * This process's Prometheus metrics (GET /metrics, docs/operations.md "Metrics"), one registry per
 * Deps so that tests building several apps in one process keep them apart. Series:
 * - tessera_http_requests_total / tessera_http_request_duration_seconds {method, route, status}
 * - tessera_jobs {kind, state} and tessera_job_oldest_age_seconds {kind}: the queue, read at scrape
 * - tessera_webhook_deliveries_total {outcome}: succeeded, retrying, exhausted
 * - tessera_db_pool_connections {state}: total, idle, waiting (PostgreSQL; SQLite has one connection)
 * - the edge's own (tessera_edge_*) on its control port (src/edge/edge-metrics.ts)
 * - Node's process metrics (CPU, memory, event-loop lag, GC), prefixed tessera_
 */
export interface Metrics {
  readonly registry: Registry;
  /** One request answered: the route's pattern (never the raw URL, which would be unbounded). */
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  readonly webhookDeliveries: Counter<'outcome'>;
  /** Adds a series read when scraped (queue depth, pool use). */
  onScrape(collect: () => Promise<void> | void): void;
  readonly gauges: {
    readonly jobs: Gauge<'kind' | 'state'>;
    readonly jobOldestAge: Gauge<'kind'>;
    readonly dbPool: Gauge<'state'>;
  };
  /** The Prometheus text exposition (runs the scrape-time collectors first). */
  render(): Promise<{ contentType: string; body: string }>;
}

const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createMetrics(role: string): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ role });
  collectDefaultMetrics({ register: registry, prefix: 'tessera_' });
  const requests = new Counter({
    name: 'tessera_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const durations = new Histogram({
    name: 'tessera_http_request_duration_seconds',
    help: 'HTTP request latency from the first byte read to the last byte written, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const webhookDeliveries = new Counter({
    name: 'tessera_webhook_deliveries_total',
    help: 'Webhook delivery attempts recorded, by outcome (succeeded, retrying, exhausted)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const collectors: (() => Promise<void> | void)[] = [];
  const gauges = {
    jobs: new Gauge({
      name: 'tessera_jobs',
      help: 'Background jobs by kind and state (pending: waiting for their time or a worker; running: leased)',
      labelNames: ['kind', 'state'] as const,
      registers: [registry],
    }),
    jobOldestAge: new Gauge({
      name: 'tessera_job_oldest_age_seconds',
      help: 'Age of the oldest job of a kind that is due and not finished (0 when none)',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    dbPool: new Gauge({
      name: 'tessera_db_pool_connections',
      help: 'Database connections of this process by state (total, idle, waiting for a connection)',
      labelNames: ['state'] as const,
      registers: [registry],
    }),
  };
  // The children are cached: a label lookup hashes its values, a Map lookup by one string is cheaper.
  type Child = { count: { inc(): void }; time: { observe(v: number): void } };
  const children = new Map<string, Child>();
  return {
    registry,
    webhookDeliveries,
    gauges,
    observeRequest(method, route, status, seconds) {
      const key = `${method} ${status} ${route}`;
      let child = children.get(key);
      if (child === undefined) {
        const labels = { method, route, status: String(status) };
        child = { count: requests.labels(labels), time: durations.labels(labels) };
        // Route patterns and statuses are bounded, but a runaway set must not grow memory for ever.
        if (children.size < 5000) children.set(key, child);
      }
      child.count.inc();
      child.time.observe(seconds);
    },
    onScrape(collect) {
      collectors.push(collect);
    },
    async render() {
      await Promise.all(collectors.map(async (collect) => collect()));
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}

/** A scrape's `Authorization: Bearer <token>` against TESSERA_METRICS_TOKEN, in constant time. */
export function scrapeAllowed(expected: string, authorization: string | string[] | undefined): boolean {
  const header = Array.isArray(authorization) ? authorization[0] : authorization;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!match) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(match[1]!), digest(expected));
}
