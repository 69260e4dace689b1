// Benchmark output explains its own columns and names no issue numbers.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { it } from 'node:test';
import { glossary, printTable } from '../bench/lib.ts';
import { callsTo, nodesOf, parseSource, stringsOf, stringValue, ts, where } from './helpers/source.ts';

// The benchmark sources read through the TypeScript parser: how the formatter wraps a call or which
// quotes a string uses does not change what these checks see.
const sources = readdirSync('bench')
  .filter((f) => f.endsWith('.ts'))
  .sort()
  .map((file) => ({ file, source: parseSource(`bench/${file}`) }));

it('benchmark output names no issue numbers', () => {
  let strings = 0;
  for (const { file, source } of sources) {
    for (const { text, line } of stringsOf(source)) {
      assert.doesNotMatch(text, /\bissue\s*#?\d+|#\d+\b/i, `${file}:${line}: ${JSON.stringify(text)}`);
      strings += 1;
    }
  }
  assert.ok(strings > 100, `read only ${strings} strings: the scan is broken`);
});

/** The expression itself, or for an identifier the initializer of the file's `const` of that name. */
function literalOf(source: ts.SourceFile, node: ts.Expression | undefined): ts.Expression | undefined {
  if (node === undefined || !ts.isIdentifier(node)) return node;
  for (const n of nodesOf(source)) {
    if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.name.text === node.text) return n.initializer;
  }
  return undefined;
}

it('every column of every benchmark table is explained', () => {
  let tables = 0;
  for (const { file, source } of sources) {
    if (file === 'lib.ts') continue;
    // printTable(title, header, rows, legend?): the header is a literal array of column names, written
    // in the call or in a `const` of the same file that the call names.
    for (const call of callsTo(source, new Set(['printTable']))) {
      const header = literalOf(source, call.arguments[1]);
      const columns = header && ts.isArrayLiteralExpression(header) ? header.elements.map((e) => stringValue(e)) : [];
      assert.ok(
        columns.length > 0 && columns.every((c) => c !== undefined),
        `${where(source, call)}: a printTable call without a literal header`,
      );
      const legend = call.arguments[3] !== undefined;
      for (const column of columns)
        assert.ok(glossary(column!) || legend, `${where(source, call)}: column "${column}" is not explained`);
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
    printTable('Example', ['operation', 'p50 ms', 'custom'], [['GET /v1/user', '0.10', 'x']], {
      custom: 'a column of this table only',
    });
  } finally {
    console.log = original;
  }
  const out = lines.join('\n');
  assert.match(out, /- operation: the API call measured/);
  assert.match(out, /- p50 ms: median time/);
  assert.match(out, /- custom: a column of this table only/);
});
