import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import type { LightMyRequestResponse } from 'fastify';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * Checks answers against /openapi.json: the path, method and status must be documented, and a JSON
 * body must match the declared schema. Used by test/openapi-responses.test.ts, and by every test
 * context when TESSERA_TEST_CHECK_RESPONSES names a file (each problem is appended there; no test
 * fails), to find what the document says wrongly across the whole suite.
 */
export type Doc = {
  paths: Record<
    string,
    Record<string, { responses?: Record<string, { content?: Record<string, { schema: unknown }> }> }>
  >;
};

export function validatorFor(doc: Doc) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats.default(ajv);
  ajv.addFormat('binary', true);
  ajv.addSchema(doc as object, 'doc');
  const templates = Object.keys(doc.paths)
    .map((template) => ({
      template,
      params: (template.match(/\{/g) ?? []).length,
      // A {*} wildcard takes the rest of the path, slashes included; any other {param} one segment.
      pattern: new RegExp(
        `^${template
          .split(/(\{[^}]+\})/)
          .map((part) =>
            part === '{*}' ? '.*' : part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&'),
          )
          .join('')}$`,
      ),
    }))
    .sort((a, b) => a.params - b.params);
  const pointer = (parts: string[]) =>
    parts.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');
  const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
  return (method: string, url: string, res: LightMyRequestResponse): string[] => {
    // The /v1/webhooks aliases are served but documented once, unversioned.
    const path = url
      .split('?')[0]!
      .replace(/(.)\/$/, '$1')
      .replace(/^\/v1\/webhooks\//, '/webhooks/');
    const match = templates.find((t) => t.pattern.test(path));
    assert.ok(match, `${method} ${path} is documented`);
    const op = doc.paths[match.template]![method.toLowerCase()];
    assert.ok(op, `${method} ${match.template} is documented`);
    const status = String(res.statusCode);
    const response = op.responses?.[status];
    assert.ok(response, `${method} ${match.template} documents status ${status} (${res.body.slice(0, 300)})`);
    const type = String(res.headers['content-type'] ?? '').split(';')[0]!;
    if (type !== 'application/json') return [];
    const media = response.content?.['application/json'];
    assert.ok(media, `${method} ${match.template} ${status} declares a JSON body`);
    const key = `${method} ${match.template} ${status}`;
    const validate =
      compiled.get(key) ??
      ajv.compile({
        $ref: `doc#/${pointer(['paths', match.template, method.toLowerCase(), 'responses', status, 'content', 'application/json', 'schema'])}`,
      });
    compiled.set(key, validate);
    let body: unknown;
    try {
      body = JSON.parse(res.body);
    } catch {
      return [`${key}: the body is not JSON`];
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).map(
      (e) =>
        `${method} ${match.template} ${status}: ${e.instancePath || '(root)'} ${e.message} ${JSON.stringify(e.params)}`,
    );
  };
}

/** Validates `value` against the schema at `parts` (a JSON pointer's segments) of the document; returns the problems. */
export function schemaValidator(doc: object) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats.default(ajv);
  ajv.addFormat('binary', true);
  ajv.addSchema(doc, 'doc');
  return (parts: string[], value: unknown): string[] => {
    const pointer = parts.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');
    const validate = ajv.compile({ $ref: `doc#/${pointer}` });
    if (validate(value)) return [];
    return (validate.errors ?? []).map(
      (e) => `${parts.join(' ')}: ${e.instancePath || '(root)'} ${e.message} ${JSON.stringify(e.params)}`,
    );
  };
}

const JSON_TYPES = ['string', 'number', 'boolean', 'null', 'array', 'object'];

/**
 * The places of the document that do not say what they hold: an object schema with neither
 * properties nor a schema for its other keys (`additionalProperties` true or absent), an empty
 * schema (any value, undeclared), an array without items, and a value declared as any JSON at all
 * (core/http/doc-schema.ts `anyJsonDoc`). Walks every request body, parameter and response of
 * every operation, the shared schemas and the webhooks; each place is named
 * `<METHOD> <path> <status | body | param name> <where>`, `#<Component><where>` or
 * `webhook <event type> <where>`, where is `.property`, `/items`, `/additionalProperties`, `/anyOf0`….
 */
export function openPlaces(doc: any): string[] {
  const out = new Set<string>();
  const META = new Set([
    'description',
    'examples',
    'example',
    'title',
    'default',
    'deprecated',
    'readOnly',
    'writeOnly',
  ]);
  const walk = (s: any, at: string, depth = 0): void => {
    if (!s || typeof s !== 'object' || depth > 60) return;
    if (Object.keys(s).every((k) => META.has(k))) {
      out.add(`${at} (any value, undeclared)`);
      return;
    }
    const types: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
    if (JSON_TYPES.every((t) => types.includes(t))) {
      out.add(`${at} (any JSON)`);
      return;
    }
    const ap = s.additionalProperties;
    const typedOthers = ap === false || (ap && typeof ap === 'object' && Object.keys(ap).length > 0);
    const hasProperties = s.properties && Object.keys(s.properties).length > 0;
    if (types.includes('object') && !hasProperties && !typedOthers && !s.patternProperties)
      out.add(`${at} (object without properties)`);
    if (types.includes('array') && !s.items && !s.prefixItems) out.add(`${at} (array without items)`);
    for (const key of ['properties', 'patternProperties'])
      for (const [name, child] of Object.entries(s[key] ?? {})) walk(child, `${at}.${name}`, depth + 1);
    for (const key of ['items', 'additionalProperties', 'not'])
      if (s[key] && typeof s[key] === 'object') walk(s[key], `${at}/${key}`, depth + 1);
    for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems'])
      if (Array.isArray(s[key]))
        for (const [i, c] of (s[key] as unknown[]).entries()) walk(c, `${at}/${key}${i}`, depth + 1);
  };
  const operation = (op: any, at: string) => {
    for (const p of op.parameters ?? []) walk(p.schema, `${at} param ${p.name}`);
    for (const media of Object.values<any>(op.requestBody?.content ?? {})) walk(media.schema, `${at} body`);
    for (const [status, r] of Object.entries<any>(op.responses ?? {}))
      for (const media of Object.values<any>(r.content ?? {})) walk(media.schema, `${at} ${status}`);
  };
  for (const [path, ops] of Object.entries<any>(doc.paths ?? {}))
    for (const [method, op] of Object.entries<any>(ops))
      if (op && typeof op === 'object') operation(op, `${method.toUpperCase()} ${path}`);
  for (const [name, schema] of Object.entries<any>(doc.components?.schemas ?? {})) walk(schema, `#${name}`);
  for (const [name, ops] of Object.entries<any>(doc.webhooks ?? {}))
    for (const op of Object.values<any>(ops)) operation(op, `webhook ${name}`);
  return [...out];
}

/** The TESSERA_TEST_CHECK_RESPONSES mode of the test context: records, never throws. */
export function recordingChecker(doc: unknown, file: string) {
  const check = validatorFor(doc as Doc);
  return (method: string, url: string, res: LightMyRequestResponse): void => {
    let problems: string[];
    try {
      problems = check(method, url, res);
    } catch (error) {
      problems = [(error as Error).message.split('\n')[0]!];
    }
    if (problems.length > 0) appendFileSync(file, `${problems.join('\n')}\n`);
  };
}
