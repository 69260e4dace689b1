import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Compile } from 'typebox/compile';
import { forEachEngine, json } from './helpers/context.ts';
import { createTestOrg } from './helpers/factories.ts';
import { envelopeSchema, isEventType } from '../src/core/events/index.ts';

/** Every event type the reference documents (reference-api.md §14.4), asset.updated included. */
const REFERENCE_EVENT_TYPES = [
  'asset.created',
  'asset.updated',
  'asset.deleted',
  'asset.downloaded',
  'asset.shared',
  'asset.purged',
  'asset.metadata.updated',
  'asset.renditions.created',
  'asset.restored',
  'asset.security.updated',
  'user.created',
  'user.updated',
  'collection.created',
  'collection.updated',
  'collection.deleted',
  'collection.shared',
  'collection.downloaded',
  'collection.assets.updated',
  'collection.metadata.updated',
  'collection.security.updated',
  'relationship.created',
  'relationship.updated',
  'relationship.deleted',
  'rm.project.created',
  'rm.project.updated',
  'rm.project.deleted',
  'rm.agreement.created',
  'rm.agreement.updated',
  'rm.agreement.deleted',
  'rm.agreement.expired',
  'rm.entity.created',
  'rm.entity.updated',
  'rm.entity.deleted',
  'storyboard.created',
  'storyboard.updated',
  'storyboard.deleted',
  'storyboard.shared',
  'version.created',
  'version.promoted',
  'metadata.template.updated',
  'metadata.group.deleted',
  'security.template.updated',
  'message.attempt.exhausted',
];

forEachEngine('webhook event catalog (reference event types)', (ctx) => {
  it('lists every event type the reference documents, each with its schema', async () => {
    const org = await createTestOrg(ctx());
    const res = await ctx().inject({ method: 'GET', url: '/webhooks/event-type/list', headers: org.admin.headers });
    assert.equal(res.statusCode, 200);
    const listed = new Map(json(res).map((t: { name: string; schema: Record<string, any> }) => [t.name, t]));
    for (const name of REFERENCE_EVENT_TYPES) {
      const entry = listed.get(name) as { schema: Record<string, any>; description: string } | undefined;
      assert.ok(entry, `${name} is not listed`);
      assert.equal(entry.schema.properties.eventType.const, name);
      assert.ok(Object.keys(entry.schema.properties).length >= 3, `${name} has a topic object`);
    }
  });

  it('types whose feature does not exist yet are subscribable, by name and by wildcard', async () => {
    const org = await createTestOrg(ctx());
    const res = await ctx().inject({
      method: 'POST',
      url: '/webhooks/endpoint',
      headers: org.admin.headers,
      payload: [
        {
          description: 'Rights sync',
          url: 'https://example.com/rm',
          eventTypes: ['rm.project.created', 'rm.agreement.expired', 'rm.entity.*', 'asset.updated'],
        },
        {
          description: 'Reference types',
          url: 'https://example.com/all',
          eventTypes: REFERENCE_EVENT_TYPES.slice(0, 40),
        },
      ],
    });
    assert.equal(res.statusCode, 200, res.body);
    const endpoint = json(
      await ctx().inject({ method: 'GET', url: `/webhooks/endpoint/${json(res).id}`, headers: org.admin.headers }),
    );
    assert.deepEqual(endpoint.eventTypes, [
      'rm.project.created',
      'rm.agreement.expired',
      'rm.entity.*',
      'asset.updated',
    ]);
  });

  it('string fields of user payloads are never null (federated user, no company, country, phone or contact)', async () => {
    const org = await createTestOrg(ctx());
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/user',
      headers: org.admin.headers,
      payload: {
        firstName: 'Sso',
        lastName: 'User',
        friendlyName: 'Sso',
        email: 'sso@example.test',
        username: `sso-${Date.now()}`,
        accountType: 'federated',
        userRoleId: org.roles.viewer,
        groups: [org.groups.everyone],
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    const rows = await ctx()
      .deps.db.selectFrom('events')
      .select(['type', 'body'])
      .where('org_id', '=', org.orgId)
      .where('type', '=', 'user.created')
      .execute();
    assert.equal(rows.length, 1);
    const body = JSON.parse(rows[0]!.body);
    for (const field of [
      'username',
      'email',
      'firstName',
      'lastName',
      'friendlyName',
      'company',
      'country',
      'phone',
      'contact',
      'accountType',
    ]) {
      assert.equal(typeof body.user[field], 'string', `user.${field} is ${JSON.stringify(body.user[field])}`);
    }
    assert.equal(body.user.username, '', 'a federated account has no user name');
    assert.ok(isEventType('user.created'));
    assert.ok(Compile(envelopeSchema('user.created')).Check(body), 'the payload matches its published schema');
  });
});
