import { Type } from 'typebox';
import type { Deps } from '../../../deps.ts';
import type { App } from '../../../core/http/app-types.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { principalOf } from '../../../core/http/authenticate.ts';
import { AppError } from '../../../core/http/errors.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../../core/http/responses.ts';
import { loadAssetFor } from '../access.ts';
import { storedRenditions } from '../views/present.ts';
import { signedUrl } from '../upload/signed-urls.ts';
import { PAGE_COMPONENT, pageCountOf } from '../renditions/pages.service.ts';

/**
 * Signed, short-lived rendition URLs for viewers (Tessera's own): an `<img>` cannot send the
 * AccessToken header that `GET /v1/asset/{id}/rendition/{name}` needs, and `POST /v1/asset/expose`
 * wants the Download privilege and permission, which a viewer may lack. View is enough here
 * because a rendition is what the viewer already sees in the API. Expiries are aligned to the hour
 * (valid for one to two hours), so the same URL is handed out for an hour and the browser's cache
 * keeps working across pages and reloads.
 */
const HOUR = 3600;
export const RENDITION_NAMES = ['imageThumb', 'imagePreview', 'imagePreviewLarge', 'mezzaninePreview'] as const;

/**
 * Any rendition name an asset may hold: the four image renditions, and those the media renditions add
 * (`videoProxy`…), so a client asks for what `GET /v1/asset/{id}` lists, and the pages of an analysed PDF as
 * `page-{n}-{size}` (size thumbnail, preview, large or mezzanine; n up to
 * `technicalMetadata.document_metadata.pageCount`), rendered on first request like `GET /v1/asset/{id}/page/{n}`.
 * Never `original`: the original needs the Download permission (`GET /v1/asset/{id}/content`).
 */
const RenditionName = Type.String({
  pattern: '^(?!original$)[A-Za-z][A-Za-z0-9_-]{0,49}$',
  description: `A rendition name: ${RENDITION_NAMES.join(', ')}, another the asset holds (not original), or page-{n}-{size} of a PDF (size thumbnail, preview, large or mezzanine)`,
});

const BodySchema = Type.Object(
  {
    ids: Type.Array(Type.String({ maxLength: 100 }), {
      minItems: 1,
      maxItems: 200,
      description: 'Asset objectIds (or fileIds of versions)',
    }),
    renditions: Type.Optional(
      Type.Array(RenditionName, { minItems: 1, maxItems: 50, uniqueItems: true, description: 'Default: imageThumb' }),
    ),
  },
  { additionalProperties: false },
);

const ResponseSchema = Type.Object({
  expires: Type.Integer({ description: 'When every URL in this answer stops working (epoch ms)' }),
  urls: Type.Record(Type.String(), Type.Record(Type.String(), Type.String()), {
    description:
      'objectId → rendition name → signed URL; assets the caller may not view, or without that rendition yet, are left out',
  }),
});

export async function renditionLinks(
  deps: Deps,
  principal: Principal,
  input: { ids: string[]; renditions?: string[] },
) {
  const names = input.renditions ?? ['imageThumb'];
  const nowSeconds = Math.floor(deps.clock.now() / 1000);
  const expires = (Math.floor(nowSeconds / HOUR) + 2) * HOUR;
  const urls: Record<string, Record<string, string>> = {};
  for (const id of new Set(input.ids)) {
    let asset;
    try {
      asset = (await loadAssetFor(deps.db, principal, id, 'asset.view')).asset;
    } catch (error) {
      if (error instanceof AppError && (error.code === 'not_found' || error.code === 'forbidden')) continue;
      throw error;
    }
    const stored = storedRenditions(asset);
    const links: Record<string, string> = {};
    const pages = pageCountOf(asset);
    for (const name of names) {
      const page = PAGE_COMPONENT.exec(name);
      if (stored[name] || (page && Number(page[1]) <= pages))
        links[name] = signedUrl(deps, 'GET', `/v1/content/${asset.id}/${name}`, expires - nowSeconds).url;
    }
    urls[id] = links;
  }
  return { expires: expires * 1000, urls };
}

export function renditionLinkRoutes(app: App, deps: Deps): void {
  app.post(
    '/asset/rendition-urls',
    {
      // A read sent as POST: an OAuth token with tessera.read reaches it.
      config: { scope: 'read' },
      schema: {
        operationId: 'GetRenditionUrls',
        tags: ['assets'],
        summary:
          'Signed rendition URLs an <img> can load and a browser can cache (View permission; valid one to two hours)',
        body: BodySchema,
        response: { 200: ResponseSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed') },
      },
    },
    async (request) => renditionLinks(deps, principalOf(request), request.body),
  );
}
