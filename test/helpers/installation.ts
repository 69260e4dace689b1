// A populated Tessera installation for the backup, restore and migration tests: everything made
// through the API (users, assets uploaded as real images with their renditions, metadata, a
// collection, a story board, a webhook endpoint), and a check that another installation serves the
// same records and the same bytes.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { json, TEST_SECRET, type TestContext } from './context.ts';
import { createTestUser, type TestOrg, type TestUser } from './factories.ts';
import { assetWorker, defaultTemplate, jpeg, pathOf, uploadAsset } from './assets.ts';
import { boardWithAssets } from './storyboards.ts';
import { login } from './auth.ts';

export interface Populated {
  org: TestOrg;
  user: TestUser;
  /** Every asset with content: its id and the SHA-256 of the bytes uploaded. */
  assets: { objectId: string; sha256: string }[];
  boardId: string;
  collectionIds: string[];
  endpointId: string;
}

export const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

export async function populate(ctx: TestContext, org: TestOrg): Promise<Populated> {
  const user = await createTestUser(ctx, org, { roleId: org.roles.viewer });
  const { board, assetIds } = await boardWithAssets(ctx, org);
  const assets: Populated['assets'] = [];
  for (const id of assetIds) assets.push({ objectId: id, sha256: await contentSha(ctx, org, id) });
  const template = await defaultTemplate(ctx, org);
  const worker = assetWorker(ctx);
  try {
    const photo = await jpeg(320, 200);
    const created = await uploadAsset(ctx, org, photo, 'with-metadata.jpg', {
      metadataTemplateId: template.id,
      metadata: [{ metadataDefinitionId: template.attr('title'), metadataDefinitionValue: 'Harbour at dawn' }],
    });
    assets.push({ objectId: created.objectId, sha256: sha256(photo) });
    await worker.drain();
  } finally {
    await worker.stop();
  }
  const collections = await ctx.deps.db
    .selectFrom('collections')
    .select('id')
    .where('org_id', '=', org.orgId)
    .execute();
  const endpoint = await ctx.inject({
    method: 'POST',
    url: '/webhooks/endpoint',
    headers: org.admin.headers,
    payload: [{ description: 'Backup test', url: 'https://hooks.example.com/tessera', eventTypes: ['asset.*'] }],
  });
  assert.equal(endpoint.statusCode, 200, endpoint.body);
  return {
    org,
    user,
    assets,
    boardId: board.id,
    collectionIds: collections.map((c) => c.id),
    endpointId: json(endpoint)[0]?.id ?? json(endpoint).id,
  };
}

/** The SHA-256 of an asset's original content, downloaded through the API. */
export async function contentSha(ctx: TestContext, org: TestOrg, objectId: string): Promise<string> {
  const link = await ctx.inject({ method: 'GET', url: `/v1/asset/${objectId}/content`, headers: org.admin.headers });
  assert.equal(link.statusCode, 200, link.body);
  const got = await ctx.inject({ method: 'GET', url: pathOf(json(link).presignedURL) });
  assert.equal(got.statusCode, 200, got.body.slice(0, 200));
  return sha256(got.rawPayload);
}

/**
 * `other` serves what `populated` made in the original: every asset with byte-identical content
 * and its preview rendition, the same asset records, the collections, the story board, the
 * webhook endpoint; and the user signs in with their password.
 */
export async function assertSameInstallation(
  original: TestContext,
  other: TestContext,
  populated: Populated,
): Promise<void> {
  const headers = populated.org.admin.headers;
  for (const asset of populated.assets) {
    assert.equal(await contentSha(other, populated.org, asset.objectId), asset.sha256, `content of ${asset.objectId}`);
    const before = json(await original.inject({ method: 'GET', url: `/v1/asset/${asset.objectId}`, headers }));
    const after = json(await other.inject({ method: 'GET', url: `/v1/asset/${asset.objectId}`, headers }));
    assert.deepEqual(stripUrls(after), stripUrls(before), `record of ${asset.objectId}`);
    assert.ok(after.renditions.imagePreview, `preview of ${asset.objectId}`);
    const preview = await other.inject({ method: 'GET', url: pathOf(after.renditions.imagePreview), headers });
    const previewBefore = await original.inject({
      method: 'GET',
      url: pathOf(before.renditions.imagePreview),
      headers,
    });
    assert.equal(preview.statusCode, 200, preview.body.slice(0, 200));
    assert.equal(sha256(preview.rawPayload), sha256(previewBefore.rawPayload), `preview of ${asset.objectId}`);
  }
  const title = json(
    await other.inject({ method: 'GET', url: `/v1/asset/${populated.assets.at(-1)!.objectId}`, headers }),
  );
  assert.match(JSON.stringify(title), /Harbour at dawn/);
  assert.ok(populated.collectionIds.length > 0);
  for (const id of populated.collectionIds) {
    const a = await original.inject({ method: 'GET', url: `/v1/collection/${id}`, headers });
    const b = await other.inject({ method: 'GET', url: `/v1/collection/${id}`, headers });
    assert.equal(b.statusCode, 200, b.body);
    assert.deepEqual(stripUrls(json(b)), stripUrls(json(a)), `collection ${id}`);
  }
  const boardA = await original.inject({ method: 'GET', url: `/v1/storyboards/${populated.boardId}`, headers });
  const boardB = await other.inject({ method: 'GET', url: `/v1/storyboards/${populated.boardId}`, headers });
  assert.equal(boardB.statusCode, 200, boardB.body);
  assert.deepEqual(stripUrls(json(boardB)), stripUrls(json(boardA)));
  const endpoint = await other.inject({ method: 'GET', url: `/webhooks/endpoint/${populated.endpointId}`, headers });
  assert.equal(endpoint.statusCode, 200, endpoint.body);
  assert.equal(json(endpoint).url, 'https://hooks.example.com/tessera');
  const session = await login(other, populated.user);
  assert.ok(session.session.accessToken);
}

/** Signed links differ per instance (expiry, signature); the rest of a record must not. */
function stripUrls(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (_key, v) =>
      typeof v === 'string' && /^https?:\/\//.test(v) ? v.replace(/\?.*$/, '?…') : v,
    ),
  );
}

/** Runs `tessera …` in its own process, as an operator would, without blocking this one. */
export function runTessera(
  args: string[],
  env: Record<string, string | undefined>,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const full: Record<string, string | undefined> = {
    ...process.env,
    TESSERA_LOG_LEVEL: 'silent',
    TESSERA_SECRET_KEY: TEST_SECRET,
    ...env,
  };
  for (const [k, v] of Object.entries(full)) if (v === undefined) delete full[k];
  if (!('DATABASE_URL' in env)) delete full.DATABASE_URL;
  if (!('TESSERA_STORAGE' in env)) delete full.TESSERA_STORAGE;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/tessera.mjs', ...args], { env: full as NodeJS.ProcessEnv });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

export async function readJson(path: string): Promise<any> {
  return JSON.parse(await readFile(path, 'utf8'));
}

export const manifestOf = (dir: string) => readJson(join(dir, 'manifest.json'));
