import { invalidFilter } from './errors.ts';

/**
 * The subset of RFC 7644 §3.4.2.2 filters Tessera supports: `attribute eq "value"` clauses joined
 * by `and` (what Okta and Entra ID send to find a resource before creating it). Attribute names are
 * case-insensitive and may carry the schema URN. Anything else is a 400 `invalidFilter`.
 * Returns canonical attribute name → the values it must equal (several when a clause repeats).
 */
export function parseFilter(filter: string, attributes: readonly string[], schemaUrn: string): Map<string, string[]> {
  const byLower = new Map(attributes.map((a) => [a.toLowerCase(), a]));
  const clauses = new Map<string, string[]>();
  const clause = /^\s*([A-Za-z][\w.:-]*)\s+([A-Za-z]+)\s+("(?:[^"\\]|\\.)*"|\S+)\s*/;
  let rest = filter;
  if (rest.trim() === '') throw invalidFilter('The filter is empty');
  for (;;) {
    const match = clause.exec(rest);
    if (!match)
      throw invalidFilter(`Cannot parse the filter at "${rest.slice(0, 40)}"; supported: attribute eq "value" [and …]`);
    const [, rawName, operator, rawValue] = match as unknown as [string, string, string, string];
    let name = rawName;
    if (name.toLowerCase().startsWith(`${schemaUrn.toLowerCase()}:`)) name = name.slice(schemaUrn.length + 1);
    const attribute = byLower.get(name.toLowerCase());
    if (!attribute)
      throw invalidFilter(`Filtering on "${rawName}" is not supported; supported: ${attributes.join(', ')}`);
    if (operator.toLowerCase() !== 'eq')
      throw invalidFilter(`The operator "${operator}" is not supported; only eq (joined by and)`);
    if (!rawValue.startsWith('"')) throw invalidFilter(`${attribute} is compared with a string: quote the value`);
    let value: string;
    try {
      value = JSON.parse(rawValue) as string;
    } catch {
      throw invalidFilter(`The value ${rawValue.slice(0, 40)} is not a valid string`);
    }
    clauses.set(attribute, [...(clauses.get(attribute) ?? []), value]);
    rest = rest.slice(match[0].length);
    if (rest.trim() === '') return clauses;
    const and = /^and\s+/i.exec(rest);
    if (!and) throw invalidFilter(`Expected "and" at "${rest.slice(0, 40)}"; or, not and grouping are not supported`);
    rest = rest.slice(and[0].length);
  }
}

/** The one value a filtered attribute must have: undefined when unfiltered, null when two clauses disagree. */
export function single(
  clauses: Map<string, string[]>,
  attribute: string,
  caseExact: boolean,
): string | null | undefined {
  const values = clauses.get(attribute);
  if (!values) return undefined;
  const norm = (v: string) => (caseExact ? v : v.toLowerCase());
  return values.every((v) => norm(v) === norm(values[0]!)) ? values[0]! : null;
}
