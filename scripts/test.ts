// Runs every test file with node:test, each file in its own process and process group, a few at a time.
// Each file covers both engines (SQLite and PostgreSQL; see test/helpers/context.ts); web/test holds the web
// app's browser tests (one real server, SQLite). Extra arguments narrow the files: `npm test -- src/features/identity`.
//
// Why not `node --test` with every file: its runner has no limit per file, and it waits for a file's output pipes
// to close, so one stuck file (a hung browser, or a server it started and never stopped) holds the whole run until
// CI is killed. Here a file that passes its limit is killed with everything it started, and reported as failed.
// A file that fails is run once more, and both runs are printed; the summary names every file that needed a second run
// (a test that fails only under load — five files at a time keep both cores busy — is a defect to fix, named there).
import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function collect(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== 'node_modules') collect(path, out);
    } else if (name.endsWith('.test.ts')) {
      out.push(path);
    }
  }
  return out;
}

const filters = process.argv.slice(2);
const durations = JSON.parse(readFileSync(new URL('./test-durations.json', import.meta.url), 'utf8')) as Record<
  string,
  number
>;
const expectedSeconds = (file: string) => durations[file] ?? 30;
const files = [...collect('src', []), ...collect('test', []), ...collect('web/test', [])]
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort()
  // Longest first (each file's seconds in a CI run, scripts/test-durations.json), so that no long file starts
  // near the end and runs alone while the other lanes sit idle. A file not listed yet counts as 30 s.
  .sort((a, b) => expectedSeconds(b) - expectedSeconds(a));
if (files.length === 0) {
  console.error(`No test files match ${filters.join(' ')}`);
  process.exit(1);
}
// node:test's async hook, left out of every test process (why: the file's own comment).
const NO_HARNESS_HOOK = new URL('../test/helpers/no-test-async-hook.ts', import.meta.url).href;
const concurrency = Math.max(1, Number(process.env.TESSERA_TEST_CONCURRENCY ?? '3'));
// A test, suite or hook still running after 8 minutes has hung (the slowest test takes well under a minute).
const testTimeout = process.env.TESSERA_TEST_TIMEOUT_MS ?? '480000';
// A whole file still running after 15 minutes is killed (the slowest file takes about 70 s alone).
const fileTimeout = Number(process.env.TESSERA_TEST_FILE_TIMEOUT_MS ?? '900000');

const COUNTS = ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo'] as const;
type Counts = Record<(typeof COUNTS)[number], number>;
interface Outcome {
  file: string;
  ok: boolean;
  counts: Counts;
  output: string;
  note?: string;
  /** Wall seconds, and CPU seconds of the file's process and every child it waited for (GNU time), when known. */
  wall: number;
  cpu?: number;
}

// Each file's CPU seconds, so that the summary can say which files cost the cores the most. Where the machine lets
// us make cpuacct cgroups (CI runs as root), each file runs in its own, which counts every process the file started,
// even one orphaned and killed with its group; elsewhere GNU time counts the file's process and the children it
// reaped. PostgreSQL's server processes are counted by neither.
const CPUACCT = '/sys/fs/cgroup/cpuacct';
const GNU_TIME = '/usr/bin/time';
const runId = `tessera-test-${process.pid}`;
const useCgroups = (() => {
  try {
    mkdirSync(join(CPUACCT, runId));
    return true;
  } catch {
    return false;
  }
})();
const timesDir = !useCgroups && existsSync(GNU_TIME) ? mkdtempSync(join(tmpdir(), 'tessera-test-times-')) : undefined;
let fileSeq = 0;

/** The machine's busy and total CPU time so far (/proc/stat, in clock ticks), for the run's busy share. */
function machineTicks(): { busy: number; total: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    return { busy: total - (fields[3] ?? 0) - (fields[4] ?? 0), total };
  } catch {
    return undefined;
  }
}

const running = new Set<ChildProcess>();

