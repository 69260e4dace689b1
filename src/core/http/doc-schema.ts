/**
 * What /openapi.json says beyond what the validator checks. Some request fields are required by the
 * service rather than by the schema, so that a missing one gets the reference's own message naming
 * it (`Missing Sender`) instead of the validator's; the document still has to mark them required,
 * or a client learns them one 400 at a time. Raw-byte bodies are declared as binary. Values the
 * serializer writes as they are (`Type.Unknown()`, an open object) are declared with their real
 * shapes, so a client knows them, without giving fast-json-stringify a schema it would coerce or
 * strip by (test/openapi-responses.test.ts validates real answers against what the document says).
 *
 * `docRequired(schema, names)` marks an object schema's fields as required in the document only;
 * `docAs(schema, shown)` documents a schema as `shown`; `docBinary(schema)` declares a body as
 * `{type: string, format: binary}`. The marks ride on the schema object under a symbol, so TypeBox's
 * copies (`Type.Optional`, `Type.Partial`) keep them; `openApiTransform` (the @fastify/swagger route
 * transform, src/app.ts) applies them to a copy of each route's body and responses, never to what
 * Ajv or the serializer compile, and adds the router's own 400 and 414 answers to the routes they can
 * reach; `openApiTransformObject` applies them to the shared schemas (components) and adds the
 * document's `webhooks`.
 */
type Json = Record<string, unknown>;

const MARK = Symbol.for('tessera.openapi.doc');
interface Mark {
  required?: readonly string[];
  alternatives?: readonly (readonly string[])[];
  shown?: Json;
}

function markOf(schema: object): Mark | undefined {
  return (schema as { [MARK]?: Mark })[MARK];
}

function mark<T extends object>(schema: T, add: Mark): T {
  (schema as { [MARK]?: Mark })[MARK] = { ...markOf(schema), ...add };
  return schema;
}

export function docRequired<T extends object>(schema: T, names: readonly string[]): T {
  return mark(schema, { required: names });
}

/** Marks one of several sets of fields as required in the document (`anyOf: [{required: [...]}, ...]`). */
export function docRequiredOneOf<T extends object>(schema: T, alternatives: readonly (readonly string[])[]): T {
  return mark(schema, { alternatives });
}

/**
 * Documents `schema` as `shown`: a body the validator takes as anything (raw bytes, a multipart
 * form), or a value the serializer writes as it is whose real shape the document declares. `shown`
 * is plain JSON Schema (no `$ref`), copied without TypeBox's symbols.
 */
export function docAs<T extends object>(schema: T, shown: Json): T {
  return mark(schema, { shown: JSON.parse(JSON.stringify(shown)) as Json });
}

/**
 * A value that may be any JSON (a client's own data, stored and answered as sent): declared as
 * such, with what it is, rather than left as an empty schema. The tests' list of open places
 * (test/openapi-responses.test.ts) names each use with its reason.
 */
export function anyJsonDoc(description: string): Json {
  return { type: ['string', 'number', 'boolean', 'null', 'array', 'object'], description };
}

export function docBinary<T extends object>(schema: T): T {
  return docAs(schema, { type: 'string', format: 'binary', description: (schema as Json).description });
}

const CHILDREN = new Set([
  'properties',
  'patternProperties',
  'items',
  'prefixItems',
  'anyOf',
  'oneOf',
  'allOf',
  'additionalProperties',
  'not',
]);

/**
 * `target` with the document-only marks found in `marked` applied, walking both together: `target`
 * is `marked` itself (a route schema) or @fastify/swagger's copy of it (a component, whose symbols
 * the copy lost). Returns `target` itself when nothing is marked below it.
 */
