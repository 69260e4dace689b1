import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { ALL_PERMISSIONS, ALL_PRIVILEGES, type Permission, type Privilege } from '../../src/core/authz/catalog.ts';
import {
  ACTIONS,
  ALL_ACTIONS,
  permissionTableMarkdown,
  type Action,
  type ActionRule,
} from '../../src/core/authz/permissions.ts';
import type { Worker } from '../../src/core/jobs/worker.ts';
import { assetWorker, createAsset, defaultTemplate, jpeg, uploadAsset } from '../helpers/assets.ts';
import { createKey } from '../helpers/api-keys.ts';
import { createTestContext, forEachEngine, json, type TestContext } from '../helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg } from '../helpers/factories.ts';
import { createGroup, createTemplate } from '../helpers/permissions.ts';

/**
 * The permission matrix, generated from the permission table (src/core/authz/permissions.ts):
 * every row × every kind of principal × both engines. Also fails when a documented route of the
 * asset, collection, story-board, search or CDN features is in no row of the table, so a new
 * route cannot be forgotten, and when docs/security-audit.md's copy of the table is stale.
 */

const TAGS = new Set(['assets', 'collections', 'storyboards', 'cdn', 'search', 'saved-searches', 'audit', 'quotas']);
/** Rows shown by their own tests instead of a probe here (no route of their own). */
const ELSEWHERE: Partial<Record<Action, string>> = {
  'asset.sensitive_data': 'test/security/sensitive-data.test.ts',
  'asset.download_out_of_rights': 'src/features/assets/rights/out-of-rights.test.ts',
  'audit.read': 'src/features/audit/audit.test.ts',
  'delivery_preset.read': 'src/features/assets/delivery/delivery.test.ts',
  'delivery_preset.manage': 'src/features/assets/delivery/delivery.test.ts',
  'quota.read': 'src/features/quotas/quotas.test.ts',
  'quota.manage': 'src/features/quotas/quotas.test.ts',
};

describe('the permission table covers every documented route of assets, collections, story boards, search and CDN', () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await createTestContext('sqlite');
  });
  after(async () => {
    await ctx.close();
  });

  it('names every operation of those features (a new route fails here until it has a row)', async () => {
    const doc = json(await ctx.inject({ method: 'GET', url: '/openapi.json' }));
    const inTable = new Set(ALL_ACTIONS.flatMap((a) => [...(ACTIONS[a] as ActionRule).operations]));
    const missing: string[] = [];
    const documented = new Set<string>();
    for (const [path, item] of Object.entries<Record<string, { operationId: string; tags?: string[] }>>(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (!op.tags?.some((t) => TAGS.has(t))) continue;
        documented.add(op.operationId);
        if (!inTable.has(op.operationId)) missing.push(`${method.toUpperCase()} ${path} (${op.operationId})`);
      }
    }
    assert.deepEqual(missing, [], 'routes without a row in src/core/authz/permissions.ts');
    const unknown = [...inTable].filter((o) => !documented.has(o));
    assert.deepEqual(unknown, [], 'rows naming operations that are not documented');
  });

  it('is what docs/security-audit.md shows', () => {
    const doc = readFileSync(new URL('../../docs/security-audit.md', import.meta.url), 'utf8');
    assert.ok(
      doc.includes(permissionTableMarkdown()),
      'docs/security-audit.md: paste permissionTableMarkdown() (src/core/authz/permissions.ts) into the permission-table section',
    );
  });

  it('has a probe (or a named test) for every row that callers reach with credentials', () => {
    const unprobed = ALL_ACTIONS.filter((a) => !(ACTIONS[a] as ActionRule).capability && !PROBES[a] && !ELSEWHERE[a]);
    assert.deepEqual(unprobed, []);
  });
});

interface Env {
  ctx: TestContext;
  org: TestOrg;
  /** the group of the principals under test */
  groupId: string;
  metadataTemplateId: string;
  zoneId: number;
}
interface Caller {
  headers: Record<string, string>;
  userId?: string;
}
interface Req {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  url: string;
  payload?: unknown;
  id?: string;
}
interface Probe {
  /** A fresh request on a thing carrying security template `templateId` (as the administrator made it). */
  request(env: Env, templateId: string, caller: Caller): Promise<Req>;
  /** Names a thing of the organization: another organization gets 404 (400 naming the field when the id is in the body). */
  resource: boolean | 'body';
  /** Filters instead of refusing (searches, purge): allowed means `shows` holds, denied that it does not. */
  shows?(env: Env, res: LightMyRequestResponse, req: Req): Promise<boolean> | boolean;
}

