import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.ts';
import { parseConfig } from '../src/config.ts';
import { createDeps, type Deps } from '../src/deps.ts';
import { migrateToLatest } from '../src/core/db/migrate.ts';
import type { App } from '../src/core/http/app-types.ts';

/** p-th percentile (0–100) of a list of numbers. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export function fmt(ms: number, digits = 2): string {
  return Number.isFinite(ms) ? ms.toFixed(digits) : '—';
}

/**
 * What each column means, so every table explains itself. A column not listed here needs an entry
 * in printTable's `legend` argument.
 */
export const COLUMN_GLOSSARY: Record<string, string> = {
  engine: 'database engine: sqlite (embedded file) or postgres',
  database: 'database engine: sqlite (embedded file) or postgres',
  server: 'what answered: Tessera, or a bare node:http / Fastify server as the floor for the same request',
  receiver: 'the HTTP server receiving the webhooks',
  implementation: "which code computed the result (Tessera's, or a reference library measured in the same run)",
  operation: 'the API call measured',
  request: 'the API call measured',
  path: 'how the work reached the server',
  metric: 'what is measured',
  target: 'the goal for this metric',
  n: 'how many timed calls (after an untimed warm-up)',
  requests: 'how many timed requests',
  keys: 'how many API keys existed in the database',
  messages: 'how many webhook messages were sent',
  concurrency: 'requests in flight at once',
  failed: 'requests that did not succeed (should be 0)',
  'p50 ms': 'median time per call in milliseconds: half of the calls were faster',
  'p90 ms': '90th percentile in milliseconds: 1 call in 10 was slower',
  'p99 ms': '99th percentile in milliseconds: 1 call in 100 was slower',
  'added p50 ms': 'median time added over the baseline row of the same table, same run',
  'added p99 ms': '99th-percentile time added over the baseline row of the same table, same run',
  'target p99': 'the goal for the 99th percentile',
  'original avg': 'the average the reference product publishes for the same call (its documentation), for comparison',
  'DB queries': 'database queries run per request (counted, not estimated)',
  'DB queries/req': 'database queries run per request (counted, not estimated)',
  'req/s': 'requests completed per second',
  'deliveries/s': 'webhook deliveries completed per second',
  '× raw': 'deliveries/s divided by the raw signed send (no database) of the same run; 1.00 for the baseline itself',
  'deliveries/s (median round)': 'webhook deliveries per second, median over the rounds',
  'range /s': 'slowest and fastest round, deliveries per second',
  'rounds × deliveries': 'how many rounds, each of how many deliveries',
  'attempts recorded/received':
    'delivery attempts written to the database / requests the receiver got (equal: nothing lost)',
  'commit→first attempt p50 ms': "median time from the event's commit to the first delivery attempt, in milliseconds",
  'µs/op': 'microseconds per operation (lower is better)',
  object: 'the file requested (its size)',
  'MB/s': 'megabytes of response bodies per second',
  'all runs req/s': 'requests per second of every run, in order (the median is in req/s)',
  'Tessera edge': 'how the Tessera edge ran: one process, or several workers',
  'req/s ratio': "Tessera's requests per second divided by the peer's (above 1: Tessera is faster)",
  'p99 ratio (lower is better)': "Tessera's 99th-percentile latency divided by the peer's",
  'CPU µs/req':
    "CPU time (user + system) the server's own processes spent per request, in microseconds: independent of how much CPU other jobs on the machine took",
  'CPU efficiency ratio':
    "the peer's CPU time per request divided by Tessera's (above 1: Tessera needs less CPU per request)",
  '200 responses': 'requests answered 200 (should be all)',
  'origin fetches': 'requests that reached the origin (1: the others waited for it)',
  'all done ms': 'milliseconds until the last response',
  check: 'the validator measured',
  'documents/s': 'documents validated per second',
  'µs/document': 'microseconds per document (lower is better)',
  'assets/s': 'assets created per second',
  'vs bare insert': 'Tessera’s rate divided by a bare INSERT of the same row in the same run (1: as fast)',
  'p95 ms': '95th percentile in milliseconds: 1 call in 20 was slower',
  'ratio (p50)': 'median time divided by the baseline row’s median, same run (below 1: faster)',
  'time (s)': 'wall-clock seconds for the whole transfer',
  'vs raw': 'Tessera’s throughput divided by the raw baseline’s in the same run (1: as fast)',
  process: 'which process',
  'CPU s':
    'seconds of CPU (user + system, all threads) the process used during the measured work: independent of how much CPU other jobs on the machine took',
  'CPU s per GB': 'CPU seconds per GiB transferred',
  measure: 'what is measured',
  MB: 'megabytes',
  route: 'the API call measured',
  'requests/s': 'requests completed per second',
  errors: 'requests that did not succeed (should be 0)',
  'fraction of /healthz': 'requests per second as a fraction of GET /healthz (the framework’s own floor), same run',
  'idle (3 s after start)': 'resident memory 3 seconds after the server started, before any request',
  'peak under the load above': 'highest resident memory seen during the load runs above',
  query: 'the search query measured',
  'visible hits': 'how many matching assets the caller may see (the total the API reports)',
  runs: 'how many timed runs',
  'Tessera p50': 'Tessera’s median time in milliseconds',
  'Tessera p99': 'Tessera’s 99th-percentile time in milliseconds',
  'raw FTS5 BM25 top-50 p50':
    'median milliseconds of a bare FTS5 query for the BM25 top 50 of the same terms (no visibility, facets or total), same run',
  'raw FTS5 p99': '99th-percentile milliseconds of the bare FTS5 query, same run',
  'members returned': 'collection members in the answer (those the caller may view)',
  p50: 'median time per call in milliseconds',
  p99: '99th percentile in milliseconds',
  run: 'which run of the load',
  'policy: most checked (5 free + the locking one)':
    'the most password checks the throttling policy allows (5 free attempts and the one that locks)',
  'checked by Tessera (401)': 'attempts whose password was checked and refused',
  'refused before hashing (429)': 'attempts refused by the throttle without hashing a password',
  '5xx': 'server errors (should be 0)',
  token: 'the kind of credential measured',
  checks: 'how many credential checks were timed',
  'p50 µs': 'median time per check in microseconds',
  'p99 µs': '99th-percentile time per check in microseconds',
  'p50 vs baseline': 'median divided by the baseline row’s median, same run',
  'vs Ajv (same encoding)':
    'speed relative to Ajv, a general JSON Schema validator, on the same documents in the same run',
};

