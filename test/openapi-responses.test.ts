import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import sharp from 'sharp';
import { forEachEngine, json } from './helpers/context.ts';
import { createTestOrg, type TestOrg } from './helpers/factories.ts';
import { login } from './helpers/auth.ts';
import { assetWorker, defaultTemplate, pathOf } from './helpers/assets.ts';
import type { Worker } from '../src/core/jobs/worker.ts';
import { validatorFor } from './helpers/openapi-check.ts';

/**
 * Issue 24, "an honest OpenAPI": the main flows of a client, sent as the reference's clients send
 * them, and every JSON answer (success and error alike) validated against the schema that
 * /openapi.json declares for its path, method and status. A field the document leaves out, gets
 * the wrong type for, or calls required and then omits fails here.
 */
forEachEngine('OpenAPI: real answers match their declared response schemas (issue 24)', (ctx) => {
  let org: TestOrg;
  let worker: Worker;
  let check: ReturnType<typeof validatorFor>;
  const problems: string[] = [];
  let headers: Record<string, string>;

  /** Sends a request as a reference client does and checks its answer against the document. */
  const call = async (
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    url: string,
    payload?: unknown,
    extra: Record<string, string> = {},
  ) => {
    const res = await ctx().inject({
      method,
      url,
      headers: { ...headers, ...extra },
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
    problems.push(...check(method, url, res));
    return res;
  };

  before(async () => {
    org = await createTestOrg(ctx());
    worker = assetWorker(ctx());
    check = validatorFor(json(await ctx().inject({ method: 'GET', url: '/openapi.json' })));
    const session = await login(ctx(), org.admin);
    headers = {
      'x-api-key': 'customer-gateway-key',
      accesstoken: session.session.accessToken,
      authorization: session.session.authorization,
      'content-type': 'application/json',
    };
  });
  after(() => worker.stop());

  it('sign-in, identity, metadata and security reads', async () => {
    const signIn = await call(
      'POST',
      '/v1/auth/token',
      { username: org.admin.username, password: org.admin.password },
      { accesstoken: '', authorization: '' },
    );
    assert.equal(signIn.statusCode, 200, signIn.body);
    await call('POST', '/v1/auth/token', { refreshToken: json(signIn).session.refreshToken });
    await call('GET', '/v1/user');
    await call('GET', `/v1/user/${org.admin.userId}`);
    const templates = await call('GET', '/v1/metadata/template');
    await call('GET', `/v1/metadata/template/${json(templates)[0].id ?? json(templates)[0].template?.id}`);
    await call('GET', '/v1/metadata/vocabulary');
    await call('GET', '/v1/security/template');
    await call('GET', '/v1/security/groups');
    await call('GET', '/webhooks/event-type/list');
    await call('GET', '/webhooks/endpoint/list');
    await call('GET', '/v1/asset/00000000-0000-4000-8000-000000000000');
    await call('POST', '/v1/asset', { filename: 42 });
    await call('GET', '/v1/user', undefined, { accesstoken: 'bad', authorization: 'bad' });
    assert.deepEqual(problems.splice(0), []);
    // The check itself: a body that breaks its schema is caught.
    const real = await ctx().inject({ method: 'GET', url: '/v1/user', headers });
    const broken = {
      ...real,
      headers: real.headers,
      statusCode: 200,
      body: JSON.stringify({ ...json(real), userId: 42 }),
      json: () => ({ ...json(real), userId: 42 }),
    } as unknown as LightMyRequestResponse;
    assert.notDeepEqual(check('GET', '/v1/user', broken), [], 'a wrong type is reported');
  });

  it("the router's own answers are declared: a path segment over 500 characters (414), a malformed escape (400)", async () => {
    const doc = json(await ctx().inject({ method: 'GET', url: '/openapi.json' }));
    let checked = 0;
    for (const [template, ops] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      if (!template.includes('{')) continue;
      for (const method of Object.keys(ops)) {
        const upper = method.toUpperCase() as 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
        if (!['GET', 'POST', 'PATCH', 'PUT', 'DELETE'].includes(upper)) continue;
        const wildcard = template.includes('{*}');
        const urls = [template.replace('{', '%zz{').replace(/\{[^}]+\}/g, 'x')];
        if (!wildcard) urls.push(template.replace(/\{[^}]+\}/g, 'a'.repeat(600)));
        for (const url of urls) {
          const res = await ctx().inject({ method: upper, url });
          assert.ok([400, 414].includes(res.statusCode), `${upper} ${url.slice(0, 80)}: ${res.statusCode}`);
          try {
            problems.push(...check(upper, url, res));
          } catch (error) {
            problems.push((error as Error).message.split('\n')[0]!);
          }
          checked++;
        }
      }
    }
    assert.ok(checked > 100, `${checked} answers checked`);
    assert.deepEqual(problems.splice(0), []);
  });

  it('the authorization endpoint declares the JSON error of a field its schema refuses, beside its pages', async () => {
    const long = 'x'.repeat(3000);
    const get = await call('GET', `/v1/oauth2/authorize?client_id=${long}`, undefined, {
      accesstoken: '',
      authorization: '',
    });
    assert.equal(get.statusCode, 400, get.body);
    assert.match(String(get.headers['content-type']), /application\/json/);
    const post = await call('POST', '/v1/oauth2/authorize', `client_id=${long}`, {
      'content-type': 'application/x-www-form-urlencoded',
      accesstoken: '',
      authorization: '',
    });
    assert.equal(post.statusCode, 400, post.body);
    assert.match(String(post.headers['content-type']), /application\/json/);
    // Its page answers are declared as pages, the throttled ones with Retry-After.
    const doc = json(await ctx().inject({ method: 'GET', url: '/openapi.json' }));
    const responses = doc.paths['/v1/oauth2/authorize'].post.responses;
    for (const status of ['400', '401', '403', '429', '503']) assert.ok(responses[status].content['text/html'], status);
    for (const status of ['429', '503']) assert.ok(responses[status].headers['Retry-After'], status);
    assert.ok(responses['303'].headers.Location);
    assert.equal(responses['303'].content, undefined);
    assert.deepEqual(problems.splice(0), []);
  });

  it('saved searches declare their query, metadata templates their securityPermissions items', async () => {
    const saved = await call('POST', '/v1/saved-searches', {
      name: 'Harbours',
      query: { searchTerm: ['harbour'], operation: 'AND', sortBy: [{ metadataDefinitionSearchField: 'createdEpoch' }] },
    });
    assert.equal(saved.statusCode, 201, saved.body);
    await call('GET', `/v1/saved-searches/${json(saved).id}`);
    const doc = json(await ctx().inject({ method: 'GET', url: '/openapi.json' }));
    const query = doc.components.schemas.SavedSearch.properties.query;
    assert.deepEqual(Object.keys(query.properties).sort(), [
      'dateRanges',
      'filters',
      'includeDeleted',
      'includeVersions',
      'keywordSearchField',
      'operation',
      'relevancy',
      'searchTerm',
      'sortBy',
    ]);
    for (const name of ['MetadataTemplate', 'MetadataTemplateAdmin']) {
      const text = JSON.stringify(doc.components.schemas[name]);
      assert.doesNotMatch(text, /"securityPermissions":\{"type":"array","items":\{\}/, name);
    }
    assert.deepEqual(problems.splice(0), []);
  });

  it('create, upload, read, edit, link, download, expose, version, search, share, transform, delete', async () => {
    const { id: metadataTemplateId, attr } = await defaultTemplate(ctx(), org);
    const bytes = await sharp({ create: { width: 120, height: 80, channels: 3, background: { r: 30, g: 60, b: 90 } } })
      .withIccProfile('srgb')
      .jpeg()
      .toBuffer();
    const created = await call('POST', '/v1/asset/', {
      metadataTemplateId,
      securityTemplateIds: [org.defaultTemplateId],
      filename: 'harbour.jpg',
      metadata: [{ metadataDefinitionId: attr('title'), metadataDefinitionValue: 'Harbour' }],
    });
    assert.equal(created.statusCode, 200, created.body);
    const asset = json(created);
    const put = await ctx().inject({
      method: 'PUT',
      url: pathOf(asset.url),
      payload: bytes,
      headers: { 'content-type': 'image/jpeg' },
    });
    problems.push(...check('PUT', pathOf(asset.url), put));
    await worker.drain();
    const second = await call('POST', '/v1/assets/asset', {
      metadataTemplateId,
      securityTemplateIds: [org.defaultTemplateId],
      metadata: [{ name: 'title', value: 'Second' }],
    });
    const other = json(second).data.objectId;
    for (const url of [
      `/v1/asset/${asset.objectId}`,
      `/v1/asset/${asset.objectId}/latest`,
      `/v1/asset/${asset.objectId}/version`,
      `/v1/assets/asset/${asset.objectId}`,
      `/v1/assets/${asset.fileId}`,
      `/v1/asset/${other}`,
    ]) {
      assert.equal((await call('GET', url)).statusCode, 200, url);
    }
    await call('PATCH', `/v1/asset/${asset.objectId}`, {
      metadata: [{ metadataDefinitionId: attr('title'), metadataDefinitionValue: 'Harbour at dusk' }],
    });
    await call('PATCH', `/v1/assets/asset/${asset.objectId}`, { metadata: [{ name: 'description', value: 'Boats' }] });
    await call('POST', `/v1/asset/${asset.objectId}/link`, { secondaryIds: [{ id: other, linkType: 'child' }] });
    await call('GET', `/v1/asset/${asset.objectId}/link`);
    await call('GET', `/v1/asset/${asset.objectId}/content`);
    await call('POST', '/v1/asset/expose', [
      {
        id: asset.objectId,
        identifier: 'objectId',
        components: [
          { componentType: 'rendition', componentRef: ['imageThumb'], expiration: 600 },
          { componentType: 'object', componentRef: 'original', expiration: 600 },
        ],
      },
    ]);
    await call('POST', '/v1/asset', { originalFileId: asset.originalFileId, filename: 'harbour-v2.jpg' });
    await call('POST', '/v1/search/keyword', { from: 0, limit: 10, searchTerm: ['*'], operation: 'AND' });
    await call('POST', '/v1/search/keyword', {
      from: 0,
      limit: 10,
      searchTerm: ['harbour'],
      operation: 'AND',
      excludes: ['technicalMetadata'],
    });
    await call('POST', '/v1/asset/scan', { limit: 10 });
    const collection = await call('POST', '/v1/collection', {
      collectionType: 'private',
      name: `Boats ${Date.now()}`,
      collectionDocument: [asset.fileId],
    });
    const collectionId = json(collection).collectionId ?? json(collection).objectId ?? json(collection).id;
    await call('GET', `/v1/collection/${collectionId}`);
    await call('POST', '/v1/search/collection', { from: 0, limit: 10, searchTerm: ['*'] });
    await call('POST', `/v1/collection/${collectionId}/share`, {
      sender: { name: 'Jane' },
      shareUsers: [{ email: 'john@example.com', name: 'John' }],
      shareMessage: 'Boats',
    });
    await call('POST', '/v1/asset/share', {
      sender: { name: 'Jane' },
      shareUsers: [{ email: 'john@example.com', name: 'John' }],
      assets: [asset.objectId],
      shareMessage: 'Boats',
    });
    const transform = await call('POST', '/v1/asset/transform', {
      transformations: [
        {
          objectId: asset.objectId,
          expiration: 600,
          source: 'original',
          includeOriginal: true,
          transformations: [{ type: 'resize', width: 60 }],
        },
      ],
      recipients: 'john@example.com',
    });
    await worker.drain();
    await call('GET', `/v1/action/${json(transform).jobId}`);
    await call('POST', '/v1/asset/transform', {
      transformations: [{ objectId: asset.objectId, transformations: 'digimarc' }],
    });
    await call('POST', `/v1/asset/${other}/delete`, { action: 'delete' });
    await call('POST', `/v1/asset/${other}/delete`, { action: 'undelete' });
    assert.deepEqual(problems.splice(0), []);
  });
});