const rnd = () => Math.random().toString(36).slice(2, 8);
const adminPost = async (env: Env, url: string, payload: unknown, method: 'POST' | 'PATCH' = 'POST') => {
  const res = await env.ctx.inject({ method, url, headers: env.org.admin.headers, payload });
  assert.ok(res.statusCode < 300, `${url}: ${res.body}`);
  return json(res);
};
const asset = async (env: Env, templateId: string) =>
  (await createAsset(env.ctx, env.org, { securityTemplateIds: [templateId] })).objectId;
const withContent = async (env: Env, templateId: string) =>
  uploadAsset(env.ctx, env.org, await jpeg(8, 8), 'p.jpg', { securityTemplateIds: [templateId] });
const collection = async (env: Env, templateId: string, members: string[] = []) =>
  (
    await adminPost(env, '/v1/collection', {
      collectionType: 'secured',
      name: `c ${rnd()}`,
      securityTemplateIds: [templateId],
      collectionDocument: members,
    })
  ).collectionId as string;
const board = async (env: Env, templateId: string) =>
  (
    await adminPost(env, '/v1/storyboards', {
      title: `b ${rnd()}`,
      status: 'published',
      securityTemplateIds: [templateId],
    })
  ).id as string;
const savedSearch = async (env: Env, templateId: string) =>
  (await adminPost(env, '/v1/saved-searches', { name: `s ${rnd()}`, query: {}, securityTemplateIds: [templateId] }))
    .id as string;
const viewOnly = new Map<string, string>();
/** A template granting the principals' group View only (what apply-template probes add). */
const viewTemplate = async (env: Env) => {
  const key = `${env.org.orgId}:${env.groupId}`;
  if (!viewOnly.has(key)) viewOnly.set(key, await createTemplate(env.ctx, env.org, [[env.groupId, ['view']]]));
  return viewOnly.get(key)!;
};

