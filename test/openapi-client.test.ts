import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import openapiTS, { astToString } from 'openapi-typescript';
import { forEachEngine, json } from './helpers/context.ts';

/**
 * Issue 24, "an honest OpenAPI": a typed client generated from /openapi.json (openapi-typescript,
 * as a client author would) and a small program compiled against it. The program leans on what
 * the document must say: required request fields (leaving one out must not compile), raw-byte and
 * multipart bodies, typed response properties of assets, renditions, technical metadata and
 * search results, the transformation operation.
 */
const PROGRAM = `
import type { components, paths } from './tessera-api.ts';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type Body<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { requestBody?: infer R } ? Json<NonNullable<R>> : never;
type Ok<P extends keyof paths, M extends keyof paths[P], S extends number> = paths[P][M] extends { responses: infer R } ? (S extends keyof R ? Json<R[S]> : never) : never;

// Reading an asset as the reference's clients do.
declare const asset: Ok<'/v1/asset/{id}', 'get', 200>;
const width: number | undefined = asset.renditions.width;
const thumb: string | undefined = asset.renditions.imageThumb;
const fpo: string | undefined = asset.renditions.fpo;
const md5: string | undefined = asset.technicalMetadata.tenovos_metadata?.MD5Checksum;
const bits: number | undefined = asset.technicalMetadata.image_metadata?.bitsPerSample;
const firstAttribute: string | undefined = asset.metadata[0]?.metadataDefinitionId;
const state: 'pending' | 'available' | 'none' = asset.contentState;
const schemaAsset: components['schemas']['Asset'] = asset;

// Search results are asset records.
declare const found: Ok<'/v1/search/keyword', 'post', 200>;
const hit: string | undefined = found.result[0]?.objectId;
const hitWidth: number | undefined = found.result[0]?.renditions?.width;

// Required request fields: sharing needs sender, shareUsers and assets.
const share: Body<'/v1/asset/share', 'post'> = { sender: { name: 'Jane' }, shareUsers: [{ email: 'john@example.com' }], assets: ['id'] };
// @ts-expect-error sender is required
const shareWithoutSender: Body<'/v1/asset/share', 'post'> = { shareUsers: [{ email: 'john@example.com' }], assets: ['id'] };
// @ts-expect-error a collection needs its name
const unnamed: Body<'/v1/collection', 'post'> = { collectionType: 'private' };

// Transformations (GetTransformation).
const transform: Body<'/v1/asset/transform', 'post'> = {
  transformations: [{ objectId: 'id', expiration: 3600, source: 'original', includeOriginal: true, transformations: [{ type: 'resize', width: 800 }, { type: 'watermark', text: '(c)' }] }],
  recipients: 'john@example.com',
};
declare const started: Ok<'/v1/asset/transform', 'post', 202>;
const jobId: string = started.jobId;

// The collection share's envelope.
declare const shared: Ok<'/v1/collection/{id}/share', 'post', 202>;
const lambda: [number, string, string] = [shared.StatusCode, shared.ExecutedVersion, shared.Payload];

// Uploads: raw bytes, and the multipart form with its file.
type Upload = paths['/v1/uploads/{uploadId}']['put'] extends { requestBody: { content: { 'application/octet-stream': infer B } } } ? B : never;
const bytes: Upload = 'binary';
type Form = paths['/v1/asset/upload']['post'] extends { requestBody: { content: { 'multipart/form-data': infer B } } } ? B : never;
const form: Form = { file: 'binary', metadataTemplateId: 't', securityTemplateIds: '["s"]' };

export const used = [width, thumb, fpo, md5, bits, firstAttribute, state, schemaAsset, hit, hitWidth, share, shareWithoutSender, unnamed, transform, jobId, lambda, bytes, form];
`;

const dir = mkdtempSync(join(tmpdir(), 'tessera-client-'));
after(() => rmSync(dir, { recursive: true, force: true }));

forEachEngine('OpenAPI: a typed client generated from /openapi.json compiles (issue 24)', (ctx) => {
  it('openapi-typescript generates the client and a program using it type-checks', async () => {
    const doc = json(await ctx().inject({ method: 'GET', url: '/openapi.json' }));
    const types = astToString(await openapiTS(doc));
    const sub = join(dir, ctx().engine);
    rmSync(sub, { recursive: true, force: true });
    spawnSync('mkdir', ['-p', sub]);
    writeFileSync(join(sub, 'tessera-api.ts'), types);
    writeFileSync(join(sub, 'program.ts'), PROGRAM);
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const result = spawnSync(
      process.execPath,
      [
        tsc,
        '--noEmit',
        '--strict',
        '--skipLibCheck',
        '--target',
        'es2022',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--allowImportingTsExtensions',
        join(sub, 'program.ts'),
      ],
      { encoding: 'utf8' },
    );
    assert.equal(result.status, 0, `${result.stdout}${result.stderr}`);
  });
});
