#!/usr/bin/env node
// `npx tessera …` runs with node_modules/.bin first on PATH, so `node` is the pinned Node 24.
const [major] = process.versions.node.split('.').map(Number);
if (major < 22) {
  process.stderr.write(`Tessera needs Node 22.18 or newer (found ${process.version}); run it through npm/npx so the pinned Node 24 is used.\n`);
  process.exit(1);
}
await import('../src/main.ts');