const PROBES: Partial<Record<Action, Probe>> = {
  'asset.create': {
    resource: false,
    request: async (env, t) => ({
      method: 'POST',
      url: '/v1/asset',
      payload: { metadataTemplateId: env.metadataTemplateId, metadata: [], securityTemplateIds: [t] },
    }),
  },
  'asset.version': {
    resource: 'body',
    request: async (env, t) => ({ method: 'POST', url: '/v1/asset', payload: { originalFileId: await asset(env, t) } }),
  },
  'asset.view': {
    resource: true,
    request: async (env, t) => ({ method: 'GET', url: `/v1/asset/${await asset(env, t)}` }),
  },
  'asset.search': {
    resource: false,
    request: async (env, t) => {
      const word = `w${rnd()}${rnd()}`;
      const { id: _m, attr } = await defaultTemplate(env.ctx, env.org);
      const id = (
        await createAsset(env.ctx, env.org, {
          securityTemplateIds: [t],
          metadata: [{ metadataDefinitionId: attr('title'), metadataDefinitionValue: word }],
        })
      ).objectId;
      return { method: 'POST', url: '/v1/search/keyword', payload: { searchTerm: [word] }, id };
    },
    shows: (_env, res, req) => res.statusCode === 200 && JSON.stringify(json(res)).includes(req.id!),
  },
  'asset.edit_metadata': {
    resource: true,
    request: async (env, t) => ({
      method: 'PATCH',
      url: `/v1/asset/${await asset(env, t)}`,
      payload: { metadata: [] },
    }),
  },
  'asset.apply_security_template': {
    resource: true,
    request: async (env, t) => ({
      method: 'PATCH',
      url: `/v1/asset/${await asset(env, t)}`,
      payload: { securityTemplateIds: [t, await viewTemplate(env)] },
    }),
  },
  'asset.download': {
    resource: true,
    request: async (env, t) => ({ method: 'GET', url: `/v1/asset/${(await withContent(env, t)).objectId}/content` }),
  },
  'asset.deliver': {
    resource: true,
    request: async (env, t) => ({
      method: 'GET',
      url: `/v1/asset/${(await withContent(env, t)).objectId}/delivery?width=4&format=png`,
    }),
  },
  'asset.transform': {
    resource: 'body',
    request: async (env, t) => ({
      method: 'POST',
      url: '/v1/asset/transform',
      payload: {
        transformations: [
          { objectId: (await withContent(env, t)).objectId, transformations: [{ type: 'resize', width: 16 }] },
        ],
      },
    }),
  },
  'asset.share': {
    resource: 'body',
    request: async (env, t) => ({
      method: 'POST',
      url: '/v1/asset/share',
      payload: {
        sender: { name: 'S' },
        shareUsers: [{ email: 'r@example.test' }],
        assets: [(await withContent(env, t)).objectId],
      },
    }),
  },
  'asset.delete': {
    resource: true,
    request: async (env, t) => ({
      method: 'POST',
      url: `/v1/asset/${await asset(env, t)}/delete`,
      payload: { action: 'delete' },
    }),
  },
  'asset.purge': {
    resource: true,
    request: async (env, t) => {
      const id = await asset(env, t);
      await adminPost(env, `/v1/asset/${id}/delete`, { action: 'delete' });
      return { method: 'POST', url: '/v1/asset/purge', payload: { objectIds: [id] }, id };
    },
    shows: async (env, res, req) => {
      if (res.statusCode >= 300) return false;
      await WORKERS.get(env.ctx)!.drain();
      return (
        (await env.ctx.deps.db.selectFrom('assets').select('id').where('id', '=', req.id!).executeTakeFirst()) ===
        undefined
      );
    },
  },
  'asset.relationship': {
    resource: true,
    request: async (env, t) => ({
      method: 'POST',
      url: `/v1/asset/${await asset(env, t)}/link`,
      payload: { secondaryIds: [{ id: await asset(env, t), linkType: 'child' }] },
    }),
  },
  'asset.replace_preview': {
    resource: 'body',
    request: async (env, t) => ({
      method: 'POST',
      url: '/v1/asset/content/preview',
      payload: { fileIds: [(await withContent(env, t)).fileId], filename: 'p.jpg', filesize: 10 },
    }),
  },
  'asset.regenerate': {
    resource: false,
    request: async (env, t) => ({
      method: 'POST',
      url: '/v1/asset/renditions',
      payload: { objectIds: [await asset(env, t)] },
    }),
  },
  'collection.create': {
    resource: false,
    request: async (_env, t) => ({
      method: 'POST',
      url: '/v1/collection',
      payload: { collectionType: 'secured', name: `c ${rnd()}`, securityTemplateIds: [t] },
    }),
  },
  'collection.view': {
    resource: true,
    request: async (env, t) => ({ method: 'GET', url: `/v1/collection/${await collection(env, t)}` }),
  },
  'collection.search': {
    resource: false,
    request: async (env, t) => {
      const name = `find${rnd()}`;
      await adminPost(env, '/v1/collection', { collectionType: 'secured', name, securityTemplateIds: [t] });
      return { method: 'POST', url: '/v1/search/collection', payload: { searchTerm: [name] }, id: name };
    },
    shows: (_env, res, req) => res.statusCode === 200 && JSON.stringify(json(res)).includes(req.id!),
  },
  'collection.edit': {
    resource: true,
    request: async (env, t) => ({
      method: 'PATCH',
      url: `/v1/collections/${await collection(env, t)}`,
      payload: { collectionName: `n ${rnd()}` },
    }),
  },
  'collection.delete': {
    resource: true,
    // A private collection is its owner's: the caller is made its owner.
    request: async (env, _t, caller) => {
      const id = (await adminPost(env, '/v1/collection', { collectionType: 'private', name: `p ${rnd()}` }))
        .collectionId as string;
      if (caller.userId)
        await env.ctx.deps.db
          .updateTable('collections')
          .set({ owner_id: caller.userId })
          .where('id', '=', id)
          .execute();
      return { method: 'DELETE', url: `/v1/collection/${id}` };
    },
  },
  'collection.delete_secured': {
    resource: true,
    request: async (env, t) => ({ method: 'DELETE', url: `/v1/collection/${await collection(env, t)}` }),
  },
  'collection.share': {
    resource: true,
    request: async (env, t) => {
      const shareable = await createTemplate(env.ctx, env.org, [
        [env.groupId, ['view', 'download', 'share']],
        [env.org.groups.administrators, ALL_PERMISSIONS],
      ]);
      const member = await withContent(env, shareable);
      return {
        method: 'POST',
        url: `/v1/collection/${await collection(env, t, [member.fileId])}/share`,
        payload: { sender: { name: 'S' }, shareUsers: [{ email: 'r@example.test' }] },
      };
    },
  },
  'storyboard.view': {
    resource: true,
    request: async (env, t) => ({ method: 'GET', url: `/v1/storyboards/${await board(env, t)}` }),
  },
  'storyboard.create': {
    resource: false,
    request: async () => ({ method: 'POST', url: '/v1/storyboards', payload: { title: `b ${rnd()}` } }),
  },
  'storyboard.edit': {
    resource: true,
    request: async (env, t) => ({
      method: 'PATCH',
      url: `/v1/storyboards/${await board(env, t)}`,
      payload: { title: `t ${rnd()}` },
    }),
  },
  'storyboard.apply_security_template': {
    resource: true,
    request: async (env, t) => ({
      method: 'PATCH',
      url: `/v1/storyboards/${await board(env, t)}`,
      payload: { securityTemplateIds: [t, await viewTemplate(env)] },
    }),
  },
  'storyboard.delete': {
    resource: true,
    request: async (env, t) => ({ method: 'DELETE', url: `/v1/storyboards/${await board(env, t)}` }),
  },
  'storyboard.share_internal': {
    resource: true,
    request: async (env, t) => ({
      method: 'POST',
      url: `/v1/storyboards/${await board(env, t)}/shares`,
      payload: { groupIds: [env.org.groups.everyone] },
    }),
  },
  'storyboard.share_external': {
    resource: true,
    request: async (env, t) => ({ method: 'POST', url: `/v1/storyboards/${await board(env, t)}/links`, payload: {} }),
  },
  'saved_search.use': {
    resource: true,
    request: async (env, t) => ({ method: 'GET', url: `/v1/saved-searches/${await savedSearch(env, t)}` }),
  },
  'saved_search.edit': {
    resource: true,
    request: async (env, t) => ({
      method: 'PATCH',
      url: `/v1/saved-searches/${await savedSearch(env, t)}`,
      payload: { name: `s ${rnd()}` },
    }),
  },
  'cdn.manage': { resource: false, request: async () => ({ method: 'GET', url: '/v1/cdn/pullzones' }) },
  'cdn.publish': {
    resource: true,
    request: async (env, t) => ({
      method: 'POST',
      url: '/v1/cdn/publish',
      payload: { assets: [(await withContent(env, t)).objectId], pullZoneId: env.zoneId },
    }),
  },
};