/** The glossary entry of a column, ignoring case. */
export function glossary(column: string): string | undefined {
  return (
    COLUMN_GLOSSARY[column] ??
    Object.entries(COLUMN_GLOSSARY).find(([name]) => name.toLowerCase() === column.toLowerCase())?.[1]
  );
}

/**
 * Prints rows as a Markdown table (the format the closing notes quote), followed by what each
 * column means: from COLUMN_GLOSSARY, or from `legend` for columns particular to one table.
 */
export function printTable(
  title: string,
  header: string[],
  rows: (string | number)[][],
  legend: Record<string, string> = {},
): void {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(`\n### ${title}\n`);
  console.log(line(cells[0]!));
  console.log(`| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`);
  for (const r of cells.slice(1)) console.log(line(r));
  console.log('');
  for (const column of header) {
    const meaning = legend[column] ?? glossary(column);
    console.log(`- ${column}: ${meaning ?? "see this benchmark's source"}`);
  }
}

export interface BenchServer {
  app: App;
  deps: Deps;
  url: string;
  close(): Promise<void>;
}

/** A real server on loopback with a fresh SQLite database (or DATABASE_URL when set). */
export async function startBenchServer(env: Record<string, string> = {}): Promise<BenchServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tessera-bench-'));
  const config = parseConfig({
    TESSERA_DATA_DIR: dataDir,
    TESSERA_LOG_LEVEL: 'silent',
    TESSERA_SECRET_KEY: 'bench-secret-key-0123456789abcdef0123',
    PORT: '0',
    ...env,
  });
  const deps = createDeps(config);
  await migrateToLatest(deps.db);
  const app = await buildApp(deps);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return {
    app,
    deps,
    url: `http://127.0.0.1:${port}`,
    async close() {
      await app.close();
      await deps.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Times `fn` `n` times (after `warmup` untimed calls), `concurrency` at a time; returns ms per call. */
export async function measure(
  n: number,
  fn: (i: number) => Promise<unknown>,
  options: { warmup?: number; concurrency?: number } = {},
): Promise<number[]> {
  for (let i = 0; i < (options.warmup ?? Math.min(50, n)); i++) await fn(-1 - i);
  const times: number[] = [];
  let next = 0;
  const lane = async () => {
    while (next < n) {
      const i = next++;
      const start = performance.now();
      await fn(i);
      times.push(performance.now() - start);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 1 }, lane));
  return times;
}

/**
 * Runs every better-sqlite3 statement of this thread (all, run, get, iterate) through `around`, with
 * the statement's text: for the profilers' SQL_STATS timings (bench/*-profile.ts).
 */
export function aroundSqliteStatements(around: (source: string, run: () => unknown) => unknown): void {
  const Sqlite = createRequire(import.meta.url)('better-sqlite3');
  const proto = Object.getPrototypeOf(new Sqlite(':memory:').prepare('select 1'));
  for (const method of ['all', 'run', 'get', 'iterate']) {
    const inner = proto[method];
    proto[method] = function (this: { source: string }, ...args: unknown[]) {
      return around(this.source, () => inner.apply(this, args));
    };
  }
}
