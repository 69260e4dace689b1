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

/** Prints rows as a Markdown table (the format the closing notes quote). */
export function printTable(title: string, header: string[], rows: (string | number)[][]): void {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(`\n### ${title}\n`);
  console.log(line(cells[0]!));
  console.log(`| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`);
  for (const r of cells.slice(1)) console.log(line(r));
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
  const config = parseConfig({ TESSERA_DATA_DIR: dataDir, TESSERA_LOG_LEVEL: 'silent', TESSERA_SECRET_KEY: 'bench-secret-key-0123456789abcdef0123', PORT: '0', ...env });
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
export async function measure(n: number, fn: (i: number) => Promise<unknown>, options: { warmup?: number; concurrency?: number } = {}): Promise<number[]> {
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
