// Issue 22, deliver 1: a process's long-lived state lives in one runtime object (src/runtime.ts,
// deps.runtime), built beside createDeps and closed with it — never in a module-level map keyed by
// Deps, which deps.ts does not show and deps.close() does not close. Read from the syntax tree.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { nodesOf, parseSource, sourceFiles, ts, where } from './helpers/source.ts';

/** Module-level `new WeakMap<Deps…>` / `new Map<Deps…>` (a cache keyed by a process's Deps). */
function moduleStateKeyedByDeps(source: ts.SourceFile): string[] {
  const found: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const n of nodesOf(statement)) {
      if (!ts.isNewExpression(n) || !ts.isIdentifier(n.expression)) continue;
      if (!['WeakMap', 'Map'].includes(n.expression.text)) continue;
      const key = n.typeArguments?.[0];
      if (key !== undefined && ts.isTypeReferenceNode(key) && key.typeName.getText(source) === 'Deps')
        found.push(where(source, n));
    }
  }
  return found;
}

it('no module holds per-process state in a map keyed by Deps (it belongs in deps.runtime)', () => {
  const found = sourceFiles('src').flatMap((path) => moduleStateKeyedByDeps(parseSource(path)));
  assert.deepEqual(found, []);
});

it('the check finds such a map (so a pass above means something)', () => {
  const probe = parseSource(
    'probe.ts',
    "import type { Deps } from './deps.ts';\nconst a = new WeakMap<Deps, number>();\nconst b = new Map<string, number>();\n" +
      'function f() { const c = new WeakMap<Deps, number>(); return c; }\n',
  );
  assert.deepEqual(moduleStateKeyedByDeps(probe), ['probe.ts:2']);
});
