import { Type } from 'typebox';
import type { Deps } from '../../../deps.ts';
import type { App } from '../../../core/http/app-types.ts';
import { principalOf } from '../../../core/http/authenticate.ts';
import { notFound } from '../../../core/http/errors.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../../core/http/responses.ts';
import { loadAssetFor } from '../access.ts';
import { SignedQuery } from '../assets.schemas.ts';
import {
  assetForSignedUrl,
  downloadLink,
  EMBEDDED_COMPONENT,
  expose,
  originalServable,
  publishDownloaded,
  renditionServable,
} from './download.service.ts';
import { embeddedServable } from '../embedded/embed-download.ts';
import { serveBlob } from './serve.ts';
import { assertLinkLive, revokeContentLink } from './content-links.ts';
import { verifySignedPath } from '../upload/signed-urls.ts';
import { PAGE_COMPONENT, PAGE_SIZES, renderPage, type PageSize } from '../renditions/pages.service.ts';
import { exemptPrincipal, exemptUser, rightsGate, serveWatermarked } from '../rights/gate.ts';

const tags = ['assets'];
const Binary = Type.String({
  format: 'binary',
  description: 'The bytes (206 for a range request, 304 when unchanged)',
});
const ErrorRef = Type.Ref('Error', { description: 'Range Not Satisfiable' });

const ExposeSchema = Type.Array(
  Type.Object({
    id: Type.String({ maxLength: 100 }),
    identifier: Type.Optional(Type.Union([Type.Literal('objectId'), Type.Literal('fileId')])),
    components: Type.Array(
      Type.Object({
        componentType: Type.Union([Type.Literal('rendition'), Type.Literal('object')]),
        componentRef: Type.Union([
          Type.String({ maxLength: 100 }),
          Type.Array(Type.String({ maxLength: 100 }), { maxItems: 20 }),
        ]),
        expiration: Type.Optional(
          Type.Integer({ description: 'Seconds the URL stays valid (default 3600, at most 7 days)' }),
        ),
      }),
      { minItems: 1, maxItems: 20 },
    ),
  }),
  { minItems: 1, maxItems: 500 },
);
const ExposeResponse = Type.Array(
  Type.Object({
    id: Type.String(),
    identifier: Type.String(),
    components: Type.Array(
      Type.Object({
        renditionType: Type.String(),
        componentRef: Type.String(),
        expires: Type.Integer({ description: 'epoch ms' }),
        url: Type.String(),
        linkId: Type.String({
          format: 'uuid',
          description: "Tessera's own: this URL's record; DELETE /v1/asset/link/{linkId} ends it at once (410)",
        }),
      }),
    ),
  }),
);