function apply(marked: unknown, target: unknown, depth = 0): unknown {
  if (typeof marked !== 'object' || marked === null || typeof target !== 'object' || target === null) return target;
  if (depth > 40) return target;
  const own = markOf(marked);
  if (own?.shown) {
    const keep = (target as Json).description;
    return keep !== undefined && own.shown.description === undefined ? { ...own.shown, description: keep } : own.shown;
  }
  if (Array.isArray(marked)) {
    if (!Array.isArray(target)) return target;
    const out = target.map((t, i) => apply(marked[i], t, depth + 1));
    return out.some((v, i) => v !== target[i]) ? out : target;
  }
  let changed = false;
  const out: Json = { ...(target as Json) };
  for (const key of Object.keys(target)) {
    if (!CHILDREN.has(key) || !(key in marked)) continue;
    const m = (marked as Json)[key];
    const t = (target as Json)[key];
    let next: unknown;
    if (
      (key === 'properties' || key === 'patternProperties') &&
      typeof m === 'object' &&
      m &&
      typeof t === 'object' &&
      t
    ) {
      const props: Json = {};
      let any = false;
      for (const [name, child] of Object.entries(t)) {
        props[name] = apply((m as Json)[name], child, depth + 1);
        if (props[name] !== child) any = true;
      }
      next = any ? props : t;
    } else next = apply(m, t, depth + 1);
    if (next !== t) {
      out[key] = next;
      changed = true;
    }
  }
  if (own?.alternatives) {
    out.anyOf = own.alternatives.map((names) => ({ required: [...names] }));
    changed = true;
  }
  if (own?.required) {
    out.required = [...new Set([...((out.required as string[] | undefined) ?? []), ...own.required])];
    changed = true;
  }
  return changed ? out : target;
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

/** `schema` as the document shows it (its marks applied), for a schema outside the routes (the `webhooks`). */
export function documented(schema: unknown): unknown {
  return apply(schema, schema);
}

/** Each status's schema (or each of its `content` types' schemas) with the document-only marks. */
function applyResponses(response: unknown): unknown {
  if (!response || typeof response !== 'object') return response;
  let out: Json | undefined;
  for (const [status, value] of Object.entries(response)) {
    let next: unknown = value;
    const content = (value as { content?: Record<string, { schema?: unknown }> } | null)?.content;
    if (content && typeof content === 'object') {
      const types: Json = {};
      let changed = false;
      for (const [type, media] of Object.entries(content)) {
        const schema = media?.schema === undefined ? undefined : apply(media.schema, media.schema);
        types[type] = schema === media?.schema ? media : { ...media, schema };
        if (types[type] !== media) changed = true;
      }
      if (changed) next = { ...(value as Json), content: types };
    } else next = apply(value, value);
    if (next !== value) {
      out ??= { ...(response as Json) };
      out[status] = next;
    }
  }
  return out ?? response;
}

/** The @fastify/swagger `transform`: the route's schema with the document-only marks and the router's own errors. */
export function openApiTransform({ schema, url }: { schema: unknown; url: string }): { schema: Json; url: string } {
  if (!schema || typeof schema !== 'object') return { schema: schema as Json, url };
  const s = schema as Json;
  const response = withRouterErrors(applyResponses(s.response), url);
  const body = s.body ? apply(s.body, s.body) : s.body;
  if (body === s.body && response === s.response) return { schema: s, url };
  return { schema: { ...s, ...(s.body ? { body } : {}), response }, url };
}

/**
 * The @fastify/swagger `transformObject`: the shared schemas (components) with the document-only
 * marks of their originals (`originals()`: every schema registered with addSchema, by `$id`; the
 * document holds copies that lost the marks), and `extra` top-level members (the `webhooks`).
 */
export function openApiTransformObject(originals: () => Record<string, unknown>, extra: () => Json = () => ({})) {
  return (document: { openapiObject: object } | { swaggerObject: object }): Json => {
    if (!('openapiObject' in document)) return document.swaggerObject as Json;
    const openapiObject = document.openapiObject as Json;
    const components = (openapiObject.components ?? {}) as { schemas?: Record<string, unknown> };
    const all = originals();
    if (components.schemas) {
      for (const [name, copy] of Object.entries(components.schemas)) {
        const original = all[name];
        if (original) components.schemas[name] = apply(original, copy);
      }
    }
    return Object.assign(openapiObject, extra());
  };
}
