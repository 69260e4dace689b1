#!/usr/bin/env node
// `npx tessera …` runs with node_modules/.bin first on PATH, so `node` is the pinned Node 24.
const [major] = process.versions.node.split('.').map(Number);
if (major < 22) {
  process.stderr.write(`Tessera needs Node 22.18 or newer (found ${process.version}); run it through npm/npx so the pinned Node 24 is used.\n`);
  process.exit(1);
}
// Cache compiled code (and, on Node 24, the result of stripping the TypeScript types) across
// starts: a warm start then never loads the type stripper, which is ~15 MiB of resident memory
// (issue 14: lean start). The cache lives in the OS temp directory; NODE_COMPILE_CACHE overrides it.
const { enableCompileCache } = await import('node:module');
enableCompileCache?.();
await import('../src/main.ts');
