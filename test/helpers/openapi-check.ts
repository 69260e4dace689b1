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
