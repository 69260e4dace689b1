import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import sharp from 'sharp';
import { forEachEngine, json } from './helpers/context.ts';
import { createTestOrg, type TestOrg } from './helpers/factories.ts';
import { login } from './helpers/auth.ts';
import { assetWorker, defaultTemplate, pathOf, uploadAsset } from './helpers/assets.ts';
import type { Worker } from '../src/core/jobs/worker.ts';
import { openPlaces, schemaValidator, validatorFor } from './helpers/openapi-check.ts';
import { metadataApi, rnd } from './helpers/metadata.ts';
import { startReceiver } from './helpers/receiver.ts';
import { scim, scimKey } from './helpers/scim.ts';
import { runDeliveryOnce } from '../src/features/webhooks/index.ts';

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

  it('the parts once left open, in real answers: metadata of every type, technical metadata, audit, actions, story boards, adaptive templates, discovery documents and webhook bodies', async () => {
    const validate = schemaValidator(json(await ctx().inject({ method: 'GET', url: '/openapi.json' })));
    const rx = await startReceiver();
    try {
      const hook = await call('POST', '/webhooks/endpoint', [
        { description: 'Every event', url: rx.url, eventTypes: ['*'] },
      ]);
      assert.equal(hook.statusCode, 200, hook.body);
      // A template with every attribute type: text, multi-value text, date, vocabulary (single and
      // multi), a cascade, and a table whose row holds a vocabulary, a text and a cascade.
      const api = metadataApi(ctx(), org);
      const { colors, shades, red, blue } = await api.cascadeVocabularies();
      const channels = await api.vocabulary(`Channels ${rnd()}`, ['Web', 'Print', 'TV']);
      const web = api.valueId(channels, 'Web');
      const tv = api.valueId(channels, 'TV');
      const navy = api.valueId(shades, 'Navy');
      const crimson = api.valueId(shades, 'Crimson');
      const a = {
        headline: await api.attribute({ name: `Headline ${rnd()}`, type: 'text', length: 100 }),
        tags: await api.attribute({ name: `Tags ${rnd()}`, type: 'text', isMultipleSelect: true }),
        live: await api.attribute({ name: `Live ${rnd()}`, type: 'date', dateFormat: 'dd/MM/yyyy' }),
        channel: await api.attribute({
          name: `Channel ${rnd()}`,
          type: 'controlledVocabulary',
          controlledVocabularyId: channels.metadataDefinitionId,
        }),
        channels: await api.attribute({
          name: `Channels ${rnd()}`,
          type: 'controlledVocabulary',
          controlledVocabularyId: channels.metadataDefinitionId,
          isMultipleSelect: true,
        }),
        palette: await api.attribute({
          name: `Palette ${rnd()}`,
          type: 'cascade',
          levels: [
            { name: 'Color', controlledVocabularyId: colors.metadataDefinitionId },
            { name: 'Shade', controlledVocabularyId: shades.metadataDefinitionId },
          ],
        }),
        note: await api.attribute({ name: `Note ${rnd()}`, type: 'text', length: 20 }),
      };
      const usage = await api.attribute({
        name: `Usage ${rnd()}`,
        type: 'table',
        tableFieldIds: [a.channel.id, a.note.id, a.palette.id],
      });
      const group = await api.group(`Everything ${rnd()}`, [...Object.values(a).map((d) => d.id), usage.id]);
      const templateId = (await api.template(`Everything ${rnd()}`, [group.id])).templateId;
      const [color, shade] = a.palette.cascadeFieldsDenormalized.map((l: any) => l.id);
      const cell = (id: string, v: unknown) => ({ metadataDefinitionId: id, metadataDefinitionValue: v });
      const cascade = (c: string, s: string) => [cell(color, { valueId: c }), cell(shade, { valueId: s })];
      const created = await call('POST', '/v1/asset', {
        metadataTemplateId: templateId,
        securityTemplateIds: [org.defaultTemplateId],
        filename: 'camera.jpg',
        metadata: [
          cell(a.headline.id, 'Harbour at dusk'),
          cell(a.tags.id, ['boats', 'dusk']),
          cell(a.live.id, '29/02/2024'),
          cell(a.channel.id, { valueId: web }),
          cell(a.channels.id, [{ valueId: web }, { valueId: tv }]),
          cell(a.palette.id, cascade(red, crimson)),
          {
            metadataDefinitionId: usage.id,
            metadataDefinitionTableValue: [
              [cell(a.channel.id, { valueId: web }), cell(a.palette.id, cascade(blue, navy))],
              [cell(a.note.id, 'A4')],
            ],
          },
        ],
      });
      assert.equal(created.statusCode, 200, created.body);
      const asset = json(created);
      // A photograph with EXIF, so technicalMetadata.image_metadata.exif is filled.
      const photo = await sharp({ create: { width: 90, height: 60, channels: 3, background: { r: 9, g: 90, b: 160 } } })
        .withExif({ IFD0: { Make: 'Canon', Model: 'EOS R5', Software: 'Tessera test' } })
        .jpeg()
        .toBuffer();
      const put = await ctx().inject({
        method: 'PUT',
        url: pathOf(asset.url),
        payload: photo,
        headers: { 'content-type': 'image/jpeg' },
      });
      assert.equal(put.statusCode, 200, put.body);
      await worker.drain();
      const read = json(await call('GET', `/v1/asset/${asset.objectId}`));
      const denormalized = read.metadataDenormalized;
      assert.equal(denormalized[a.headline.searchField], 'Harbour at dusk');
      assert.deepEqual(denormalized[a.channels.searchField], ['Web', 'TV']);
      assert.deepEqual(Object.keys(denormalized[a.palette.searchField]).length, 2);
      assert.ok(Array.isArray(denormalized[usage.searchField]));
      assert.equal(read.technicalMetadata.image_metadata.exif.make, 'Canon');
      await call('GET', `/v1/assets/asset/${asset.objectId}`);
      await call('GET', `/v1/assets/asset/${asset.objectId}?system=false&empty=false`);
      await call('POST', '/v1/search/keyword', { from: 0, limit: 10, searchTerm: ['harbour'], operation: 'AND' });
      // An action with input and result: a bulk edit.
      const bulk = await call('PATCH', '/v1/asset', {
        metadataTemplateId: templateId,
        objectIds: [asset.objectId],
        metadataDocument: [{ metadataDefinitionId: a.note.id, metadataDefinitionValue: 'Bulk' }],
      });
      assert.ok(bulk.statusCode < 300, bulk.body);
      await worker.drain();
      const action = json(await call('GET', `/v1/action/${json(bulk).jobId}`));
      assert.equal(typeof action.result, 'object');
      // A pending definition change, the audit trail and the asset's history.
      await api.call('PATCH', `/v1/metadata/attributes/${a.note.id}`, { name: `Remark ${rnd()}` }, 200);
      assert.ok(json(await call('GET', '/v1/metadata/changes')).results.length > 0);
      assert.ok(json(await call('GET', '/v1/audit?limit=100')).items.some((e: any) => Object.keys(e.data).length > 0));
      await call('GET', '/v1/audit/export?format=json');
      await call('GET', `/v1/asset/${asset.objectId}/history`);
      // A story board and an adaptive template, read back.
      const board = await call('POST', '/v1/storyboards', {
        title: 'Harbour',
        blocks: [
          { type: 'heading', text: 'At dusk', level: 1 },
          { type: 'asset', assetId: asset.objectId, caption: 'Boats' },
          { type: 'gallery', assetIds: [asset.objectId] },
        ],
      });
      assert.equal(board.statusCode, 201, board.body);
      await call('GET', `/v1/storyboards/${json(board).id}`);
      await call('GET', `/v1/storyboards/${json(board).id}/view`);
      const svg = await uploadAsset(
        ctx(),
        org,
        Buffer.from(
          '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100"><text x="10" y="50">{{headline|Sale}}</text></svg>',
        ),
        'banner.svg',
        { securityTemplateIds: [org.defaultTemplateId] },
      );
      const template = await call('POST', '/v1/adaptive-templates', { assetId: svg.objectId });
      assert.equal(template.statusCode, 201, template.body);
      await call('GET', `/v1/adaptive-templates/${json(template).templateId}`);
      // Discovery documents.
      for (const url of ['/openapi.json', '/.well-known/jwks.json', '/.well-known/openid-configuration'])
        await call('GET', url, undefined, { accesstoken: '', authorization: '' });
      await call('GET', '/webhooks/event-type/list');
      const key = await scimKey(ctx(), org);
      for (const path of ['/ServiceProviderConfig', '/ResourceTypes', '/Schemas']) {
        const res = await scim(ctx(), key, 'GET', path);
        assert.equal(res.statusCode, 200, res.body);
        problems.push(...check('GET', `/scim/v2${path}`, res));
      }
      // Every webhook body sent for all of the above, against the document's `webhooks`.
      await runDeliveryOnce(ctx().deps);
      const types = new Set<string>();
      for (const hit of rx.received) {
        const body = JSON.parse(hit.body);
        types.add(body.eventType);
        problems.push(
          ...validate(
            ['webhooks', body.eventType, 'post', 'requestBody', 'content', 'application/json', 'schema'],
            body,
          ),
        );
      }
      for (const type of ['asset.created', 'metadata.attribute.updated', 'storyboard.created'])
        assert.ok(types.has(type), `${type} among ${[...types].join(', ')}`);
    } finally {
      await rx.close();
    }
    assert.deepEqual(problems.splice(0), []);
  });
});