function killGroup(child: ChildProcess): void {
  try {
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function runFile(file: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const args = [`--import=${NO_HARNESS_HOOK}`, `--test-timeout=${testTimeout}`, '--test-reporter=spec', file];
    const seq = fileSeq++;
    const timesFile = timesDir ? join(timesDir, `${seq}.txt`) : undefined;
    const cgroup = useCgroups ? join(CPUACCT, runId, String(seq)) : undefined;
    if (cgroup) mkdirSync(cgroup);
    const begun = Date.now();
    const [command, argv] = cgroup
      ? ['/bin/sh', ['-c', `echo $$ > ${cgroup}/cgroup.procs && exec "$0" "$@"`, process.execPath, ...args]]
      : timesFile
        ? [GNU_TIME, ['-q', '-f', '%U %S', '-o', timesFile, process.execPath, ...args]]
        : [process.execPath, args];
    const child = spawn(command, argv, {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Renditions at normal priority: several test files share the cores, and a niced render process
      // (nice 10 in production, docs/decisions/0014) would wait behind every other file's work.
      env: {
        ...process.env,
        TESSERA_RENDER_NICE: process.env.TESSERA_RENDER_NICE ?? '0',
        // V8's code cache of every module, on disk, for the test processes and every server, worker and CLI they
        // start: importing the app took 1.1 s of CPU without it and 0.6 s with it, and a run starts hundreds.
        NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? join(tmpdir(), 'tessera-test-compile-cache'),
      },
    });
    running.add(child);
    let output = '';
    child.stdout!.on('data', (chunk) => {
      output += String(chunk);
    });
    child.stderr!.on('data', (chunk) => {
      output += String(chunk);
    });
    let note: string | undefined;
    const limit = setTimeout(() => {
      note = `killed: the file was still running after ${Math.round(fileTimeout / 1000)} s`;
      killGroup(child);
    }, fileTimeout);
    child.once('exit', (code, signal) => {
      clearTimeout(limit);
      // Whatever the file started and left behind (a server, a worker) goes with it; a grandchild that still holds
      // the output pipes must not hold the run, so the rest of the output is read for a moment at most.
      setTimeout(() => {
        killGroup(child);
        child.stdout!.destroy();
        child.stderr!.destroy();
        running.delete(child);
        const counts = Object.fromEntries(
          COUNTS.map((name) => [name, Number(new RegExp(`^ℹ ${name} (\\d+)$`, 'm').exec(output)?.[1] ?? 0)]),
        ) as Counts;
        const ok = code === 0 && note === undefined && counts.fail === 0 && counts.cancelled === 0;
        if (!ok && counts.fail + counts.cancelled === 0) counts.fail = 1;
        if (note === undefined && code !== 0) note = `exited with ${signal ?? `code ${code}`}`;
        let cpu: number | undefined;
        try {
          if (cgroup) {
            cpu = Number(readFileSync(join(cgroup, 'cpuacct.usage'), 'utf8')) / 1e9;
            rmdirSync(cgroup);
          }
        } catch {
          // a process of the file's is still leaving: the cgroup stays until the run's end
        }
        try {
          if (!cgroup) {
            const [user, system] = readFileSync(timesFile ?? '', 'utf8')
              .trim()
              .split(/\s+/)
              .map(Number);
            if (Number.isFinite(user) && Number.isFinite(system)) cpu = user + system;
          }
        } catch {
          // no GNU time, or the file was killed
        }
        resolve({ file, ok, counts, output, note, wall: (Date.now() - begun) / 1000, cpu });
      }, 500);
    });
  });
}

function print(outcome: Outcome, label = ''): void {
  process.stdout.write(`\n── ${outcome.file}${label}\n${outcome.output}`);
  if (outcome.note) process.stdout.write(`✖ ${outcome.file}: ${outcome.note}\n`);
}

