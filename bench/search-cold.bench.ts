// Search from a cold start at 1,000,000 assets on SQLite (issue 30 item 3, issue 28 item 4): a
// process opens the search benchmark's corpus (search-corpus-db.ts) and fires searches — the
// search benchmark's query shapes in turn, one at a time, as a user would — from its first moment,
// for SEARCH_COLD_SECONDS (default 60). Two ways, each in a fresh process, side by side:
// - now: the index loads in the background at start (search.warmup.ts); a search arriving before
//   it is ready takes the SQL (FTS5) path;
// - before (baseline): the first search of the organization loads the index and waits for it, as
//   every search did before the warm-up.
// Printed: the worst search latency in the window, p50/p99, searches answered by each path, time
// until the index is ready, and the index's memory per million assets (its own count of bytes, and
// the process's RSS and heap growth across the load). Target: worst ≤ 1 s.
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadUserPrincipal } from '../src/features/identity/index.ts';
import {
  loadMemoryIndex,
  memoryIndexLoaded,
  memoryIndexStats,
  runSearch,
  specFromBody,
  startSearchIndexWarmup,
} from '../src/features/search/index.ts';
import { fmt, percentile, printTable } from './lib.ts';
import { rng, termAt } from './search-corpus.ts';
import { corpusDb, ensureCorpus } from './search-corpus-db.ts';

const N = Number(process.env.SEARCH_BENCH_N ?? 1_000_000);
const SECONDS = Number(process.env.SEARCH_COLD_SECONDS ?? 60);
const log = (line: string) => process.stderr.write(`${line}\n`);

interface Outcome {
  mode: string;
  searches: number;
  bySql: number;
  byIndex: number;
  worstMs: number;
  worstQuery: string;
  p50: number;
  p99: number;
  firstMs: number;
  readyMs: number;
  listeningMs: number;
  indexBytes: number;
  rssGrowth: number;
  heapGrowth: number;
  worstBeforeReady: number;
  worstAfterReady: number;
}

async function child(mode: 'now' | 'before'): Promise<Outcome> {
  const s = await ensureCorpus(N, log);
  const { open } = corpusDb(N);
  const mem0 = process.memoryUsage();
  const started = performance.now();
  const deps = open();
  const principal = (await loadUserPrincipal(deps.db, s.userId))!;
  const common = [0, 1, 2].map(termAt);
  const mid = [100, 300, 1000].map(termAt);
  const rare = [5000, 12000, 19000].map(termAt);
  const r = rng(7);
  const pick = (list: string[]) => list[Math.floor(r() * list.length)]!;
  const shapes: { name: string; terms: () => string[] }[] = [
    { name: '1 term, most common word', terms: () => [common[0]!] },
    { name: '1 term, one of the 3 most common', terms: () => [pick(common)] },
    { name: '1 term, mid-frequency', terms: () => [pick(mid)] },
    { name: '1 term, rare', terms: () => [pick(rare)] },
    { name: '2 terms, common + common', terms: () => [common[0]!, common[1]!] },
    { name: '2 terms, common + mid', terms: () => [pick(common), pick(mid)] },
    { name: '3 terms, common + mid + common', terms: () => [common[0]!, pick(mid), common[2]!] },
    { name: 'prefix of a common word', terms: () => [`${common[1]!.slice(0, 3)}*`] },
    { name: 'browse: *', terms: () => ['*'] },
  ];
  let readyMs = -1;
  let memAtReady = mem0;
  let indexBytes = 0;
  const noteReady = () => {
    if (readyMs < 0 && memoryIndexLoaded(deps.db, s.orgId)) {
      readyMs = performance.now() - started;
      memAtReady = process.memoryUsage();
      indexBytes = memoryIndexStats(deps.db).find((x) => x.orgId === s.orgId)?.bytes ?? 0;
    }
  };
  // As `serve` does before listening: snapshots are read, organizations without one build in the background.
  if (mode === 'now') await startSearchIndexWarmup(deps);
  const listeningMs = performance.now() - started;
  const times: number[] = [];
  let bySql = 0;
  let byIndex = 0;
  let worst = 0;
  let worstQuery = '';
  let worstBefore = 0;
  let worstAfter = 0;
  for (let i = 0; performance.now() - started < SECONDS * 1000; i++) {
    const shape = shapes[i % shapes.length]!;
    const a = performance.now();
    const wasReady = memoryIndexLoaded(deps.db, s.orgId);
    // Before the warm-up, the first search of an organization loaded its index and waited for it.
    if (mode === 'before' && !wasReady) await loadMemoryIndex(deps.db, s.orgId);
    await runSearch(deps, principal, specFromBody({ searchTerm: shape.terms() }), {
      from: 0,
      limit: 50,
      facets: { names: ['File Type', 'Metadata Template', 'Keywords'], size: 10 },
    });
    const ms = performance.now() - a;
    times.push(ms);
    if (wasReady || mode === 'before') byIndex += 1;
    else bySql += 1;
    if (ms > worst) {
      worst = ms;
      worstQuery = shape.name;
    }
    if (wasReady) worstAfter = Math.max(worstAfter, ms);
    else worstBefore = Math.max(worstBefore, ms);
    noteReady();
  }
  // The warm-up may still run when the window closes.
  await deps.runtime.search.warmup.running;
  noteReady();
  const out: Outcome = {
    mode,
    searches: times.length,
    bySql,
    byIndex,
    worstMs: worst,
    worstQuery,
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    firstMs: times[0] ?? 0,
    readyMs,
    listeningMs: mode === 'now' ? listeningMs : 0,
    indexBytes,
    rssGrowth: memAtReady.rss - mem0.rss,
    heapGrowth: memAtReady.heapUsed - mem0.heapUsed,
    worstBeforeReady: worstBefore,
    worstAfterReady: worstAfter,
  };
  await deps.close();
  return out;
}

