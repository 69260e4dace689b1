// The documented operations of /openapi.json, each with a plausible example body made from its schema:
// what the tests that walk every route (route-fuzz, real-client-quirks) start from.
import type { TestContext } from './context.ts';

export type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  minimum?: number;
};
export interface Operation {
  parameters?: { in: string; name: string }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}

/** Routes that end the caller's own sign-in or change its password: the rest of the run needs them. */
export const ENDS_OWN_SESSION = /\/auth\/token$|\/auth\/sessions$|password/;

export type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };

/** The OpenAPI document, and a plausible value for any of its schemas (the bodies mutations start from). */
export async function documented(ctx: TestContext) {
  const doc = JSON.parse((await ctx.inject({ method: 'GET', url: '/openapi.json' })).body) as Doc;
  const resolve = (s: Schema | undefined): Schema | undefined =>
    s?.$ref ? resolve(doc.components.schemas[s.$ref.split('/').pop()!]) : s;
  const example = (raw: Schema | undefined, depth = 0): unknown => {
    const s = resolve(raw);
    if (!s || depth > 5) return null;
    if (s.anyOf ?? s.oneOf) return example((s.anyOf ?? s.oneOf)![0], depth + 1);
    if (s.allOf) return Object.assign({}, ...s.allOf.map((x) => example(x, depth + 1)));
    if (s.enum) return s.enum[0];
    if (s.const !== undefined) return s.const;
    const type = Array.isArray(s.type) ? s.type[0] : s.type;
    if (type === 'object' || s.properties)
      return Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, v]) => [k, example(v, depth + 1)]));
    if (type === 'array') return [example(s.items, depth + 1)];
    if (type === 'string')
      return s.format === 'email' ? 'someone@example.test' : s.format === 'uri' ? 'http://127.0.0.1:9/x' : 'x';
    if (type === 'integer' || type === 'number') return s.minimum ?? 1;
    return type === 'boolean' ? true : null;
  };
  /** Every documented operation the fuzz may call (not those ending the caller's own sign-in). */
  const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([verb]) => ['get', 'post', 'put', 'patch', 'delete'].includes(verb) && !ENDS_OWN_SESSION.test(path))
      .map(([verb, operation]) => ({
        path,
        method: verb.toUpperCase(),
        operation,
        body: example(operation.requestBody?.content?.['application/json']?.schema),
      })),
  );
  return { operations };
}
