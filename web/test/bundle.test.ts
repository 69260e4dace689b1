import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { ensureBuilt, ROOT } from './harness.ts';

const BUDGET = 200 * 1024;

it('the first load is at most 200 KB of JavaScript, gzip', () => {
  ensureBuilt();
  const dist = join(ROOT, 'web', 'dist');
  const html = readFileSync(join(dist, 'index.html'), 'utf8');
  const scripts = [
    ...html.matchAll(/<(?:script[^>]*\bsrc|link[^>]*rel="modulepreload"[^>]*\bhref)="\/app\/([^"]+\.js)"/g),
  ].map((m) => m[1]!);
  assert.ok(scripts.length > 0, 'the page loads a script');
  let raw = 0;
  let gzip = 0;
  for (const file of scripts) {
    const bytes = readFileSync(join(dist, file));
    raw += bytes.length;
    gzip += gzipSync(bytes, { level: 9 }).length;
  }
  console.log(
    `web app first load: ${scripts.length} script(s), ${(raw / 1024).toFixed(1)} KB, ${(gzip / 1024).toFixed(1)} KB gzip (budget ${BUDGET / 1024} KB gzip)`,
  );
  assert.ok(gzip <= BUDGET, `${gzip} bytes gzip`);
});