/** Downloads: links, exposed URLs, and the bytes of originals and renditions. */
export function contentRoutes(app: App, deps: Deps): void {
  app.get(
    '/asset/:id/content',
    {
      schema: {
        operationId: 'GetAssetContent',
        tags,
        summary: 'A time-limited download link of the original (Download permission)',
        params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
        querystring: Type.Object({
          embed: Type.Optional(
            Type.Boolean({
              description:
                "Tessera's own: the link serves the original with the asset's current metadata written into it (IPTC and XMP, JPEG/TIFF/PNG); the stored original never changes",
            }),
          ),
        }),
        response: {
          200: Type.Object({
            presignedURL: Type.String({
              description:
                "The signed, time-limited link to the original (the reference's Asset field of download contexts)",
            }),
            linkId: Type.String({
              format: 'uuid',
              description: "Tessera's own: the link's record; DELETE /v1/asset/link/{linkId} ends it at once (410)",
            }),
          }),
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found', 'conflict'),
        },
      },
    },
    async (request) => {
      const { url, linkId } = await downloadLink(
        deps,
        principalOf(request),
        request.params.id,
        request.query.embed === true,
      );
      return { presignedURL: url, linkId };
    },
  );

  app.delete(
    '/asset/link/:linkId',
    {
      schema: {
        operationId: 'RevokeAssetLink',
        tags,
        summary:
          'Revoke one download link or exposed URL: it answers 410 at once. The person it was made for, or someone who may share the asset',
        params: Type.Object({ linkId: Type.String({ format: 'uuid' }) }),
        response: {
          204: Type.Null({ description: 'Revoked' }),
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found'),
        },
      },
    },
    async (request, reply) => {
      await revokeContentLink(deps, principalOf(request), request.params.linkId);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/asset/:id/rendition/:name',
    {
      schema: {
        operationId: 'GetRendition',
        tags,
        summary: "A rendition's bytes (View), with ETag, Last-Modified, Range and Cache-Control",
        params: Type.Object({ id: Type.String({ maxLength: 100 }), name: Type.String({ maxLength: 50 }) }),
        response: {
          200: Binary,
          206: Binary,
          304: Type.Null({ description: 'Not modified' }),
          416: ErrorRef,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'forbidden', 'not_found', 'conflict'),
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const { asset } = await loadAssetFor(deps.db, principal, request.params.id, 'asset.view');
      const item = renditionServable(asset, request.params.name);
      // Out of rights (docs/usage-rights.md): above preview size, refused or watermarked per the organization.
      const verdict = await rightsGate(deps, asset, request.params.name, exemptPrincipal(principal), item.contentType);
      if (verdict !== 'serve') return serveWatermarked(deps, request, reply, item);
      return serveBlob(deps, request, reply, item);
    },
  );

  app.post(
    '/asset/expose',
    {
      // A read sent as POST (the reference's shape): an OAuth token with tessera.read reaches it.
      config: { scope: 'read' },
      schema: {
        operationId: 'GetAssetUrl',
        tags,
        summary: 'Time-limited URLs of renditions and originals (Download privilege and permission)',
        body: ExposeSchema,
        response: {
          200: ExposeResponse,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'conflict'),
        },
      },
    },
    async (request) => expose(deps, principalOf(request), request.body),
  );

  // Signed URLs handed out by the operations above: the signature is the permission.
  app.get(
    '/content/:id/:component',
    {
      config: { public: true },
      schema: {
        operationId: 'GetSignedContent',
        tags,
        summary: 'The bytes behind a time-limited URL (original or rendition)',
        security: [],
        params: Type.Object({ id: Type.String({ format: 'uuid' }), component: Type.String({ maxLength: 50 }) }),
        querystring: Type.Object({
          ...SignedQuery.properties,
          by: Type.Optional(
            Type.String({
              format: 'uuid',
              description: 'The user the link was made for (signed): the actor of asset.downloaded',
            }),
          ),
          share: Type.Optional(
            Type.String({
              format: 'uuid',
              description: 'The asset share the link belongs to (signed): a revoked share ends it (410)',
            }),
          ),
          link: Type.Optional(
            Type.String({
              format: 'uuid',
              description: "The link's own record (signed): DELETE /v1/asset/link/{linkId} ends it (410)",
            }),
          ),
        }),
        response: {
          200: Binary,
          206: Binary,
          304: Type.Null({ description: 'Not modified' }),
          416: ErrorRef,
          ...errorResponses('validation_failed', 'forbidden', 'not_found', 'gone'),
        },
      },
    },
    async (request, reply) => {
      const { id, component } = request.params;
      verifySignedPath(
        deps,
        'GET',
        `/v1/content/${id}/${component}`,
        request.query.expires,
        request.query.signature,
        request.query.by,
        request.query.share,
        request.query.link,
      );
      const asset = await assetForSignedUrl(deps, id, request.query.share);
      if (request.query.link !== undefined) await assertLinkLive(deps, request.query.link, asset, component);
      const ofOriginal = component === 'original' || component === EMBEDDED_COMPONENT;
      const pageOf = PAGE_COMPONENT.exec(component);
      // Out of rights (docs/usage-rights.md): checked when the bytes are served, so links made before obey
      // the current dates and setting; exempt only when the link was made for a user who is exempt now.
      const verdict = await rightsGate(
        deps,
        asset,
        ofOriginal ? 'original' : pageOf ? PAGE_SIZES[pageOf[2] as PageSize] : component,
        () => exemptUser(deps.db, asset.org_id, request.query.by),
        // A page of a document is never watermarked (refused as under block).
        ofOriginal || pageOf ? asset.content_type : renditionServable(asset, component).contentType,
      );
      if (verdict !== 'serve') {
        // The original with its metadata written in is watermarked from the stored original.
        const item = ofOriginal ? originalServable(asset) : renditionServable(asset, component);
        if (ofOriginal && request.method === 'GET') await publishDownloaded(deps, asset, request.query.by ?? null);
        return serveWatermarked(deps, request, reply, item);
      }
      if (component === 'original') {
        if (asset.deleted_at !== null) throw notFound('Content');
        // A download starts when bytes from the first one on are sent (not on a HEAD, a 304, or a later range of a resumed download).
        return serveBlob(deps, request, reply, originalServable(asset), async (range) => {
          if (request.method === 'GET' && (range === null || range.start === 0))
            await publishDownloaded(deps, asset, request.query.by ?? null);
        });
      }
      if (component === EMBEDDED_COMPONENT) {
        return serveBlob(deps, request, reply, await embeddedServable(deps, asset), async (range) => {
          if (request.method === 'GET' && (range === null || range.start === 0))
            await publishDownloaded(deps, asset, request.query.by ?? null);
        });
      }
      // A PDF page preview (page-{n}-{size}, signed by POST /v1/asset/rendition-urls), rendered on first request.
      const page = PAGE_COMPONENT.exec(component);
      if (page)
        return serveBlob(deps, request, reply, await renderPage(deps, asset, Number(page[1]), page[2] as PageSize));
      return serveBlob(deps, request, reply, renditionServable(asset, component));
    },
  );
}