/**
 * The places /openapi.json leaves open on purpose, each with why: a value that is any JSON because
 * the client (or the OpenAPI specification) defines it. Every other schema must declare its
 * properties, or the type of its values (issue 24: an honest document). An entry that no longer
 * matches anything fails too, so the list stays true.
 */
const OPEN_ON_PURPOSE: { where: RegExp; reason: string }[] = [
  {
    where: /^GET \/openapi\.json 200\.(paths|webhooks|components\.schemas|components\.securitySchemes)\//,
    reason: 'The OpenAPI document itself: its operations and schemas are defined by the OpenAPI 3.1 specification',
  },
  {
    where:
      /^GET \/webhooks\/event-type\/list 200\/items\.schema\.properties\/additionalProperties\/additionalProperties /,
    reason:
      "An event's JSON Schema: a field's schema is made of JSON Schema keywords (the same schemas are in `webhooks`)",
  },
  {
    where:
      /^GET \/v1\/(audit|audit\/export|asset\/\{id\}\/history) 200(\.items)?\/items\.data\.changes\/additionalProperties\.(before|after) /,
    reason:
      "Audit: a changed field's value before and after has that field's own type (a name, a list of ids, a setting…)",
  },
  {
    where: /^GET \/v1\/(audit|audit\/export|asset\/\{id\}\/history) 200(\.items)?\/items\.data\/additionalProperties /,
    reason:
      "Audit: the action's own data (for an entry that publishes an event, its topic objects, declared in `webhooks`)",
  },
  {
    where: /^GET \/v1\/metadata\/changes 200\.results\/items\.data\/additionalProperties /,
    reason: 'A pending definition change: further details depend on its kind (the description lists them)',
  },
  {
    where: /^#Action\.(input|result)\/additionalProperties /,
    reason: "An action's parameters and counts depend on its type; the fields each type writes are declared",
  },
  {
    where: /^(#MetadataTemplateAdmin|(POST|PATCH) \/v1\/metadata\/template(\/\{id\})? body)\.templateOverride /,
    reason: "The reference's template override: stored and answered as the client sent it, never read by Tessera",
  },
  {
    where: /^POST \/v1\/asset\/content\/preview body\.contentPaths\/additionalProperties /,
    reason: "Accepted for the reference's clients, never read by Tessera",
  },
  {
    where: /^PATCH \/scim\/v2\/(Users|Groups)\/\{id\} body\.Operations\/items\.value /,
    reason:
      'SCIM PatchOp value (RFC 7644 §3.5.2): its type follows the path (a string, a boolean, members, or attributes)',
  },
  {
    where:
      /^webhook collection\.(updated|metadata\.updated|security\.updated) body\.collection\.metadata\/items\.value /,
    reason: "A collection attribute's new value as the request sent it, in either metadata encoding",
  },
];

forEachEngine('OpenAPI: no schema is free-form unless listed with its reason (issue 24)', (ctx) => {
  it('every object declares its properties or the type of its values; the open places are the listed ones', async () => {
    const doc = json(await ctx().inject({ method: 'GET', url: '/openapi.json' }));
    const places = openPlaces(doc);
    const unexplained = places.filter((place) => !OPEN_ON_PURPOSE.some((o) => o.where.test(place)));
    assert.deepEqual(unexplained, [], 'free-form places without a reason');
    for (const { where, reason } of OPEN_ON_PURPOSE) {
      assert.ok(
        places.some((place) => where.test(place)),
        `no longer open: ${where} (${reason})`,
      );
      assert.ok(reason.length > 20);
      // An open place is still declared as what it is: any JSON, with a description.
      for (const place of places.filter((p) => where.test(p))) assert.match(place, /\(any JSON\)$/, place);
    }
    // The walk finds what it looks for: the document as it was before (metadataDenormalized open).
    const old = structuredClone(doc);
    old.components.schemas.Asset.properties.metadataDenormalized = { type: 'object', additionalProperties: true };
    old.components.schemas.Asset.properties.metadata.items.properties.metadataDefinitionValue = { description: 'x' };
    assert.deepEqual(
      openPlaces(old).filter((p) => p.startsWith('#Asset')),
      [
        '#Asset.metadata/items.metadataDefinitionValue (any value, undeclared)',
        '#Asset.metadataDenormalized (object without properties)',
      ],
    );
  });
});
