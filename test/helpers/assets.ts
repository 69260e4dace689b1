import assert from 'node:assert/strict';
import sharp from 'sharp';
import type { TestContext } from './context.ts';
import type { TestOrg } from './factories.ts';
import { startWorker, type Worker } from '../../src/core/jobs/worker.ts';
import { assetJobHandlers } from '../../src/features/assets/index.ts';
import { defaultTemplateId, loadTemplate } from '../../src/features/metadata/index.ts';

/** Test helpers for assets: real images, real uploads through the HTTP API. */
/** The organization's default metadata template (seeded with every organization) and its attribute ids by searchField. */
export async function defaultTemplate(
  ctx: TestContext,
  org: TestOrg,
): Promise<{ id: string; attr: (searchField: string) => string }> {
  const id = (await defaultTemplateId(ctx.deps.db, org.orgId))!;
  const t = (await loadTemplate(ctx.deps.db, org.orgId, id))!;
  return { id, attr: (sf) => t.attributes.find((a) => a.searchField === sf)!.id };
}

export async function jpeg(width = 64, height = 48, options: { orientation?: number } = {}): Promise<Buffer> {
  let img = sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 90 } } }).jpeg({
    quality: 80,
  });
  if (options.orientation) img = img.withMetadata({ orientation: options.orientation });
  return img.toBuffer();
}

export async function image(format: 'png' | 'webp' | 'tiff' | 'jpeg', width = 64, height = 48): Promise<Buffer> {
  const base = sharp({ create: { width, height, channels: 4, background: { r: 10, g: 120, b: 200, alpha: 0.5 } } });
  return base.toFormat(format).toBuffer();
}

/** The path and query of a Tessera URL (inject takes paths). */
export function pathOf(url: string): string {
  const u = new URL(url);
  return u.pathname + u.search;
}

export async function createAsset(
  ctx: TestContext,
  org: TestOrg,
  body: Record<string, unknown> = {},
  headers = org.admin.headers,
) {
  const res = await ctx.inject({
    method: 'POST',
    url: '/v1/asset',
    headers,
    payload: {
      metadataTemplateId: (await defaultTemplateId(ctx.deps.db, org.orgId))!,
      metadata: [],
      securityTemplateIds: [org.defaultTemplateId],
      ...body,
    },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as {
    objectId: string;
    fileId: string;
    originalFileId: string;
    url?: string;
    uploadId?: string;
    urls?: { partNumber: number; url: string }[];
    versionNumber: number;
  };
}

/** Creates an asset and uploads `content` to its presigned URL (local storage). */
export async function uploadAsset(
  ctx: TestContext,
  org: TestOrg,
  content: Buffer,
  filename = 'photo.jpg',
  body: Record<string, unknown> = {},
  headers = org.admin.headers,
) {
  const created = await createAsset(ctx, org, { filename, ...body }, headers);
  assert.ok(created.url, 'a single upload URL');
  const put = await ctx.inject({
    method: 'PUT',
    url: pathOf(created.url!),
    payload: content,
    headers: { 'content-type': 'application/octet-stream' },
  });
  assert.equal(put.statusCode, 200, put.body);
  return created;
}

export function assetWorker(ctx: TestContext): Worker {
  return startWorker({
    db: ctx.deps.db,
    engine: ctx.deps.engine,
    clock: ctx.deps.clock,
    log: ctx.deps.log,
    signal: ctx.deps.jobs,
    handlers: assetJobHandlers(ctx.deps),
    pollMs: 3_600_000,
  });
}
