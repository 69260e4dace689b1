// Import boundaries of Tessera, checked by `npm run check:imports` (dependency-cruiser) in .ci/run.
// The layers and why they point the way they do: docs/architecture.md ("How the rules are enforced").
//
//   src/main.ts, app.ts, workers.ts, deps.ts, …   the composition roots: may import anything
//   src/edge/                                     the edge program: core, and features/cdn's contract
//                                                 (features/cdn/edge-contract/contract.ts)
//   src/features/<name>/                          the API, one folder per capability; other features
//                                                 only through <name>/index.ts
//   src/core/                                     shared building blocks: never features, never the edge
//
// Rules apply to test files too (a test that reaches into another feature's internals is coupling
// all the same), except `src-not-into-test`: tests beside the code use test/helpers/.
// Never switch a rule off globally to make a change pass; a known exception is listed by exact
// path, with a comment saying who removes it.

/**
 * Known exceptions: exact (from → to) imports that break a rule, as [from, to] pairs under the rule's
 * name. Each would be exempt only for that exact pair; any new violation fails. There are none today:
 * keep it that way (depcruise does not complain about stale entries, so delete one as soon as its
 * import is gone).
 */
const KNOWN_EXCEPTIONS = {};

const exact = (file) => `^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;

/**
 * The rule, with its known exceptions carved out pair by pair: the rule itself skips the files that
 * have exceptions, and each such file gets a copy of the rule that skips only its excepted targets.
 */
function withExceptions(rule) {
  const pairs = KNOWN_EXCEPTIONS[rule.name] ?? [];
  if (pairs.length === 0) return [rule];
  const byFrom = new Map();
  for (const [from, to] of pairs) byFrom.set(from, [...(byFrom.get(from) ?? []), to]);
  const asList = (v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  const main = {
    ...rule,
    from: { ...rule.from, pathNot: [...asList(rule.from.pathNot), ...[...byFrom.keys()].map(exact)] },
  };
  const copies = [...byFrom].map(([from, tos]) => {
    // `$1` in the rule's `to` refers to a group of its `from` path: resolve it for this file.
    const group = new RegExp(rule.from.path).exec(from)?.[1] ?? '';
    const resolve = (list) => list.map((p) => p.replaceAll('$1', group));
    return {
      ...rule,
      comment: `${rule.comment} (known exceptions of ${from}: see KNOWN_EXCEPTIONS)`,
      from: { path: exact(from) },
      to: { ...rule.to, pathNot: [...resolve(asList(rule.to.pathNot)), ...tos.map(exact)] },
    };
  });
  return [main, ...copies];
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'An import cycle among runtime imports (`import type` is erased and does not count). Break it by ' +
        'passing the dependency in from the composition root (src/app.ts, src/workers.ts).',
      from: { path: '^(src|test)/' },
      to: {
        circular: true,
        dependencyTypesNot: ['type-only'],
        viaOnly: { dependencyTypesNot: ['type-only'] },
      },
    },
    ...withExceptions({
      name: 'feature-through-index',
      severity: 'error',
      comment:
        'A feature uses another feature only through its index.ts (its public surface); reaching into ' +
        'its files couples you to its internals. Export what you need from that index.ts.',
      from: { path: '^src/features/([^/]+)/' },
      to: {
        path: '^src/features/[^/]+/',
        pathNot: ['^src/features/$1/', '^src/features/[^/]+/index[.]ts$'],
      },
    }),
    ...withExceptions({
      name: 'core-not-into-features',
      severity: 'error',
      comment:
        'src/core is the bottom layer: it never imports a feature or the edge. Move the shared part into ' +
        'core, or let the composition root pass it in.',
      from: { path: '^src/core/' },
      to: { path: '^src/(features|edge)/' },
    }),
    {
      name: 'features-not-into-edge',
      severity: 'error',
      comment:
        'The edge is a separate program that depends on the API side (features/cdn/edge-contract/contract.ts), never ' +
        'the other way round.',
      from: { path: '^src/features/' },
      to: { path: '^src/edge/' },
    },
    {
      name: 'edge-only-cdn-contract',
      severity: 'error',
      comment:
        'src/edge uses features only through the CDN contract (features/cdn/edge-contract/contract.ts: control channel, ' +
        'zone model, origin types) and features/cdn/index.ts (assetOriginFor, wired in src/edge/run.ts).',
      from: { path: '^src/edge/' },
      to: {
        path: '^src/features/',
        pathNot: ['^src/features/cdn/edge-contract/contract[.]ts$', '^src/features/cdn/index[.]ts$'],
      },
    },
    ...withExceptions({
      name: 'src-not-into-test',
      severity: 'error',
      comment:
        'Shipped code never imports test code. Test helpers live in test/helpers/; only *.test.ts files ' +
        'beside the code import them.',
      from: { path: '^src/', pathNot: '[.]test[.]ts$' },
      to: { path: '^test/' },
    }),
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that does not resolve to a file or an installed package.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports are seen (and checked by the boundary rules) but marked 'type-only', which the
    // cycle rule ignores: they are erased before Node runs the file.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Packages such as typebox and kysely publish subpaths (typebox/compile) through "exports".
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
