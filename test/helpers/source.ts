// Reading our own source in tests (the job catalog, table owners, benchmark output) through the
// TypeScript parser, never by matching text: a check must not depend on how the formatter wraps a
// call, which quotes a string uses, trailing commas, or comments beside the code.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

export { ts };

/** Every .ts file under `dir` (recursively), test files excluded. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return sourceFiles(path);
      return path.endsWith('.ts') && !path.endsWith('.test.ts') ? [path] : [];
    });
}

/** The file's syntax tree (no type checking: parsing only). */
export function parseSource(path: string, text = readFileSync(path, 'utf8')): ts.SourceFile {
  return ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
}

/** Every node of the tree, depth first, in source order. */
export function* nodesOf(node: ts.Node): Generator<ts.Node> {
  const stack: ts.Node[] = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    yield n;
    const children: ts.Node[] = [];
    n.forEachChild((c) => {
      children.push(c);
    });
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
}

/** The name a call is made by: `f(…)` → f, `a.b.f(…)` → f (also `a?.f(…)`); otherwise undefined. */
export function calleeName(call: ts.CallExpression): string | undefined {
  const callee = call.expression;
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  return undefined;
}

/** Every call in the file made by one of `names` (see calleeName), in source order. */
export function callsTo(source: ts.SourceFile, names: ReadonlySet<string>): ts.CallExpression[] {
  const out: ts.CallExpression[] = [];
  for (const n of nodesOf(source)) {
    if (ts.isCallExpression(n)) {
      const name = calleeName(n);
      if (name !== undefined && names.has(name)) out.push(n);
    }
  }
  return out;
}

/** The value of a string literal in any quotes ('a', "a", `a` without substitutions); otherwise undefined. */
export function stringValue(node: ts.Node | undefined): string | undefined {
  if (node === undefined) return undefined;
  if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isSatisfiesExpression(node)) {
    return stringValue(node.expression);
  }
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  return undefined;
}

/**
 * The text of every string the file writes: string literals and the literal parts of template
 * strings (between their `${…}`), each with the line it starts on. Comments are not strings.
 */
export function stringsOf(source: ts.SourceFile): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  for (const n of nodesOf(source)) {
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateLiteralToken(n)) {
      // Import specifiers are module paths, not text the program writes.
      if (ts.isStringLiteral(n) && (ts.isImportDeclaration(n.parent) || ts.isExportDeclaration(n.parent))) continue;
      out.push({ text: n.text, line: source.getLineAndCharacterOfPosition(n.getStart(source)).line + 1 });
    }
  }
  return out;
}

/** `export const NAME = 'value'` (also `… as const`): the file's exported string constants. */
export function exportedStringConstants(source: ts.SourceFile): Map<string, string> {
  const out = new Map<string, string>();
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    if (!statement.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
    for (const declaration of statement.declarationList.declarations) {
      const value = stringValue(declaration.initializer);
      if (ts.isIdentifier(declaration.name) && value !== undefined) out.set(declaration.name.text, value);
    }
  }
  return out;
}

/** The first property called `name` in an object literal anywhere inside `node` (depth first, source order). */
export function firstPropertyNamed(
  node: ts.Node,
  name: string,
): ts.PropertyAssignment | ts.ShorthandPropertyAssignment | undefined {
  for (const n of nodesOf(node)) {
    if (!ts.isObjectLiteralExpression(n)) continue;
    for (const p of n.properties) {
      if ((ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p)) && propertyName(p.name) === name)
        return p;
    }
  }
  return undefined;
}

function propertyName(name: ts.PropertyName): string | undefined {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  return undefined;
}

/** `path:line` of a node, for assertion messages. */
export function where(source: ts.SourceFile, node: ts.Node): string {
  return `${source.fileName}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;
}
