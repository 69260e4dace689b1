/**
 * What /openapi.json says beyond what the validator checks. Some request fields are required by the
 * service rather than by the schema, so that a missing one gets the reference's own message naming
 * it (`Missing Sender`) instead of the validator's; the document still has to mark them required,
 * or a client learns them one 400 at a time. Raw-byte bodies are declared as binary.
 *
 * `docRequired(schema, names)` marks an object schema's fields as required in the document only;
 * `docBinary(schema)` declares a body as `{type: string, format: binary}`; `openApiTransform` (the
 * @fastify/swagger route transform, src/app.ts) applies both to a copy, never to what Ajv compiles,
 * and adds the router's own 400 and 414 answers to the routes they can reach.
 */
type Json = Record<string, unknown>;

const REQUIRED = new WeakMap<object, readonly string[]>();
const REPLACED = new WeakMap<object, Json>();
const ALTERNATIVES = new WeakMap<object, readonly (readonly string[])[]>();

export function docRequired<T extends object>(schema: T, names: readonly string[]): T {
  REQUIRED.set(schema, names);
  return schema;
}

/** Marks one of several sets of fields as required in the document (`anyOf: [{required: [...]}, ...]`). */
export function docRequiredOneOf<T extends object>(schema: T, alternatives: readonly (readonly string[])[]): T {
  ALTERNATIVES.set(schema, alternatives);
  return schema;
}

/** Documents `schema` as `shown` (a body the validator takes as anything: raw bytes, a multipart form). */
export function docAs<T extends object>(schema: T, shown: Json): T {
  REPLACED.set(schema, shown);
  return schema;
}

export function docBinary<T extends object>(schema: T): T {
  return docAs(schema, { type: 'string', format: 'binary', description: (schema as Json).description });
}

/** A copy of `schema` with the document-only marks applied (shares nothing marked with the original). */
function apply(schema: unknown, depth = 0): unknown {
  if (typeof schema !== 'object' || schema === null || depth > 30) return schema;
  const shown = REPLACED.get(schema);
  if (shown) return shown;
  const needed = REQUIRED.get(schema);
  if (Array.isArray(schema)) return schema.map((s) => apply(s, depth + 1));
  let changed = false;
  const out: Json = {};
  for (const key of Reflect.ownKeys(schema)) {
    const value = (schema as Record<string | symbol, unknown>)[key];
    if (typeof key === 'symbol') {
      (out as Record<symbol, unknown>)[key] = value;
      continue;
    }
    const next =
      key === 'properties' ||
      key === 'items' ||
      key === 'anyOf' ||
      key === 'oneOf' ||
      key === 'allOf' ||
      key === 'patternProperties' ||
      key === 'additionalProperties'
        ? applyChildren(key, value, depth)
        : value;
    if (next !== value) changed = true;
    out[key] = next;
  }
  const alternatives = ALTERNATIVES.get(schema);
  if (alternatives) {
    out.anyOf = alternatives.map((names) => ({ required: [...names] }));
    changed = true;
  }
  if (needed) {
    out.required = [...new Set([...((out.required as string[] | undefined) ?? []), ...needed])];
    changed = true;
  }
  return changed ? out : schema;
}

function applyChildren(key: string, value: unknown, depth: number): unknown {
  if (key === 'properties' || key === 'patternProperties') {
    if (typeof value !== 'object' || value === null) return value;
    let changed = false;
    const out: Json = {};
    for (const [name, child] of Object.entries(value)) {
      out[name] = apply(child, depth + 1);
      if (out[name] !== child) changed = true;
    }
    return changed ? out : value;
  }
  if (Array.isArray(value)) {
    const out = value.map((v) => apply(v, depth + 1));
    return out.some((v, i) => v !== value[i]) ? out : value;
  }
  return apply(value, depth + 1);
}

/**
 * Answers Fastify's router gives before any route runs, so no route schema lists them: a path
 * segment over 500 characters is a 414 (routes with a `:param`), and a malformed percent-escape in
 * the path, or a path parameter its schema refuses, is a 400 (routes with a `:param` or a wildcard).
 * Both are Tessera's Error body (core/http/framework-errors.ts).
 */
const ROUTER_ERRORS: Record<string, { pattern: RegExp; description: string }> = {
  400: { pattern: /[:*]/, description: 'Bad request: a field is missing or invalid, or the URL is malformed' },
  414: { pattern: /:/, description: 'URI too long: a path segment has more than 500 characters' },
};

function withRouterErrors(response: unknown, url: string): unknown {
  if (!response || typeof response !== 'object') return response;
  let out: Json | undefined;
  for (const [status, { pattern, description }] of Object.entries(ROUTER_ERRORS)) {
    if (!pattern.test(url) || status in response) continue;
    out ??= { ...(response as Json) };
    out[status] = { $ref: 'Error', description };
  }
  return out ?? response;
}

/** The @fastify/swagger `transform`: the route's schema with the document-only marks and the router's own errors. */
export function openApiTransform({ schema, url }: { schema: unknown; url: string }): { schema: Json; url: string } {
  if (!schema || typeof schema !== 'object') return { schema: schema as Json, url };
  const s = schema as Json;
  const response = withRouterErrors(s.response, url);
  if (!s.body && response === s.response) return { schema: s, url };
  return { schema: { ...s, ...(s.body ? { body: apply(s.body) } : {}), response }, url };
}