async function main(): Promise<number> {
  const started = Date.now();
  const ticksAtStart = machineTicks();
  const queue = [...files];
  const outcomes: Outcome[] = [];
  const retried: string[] = [];
  async function lane(): Promise<void> {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      let outcome = await runFile(file);
      print(outcome);
      if (!outcome.ok) {
        retried.push(file);
        outcome = await runFile(file);
        print(outcome, ' (run again: a file that failed gets one more run)');
      }
      outcomes.push(outcome);
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, lane));

  const total = Object.fromEntries(
    COUNTS.map((name) => [name, outcomes.reduce((sum, o) => sum + o.counts[name], 0)]),
  ) as Counts;
  const failed = outcomes.filter((o) => !o.ok);
  process.stdout.write('\n');
  for (const o of retried) {
    const last = outcomes.find((x) => x.file === o);
    process.stdout.write(`ℹ run twice: ${o} (${last?.ok ? 'passed the second time' : 'failed both times'})\n`);
  }
  if (failed.length > 0) {
    process.stdout.write('\n✖ failing files:\n');
    for (const o of failed) {
      process.stdout.write(`\n${o.file}${o.note ? ` (${o.note})` : ''}\n`);
      const at = o.output.indexOf('✖ failing tests:');
      if (at >= 0) process.stdout.write(`${o.output.slice(at)}\n`);
    }
  }
  // The files that cost the most CPU (they decide how long a run on two cores takes), and the sum over all files.
  const byCpu = [...outcomes].sort((a, b) => (b.cpu ?? b.wall) - (a.cpu ?? a.wall));
  const cpuSum = outcomes.reduce((sum, o) => sum + (o.cpu ?? 0), 0);
  const wallSum = outcomes.reduce((sum, o) => sum + o.wall, 0);
  const ticksAtEnd = machineTicks();
  if (ticksAtStart && ticksAtEnd) {
    const share = (ticksAtEnd.busy - ticksAtStart.busy) / (ticksAtEnd.total - ticksAtStart.total);
    process.stdout.write(`\nℹ the machine's CPUs were busy ${(100 * share).toFixed(0)} % of the run (all processes)\n`);
  }
  process.stdout.write(`\nℹ per-file seconds: wall ${wallSum.toFixed(0)} in sum, CPU ${cpuSum.toFixed(0)} in sum\n`);
  for (const o of byCpu.slice(0, 25)) {
    process.stdout.write(
      `ℹ   ${(o.cpu ?? Number.NaN).toFixed(1).padStart(6)} CPU s ${o.wall.toFixed(1).padStart(6)} wall s  ${o.file}\n`,
    );
  }
  // A file whose process lived on well after its last test (a timer, a socket or a worker left holding the event loop)
  // costs its lane that time for nothing: node:test's duration_ms against the sum of its top-level tests and suites.
  const heldOpen = outcomes
    .map((o) => {
      const duration = Number(/^ℹ duration_ms ([\d.]+)$/m.exec(o.output)?.[1] ?? Number.NaN) / 1000;
      const tests =
        [...o.output.matchAll(/^[✔✖﹣] .*\(([\d.]+)ms\)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0) / 1000;
      return { file: o.file, held: duration - tests };
    })
    .filter((o) => o.held > 5)
    .sort((a, b) => b.held - a.held);
  for (const o of heldOpen) {
    process.stdout.write(`ℹ held open ${o.held.toFixed(1)} s after its last test (a handle left alive): ${o.file}\n`);
  }
  if (process.env.TESSERA_TEST_TIMES_OUT) {
    const rows = Object.fromEntries(
      outcomes.map((o) => [o.file, { wall: Math.round(o.wall), cpu: Math.round(o.cpu ?? 0) }]),
    );
    writeFileSync(process.env.TESSERA_TEST_TIMES_OUT, `${JSON.stringify(rows, null, 2)}\n`);
  }
  if (timesDir) rmSync(timesDir, { recursive: true, force: true });
  if (useCgroups) removeCgroups();
  process.stdout.write(`\nℹ files ${outcomes.length}\n`);
  for (const name of COUNTS) process.stdout.write(`ℹ ${name} ${total[name]}\n`);
  process.stdout.write(`ℹ duration_ms ${Date.now() - started}\n`);
  process.stdout.write(`${total.pass} passed, ${total.fail + total.cancelled} failed, ${total.skipped} skipped\n`);
  return failed.length === 0 ? 0 : 1;
}

function removeCgroups(): void {
  try {
    for (const name of readdirSync(join(CPUACCT, runId))) {
      if (/^\d+$/.test(name)) {
        try {
          rmdirSync(join(CPUACCT, runId, name));
        } catch {
          // still has a process
        }
      }
    }
    rmdirSync(join(CPUACCT, runId));
  } catch {
    // left for the machine's next boot
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    for (const child of running) killGroup(child);
    if (useCgroups) removeCgroups();
    process.exit(1);
  });
}
main().then((code) => process.exit(code));