const WORKERS = new Map<TestContext, Worker>();

/** The privileges of a role that holds exactly what `rule` needs. */
function onlyNeeded(rule: ActionRule): Privilege[] {
  return [...rule.privileges, ...(rule.anyPrivilege ? [rule.anyPrivilege[0]!] : [])];
}

/** Roles each lacking one needed privilege (for "one of", lacking all of them). */
function lackingOne(rule: ActionRule): [string, Privilege[]][] {
  const out: [string, Privilege[]][] = rule.privileges.map((p) => [p, ALL_PRIVILEGES.filter((q) => q !== p)]);
  if (rule.anyPrivilege)
    out.push([rule.anyPrivilege.join('|'), ALL_PRIVILEGES.filter((q) => !rule.anyPrivilege!.includes(q))]);
  return out;
}

forEachEngine('security: the permission matrix (principal × action)', (getCtx) => {
  let org: TestOrg;
  let stranger: TestOrg;
  let metadataTemplateId: string;
  let zoneId: number;
  before(async () => {
    const ctx = getCtx();
    org = await createTestOrg(ctx);
    stranger = await createTestOrg(ctx);
    metadataTemplateId = (await defaultTemplate(ctx, org)).id;
    const zone = await ctx.inject({
      method: 'POST',
      url: '/v1/cdn/configure',
      headers: org.admin.headers,
      payload: { name: `m-${rnd()}`, region: 'de', url: `https://m-${rnd()}.cdn.example.com` },
    });
    assert.equal(zone.statusCode, 200, zone.body);
    zoneId = json(zone).id;
    WORKERS.set(ctx, assetWorker(ctx));
  });
  after(async () => {
    await WORKERS.get(getCtx())?.stop();
  });

  for (const action of ALL_ACTIONS) {
    const rule: ActionRule = ACTIONS[action];
    const probe = PROBES[action];
    if (!probe) continue;
    it(`${action}: admin, holder of exactly the row, API key allowed; lacking a privilege or a permission refused; another organization 404`, async () => {
      const ctx = getCtx();
      const groupId = await createGroup(ctx, org);
      const env: Env = { ctx, org, groupId, metadataTemplateId, zoneId };
      const needed = new Set<Permission>(['view', ...rule.permissions]);
      const grants = await createTemplate(ctx, org, [
        [groupId, [...needed]],
        [org.groups.administrators, ALL_PERMISSIONS],
      ]);
      const less = rule.permissions.filter((p) => p !== 'view');
      // View only when the row needs more than View; nothing at all when View is all it needs.
      const denies = await createTemplate(ctx, org, [
        [groupId, less.length > 0 ? ['view'] : []],
        [org.groups.administrators, ALL_PERMISSIONS],
      ]);
      const user = async (privileges: Privilege[]) => {
        const u = await createTestUser(ctx, org, { privileges, groupIds: [groupId] });
        return { headers: u.headers, userId: u.userId };
      };
      const adminKey = await createKey(ctx, org, { roleId: org.roles.administrator });

      const run = async (who: string, caller: Caller, templateId: string, expect: 'allowed' | 'refused' | 'hidden') => {
        const req = await probe.request(env, templateId, caller);
        const res = await ctx.inject({
          method: req.method,
          url: req.url,
          payload: req.payload,
          headers: caller.headers,
        });
        const label = `${action} as ${who}: ${req.method} ${req.url} → ${res.statusCode} ${res.body.slice(0, 300)}`;
        if (probe.shows) {
          const shown = await probe.shows(env, res, req);
          if (expect === 'allowed') assert.ok(shown, label);
          else assert.ok(!shown && res.statusCode !== 500, label);
          return;
        }
        if (expect === 'allowed') assert.ok(res.statusCode < 300, label);
        else if (expect === 'hidden') assert.equal(res.statusCode, 404, label);
        else
          assert.ok(
            res.statusCode === 403 ||
              (res.statusCode === 404 && probe.resource && rule.privileges.length === 0 && !rule.anyPrivilege),
            label,
          );
      };

      await run('the administrator', { headers: org.admin.headers, userId: org.admin.userId }, grants, 'allowed');
      const keyUser = await ctx.deps.db
        .selectFrom('api_keys')
        .select('service_user_id')
        .where('id', '=', adminKey.id)
        .executeTakeFirstOrThrow();
      await run(
        "the administrator's API key",
        { headers: { 'x-api-key': adminKey.key }, userId: keyUser.service_user_id },
        grants,
        rule.ownSignIn ? 'refused' : 'allowed',
      );
      await run(
        'a role with only the needed privileges, template granting the needed permissions',
        await user(onlyNeeded(rule)),
        grants,
        'allowed',
      );
      await run(
        'every privilege, template granting the needed permissions',
        await user(ALL_PRIVILEGES),
        grants,
        'allowed',
      );
      for (const [missing, privileges] of lackingOne(rule)) {
        await run(`a role without ${missing}`, await user(privileges), grants, 'refused');
      }
      if (rule.permissions.length > 0) {
        await run(
          'every privilege, template denying the needed permission',
          await user(ALL_PRIVILEGES),
          denies,
          less.length > 0 ? 'refused' : 'hidden',
        );
      }
      if (probe.resource) {
        const req = await probe.request(env, grants, { headers: stranger.admin.headers });
        const res = await ctx.inject({
          method: req.method,
          url: req.url,
          payload: req.payload,
          headers: stranger.admin.headers,
        });
        if (probe.shows)
          assert.ok(
            !(await probe.shows(env, res, req)),
            `${action} from another organization: ${res.statusCode} ${res.body}`,
          );
        else if (probe.resource === 'body')
          assert.ok(
            res.statusCode === 404 || res.statusCode === 400,
            `${action} from another organization: ${res.body}`,
          );
        else assert.equal(res.statusCode, 404, `${action} from another organization: ${res.body}`);
      }
    });
  }
});
