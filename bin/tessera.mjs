#!/usr/bin/env node
// `npx tessera …` runs with node_modules/.bin first on PATH, so `node` is the pinned Node 24.
const [major] = process.versions.node.split('.').map(Number);
if (major < 22) {
  process.stderr.write(
    `Tessera needs Node 22.18 or newer (found ${process.version}); run it through npm/npx so the pinned Node 24 is used.\n`,
  );
  process.exit(1);
}
// The sources are loaded with their types stripped ahead of time (bin/typescript-cache.mjs): the
// server process never loads the type stripper and keeps no compile cache (lean start).
const { SRC, useStrippedSources } = await import('./typescript-cache.mjs');
useStrippedSources(SRC);
await import('../src/main.ts');
