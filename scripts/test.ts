// Runs every test file once with node:test. Each file covers both engines (SQLite and
// PostgreSQL); see test/helpers/context.ts. web/test holds the web app's browser tests (one real server, SQLite). Extra arguments narrow the files: `npm test -- src/features/identity`.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
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
const files = [...collect('src', []), ...collect('test', []), ...collect('web/test', [])]
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error(`No test files match ${filters.join(' ')}`);
  process.exit(1);
}
const concurrency = process.env.TESSERA_TEST_CONCURRENCY ?? '3';
// A test, suite or hook still running after 8 minutes has hung (the slowest suite takes about 25 s):
// it fails with a timeout instead of holding the run (and CI) until it is killed.
const timeout = process.env.TESSERA_TEST_TIMEOUT_MS ?? '480000';
const result = spawnSync(
  process.execPath,
  ['--test', `--test-concurrency=${concurrency}`, `--test-timeout=${timeout}`, '--test-reporter=spec', ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
