// Benchmark output explains its own columns and names no issue numbers.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { it } from 'node:test';
import { glossary, printTable } from '../bench/lib.ts';

const sources = readdirSync('bench').filter((f) => f.endsWith('.ts')).map((f) => ({ file: f, text: readFileSync(`bench/${f}`, 'utf8') }));

it('benchmark output names no issue numbers', () => {
  for (const { file, text } of sources) {
    for (const literal of text.matchAll(/(['`"])((?:(?!\1).)*)\1/g)) {
      assert.doesNotMatch(literal[2]!, /\bissue\s*#?\d+|#\d+\b/i, `${file}: ${literal[0]}`);
    }
  }
});

it('every column of every benchmark table is explained', () => {
  let tables = 0;
  for (const { file, text } of sources) {
    if (file === 'lib.ts') continue;
    for (const call of text.matchAll(/printTable\(/g)) {
      const region = text.slice(call.index!, text.indexOf(');\n', call.index!));
      const header = /\[\s*('(?:[^'\\]|\\.)*'(?:\s*,\s*'(?:[^'\\]|\\.)*')*)\s*\]/.exec(region);
      assert.ok(header, `${file}: a printTable call without a literal header`);
      const columns = [...header[1]!.matchAll(/'((?:[^'\\]|\\.)*)'/g)].map((m) => m[1]!);
      const legend = /legend|\{\s*'[^']+':/.test(region.slice(region.indexOf(header[0]) + header[0].length));
      for (const column of columns) assert.ok(glossary(column) || legend, `${file}: column "${column}" is not explained`);
      tables += 1;
    }
  }
  assert.ok(tables >= 5);
});

it('printTable prints what each column means under the table', () => {
  const lines: string[] = [];
  const original = console.log;
  console.log = (...args: unknown[]) => lines.push(args.join(' '));
  try {
    printTable('Example', ['operation', 'p50 ms', 'custom'], [['GET /v1/user', '0.10', 'x']], { custom: 'a column of this table only' });
  } finally {
    console.log = original;
  }
  const out = lines.join('\n');
  assert.match(out, /- operation: the API call measured/);
  assert.match(out, /- p50 ms: median time/);
  assert.match(out, /- custom: a column of this table only/);
});