if (process.argv[2] === '--child') {
  const mode = process.argv[3] === 'before' ? 'before' : 'now';
  process.stdout.write(`${JSON.stringify(await child(mode))}\n`);
  process.exit(0);
}

await ensureCorpus(N, log);
const load0 = loadavg();
const run = (mode: string): Outcome => {
  const res = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: process.env,
    maxBuffer: 1 << 20,
  });
  if (res.status !== 0) throw new Error(`the ${mode} run failed (${res.status})`);
  return JSON.parse(res.stdout.toString('utf8').trim().split('\n').pop()!) as Outcome;
};
const now = run('now');
const before = run('before');
const load1 = loadavg();
const mib = (n: number) => (n / 1048576).toFixed(1);
const perMillion = (n: number) => mib((n * 1_000_000) / N);
printTable(
  `Searches from a cold start, ${N} assets, SQLite: one search at a time for ${SECONDS} s from the process's start (ms)`,
  ['measure', 'now (index loads in the background; SQL path meanwhile)', 'before (the first search loads the index)'],
  [
    ['worst search latency in the window', fmt(now.worstMs), fmt(before.worstMs)],
    ['… its query', now.worstQuery, before.worstQuery],
    ['first search', fmt(now.firstMs), fmt(before.firstMs)],
    ['worst search before the index was ready', fmt(now.worstBeforeReady), fmt(before.worstBeforeReady)],
    ['worst search once the index was ready', fmt(now.worstAfterReady), fmt(before.worstAfterReady)],
    ['p50 / p99 over the window', `${fmt(now.p50)} / ${fmt(now.p99)}`, `${fmt(before.p50)} / ${fmt(before.p99)}`],
    [
      'searches (SQL path / index)',
      `${now.searches} (${now.bySql} / ${now.byIndex})`,
      `${before.searches} (${before.bySql} / ${before.byIndex})`,
    ],
    ['time from start until the index is ready', fmt(now.readyMs), fmt(before.readyMs)],
    ['time from start until searches are taken (serve listens)', fmt(now.listeningMs), fmt(before.listeningMs)],
  ],
  {
    'now (index loads in the background; SQL path meanwhile)':
      'this build: snapshots read before listening, the rest loaded in the background while searches take the SQL path',
    'before (the first search loads the index)':
      'the old behaviour, run in the same bench: the first search of an organization builds its index',
  },
);
printTable(
  `The in-memory index's memory, per 1,000,000 assets (MiB; measured at ${N})`,
  ['measure', 'now', 'before'],
  [
    ["the index's own count of its bytes", perMillion(now.indexBytes), perMillion(before.indexBytes)],
    ['process RSS growth from start to ready', perMillion(now.rssGrowth), perMillion(before.rssGrowth)],
    ['JS heap growth from start to ready', perMillion(now.heapGrowth), perMillion(before.heapGrowth)],
  ],
  {
    now: 'this build (background load, snapshots)',
    before: 'the old behaviour (the first search builds the index), same bench',
  },
);
const ratio = now.worstMs / 1000;
console.log(
  `\nTarget: worst search ≤ 1000 ms in the first ${SECONDS} s after a start. Now: ${fmt(now.worstMs)} ms (${ratio.toFixed(2)}× the target); before: ${fmt(before.worstMs)} ms.`,
);
console.log(
  `Load average (1, 5, 15 min) at the start: ${load0.map((x) => x.toFixed(2)).join(', ')}; at the end: ${load1.map((x) => x.toFixed(2)).join(', ')} (2 cores).`,
);
