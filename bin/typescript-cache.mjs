// Serves Tessera's TypeScript sources to Node as JavaScript whose types were stripped ahead of time,
// so the server process never loads Node's type stripper (a WebAssembly module whose memory stays
// resident: ~10 MiB) and needs no compile cache (which keeps every module's cached code in memory
// for the life of the process: another ~10 MiB). Lean start; see docs/performance.md.
//
// Each source file is stripped once, in a short-lived child process, into a cache keyed by the
// SHA-256 of its content (node_modules/.cache/tessera-js/<node version>/); later starts only hash
// the sources and read the cached files. The module URLs stay those of the .ts files, so
// import.meta.url, stack traces' file names and relative imports are unchanged. When the cache
// cannot be written (a read-only install) nothing is registered and Node strips types itself.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const STRIP = `
const { stripTypeScriptTypes } = require('node:module');
const { readFileSync, renameSync, writeFileSync } = require('node:fs');
for (const [file, out] of JSON.parse(readFileSync(0, 'utf8'))) {
  writeFileSync(out + '.' + process.pid, stripTypeScriptTypes(readFileSync(file, 'utf8'), { mode: 'strip' }));
  renameSync(out + '.' + process.pid, out);
}`;

function sources(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sources(path, out);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

/** Registers the loader for every .ts file under `src`; returns false (and registers nothing) when the cache is unusable. */
export function useStrippedSources(src) {
  const cache = join(dirname(src), 'node_modules', '.cache', 'tessera-js', process.version);
  const compiled = new Map();
  const missing = [];
  try {
    mkdirSync(cache, { recursive: true, mode: 0o700 });
    for (const file of sources(src)) {
      const out = join(cache, `${createHash('sha256').update(readFileSync(file)).digest('hex')}.js`);
      compiled.set(pathToFileURL(file).href, out);
      if (!existsSync(out)) missing.push([file, out]);
    }
    if (missing.length > 0) {
      const strip = spawnSync(process.execPath, ['--no-warnings', '-e', STRIP], {
        input: JSON.stringify(missing),
        stdio: ['pipe', 'inherit', 'inherit'],
      });
      if (strip.status !== 0) return false;
    }
  } catch {
    return false;
  }
  registerHooks({
    load(url, context, nextLoad) {
      const out = compiled.get(url);
      if (out === undefined) return nextLoad(url, context);
      return { format: 'module', source: readFileSync(out, 'utf8'), shortCircuit: true };
    },
  });
  return true;
}

export const SRC = join(dirname(fileURLToPath(import.meta.url)), '..', 'src');
