import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, reason } from './api.ts';
import { t } from './messages.ts';
import { navigate } from './router.ts';

/**
 * The part of the adaptive-template pages that is in the first load: the route (whose pages are a
 * chunk of their own, fetched when opened), the Upload check and the asset page's action.
 */

/** A template as `POST /v1/template` and `GET /v1/adaptive-templates/{id}` answer it (docs/adaptive-templates.md). */
export interface AdaptiveTemplate {
  templateId: string;
  objectId: string;
  filename: string;
  kind: 'svg' | 'html';
  fields: { name: string; label: string; default: string; maxLength: number; multiline: boolean }[];
  createdEpoch: number;
  lastUpdatedEpoch: number;
  metadataDocument: { template_title: string; description: string };
}

export async function listTemplates(): Promise<AdaptiveTemplate[]> {
  const answer = await api<{ result: AdaptiveTemplate[] }>('POST', '/v1/template', {
    searchTerm: ['*'],
    limit: 100,
    sortBy: [{ metadataDefinitionSearchField: 'template_title', order: 'asc' }],
  });
  return answer.result;
}

export function isSvg(asset: { contentType?: string | null; filename?: string | null }): boolean {
  return (asset.contentType ?? '').split(';')[0]!.trim() === 'image/svg+xml' || /\.svg$/i.test(asset.filename ?? '');
}

const NO_ASSET = '00000000-0000-0000-0000-000000000000';
let uploadCheck: Promise<boolean> | null = null;

/**
 * Whether the caller holds Upload, which registering, deleting and saving take. The API has no
 * "my privileges" read for everyone, so the app asks the registration itself with an asset id that
 * cannot exist: the privilege is checked before anything else (403 without it), and with it the
 * answer is a 400 on `body.assetId` — nothing is created either way. Asked once per page load.
 */
export function mayUpload(): Promise<boolean> {
  uploadCheck ??= api('POST', '/v1/adaptive-templates', { assetId: NO_ASSET }).then(
    () => true,
    (e) => !(e instanceof ApiError && e.status === 403),
  );
  return uploadCheck;
}

/** `/app/templates` and `/app/templates/{id}`: the pages load as their own chunk. */
export function AdaptiveTemplatesRoute({ id }: { id?: string }) {
  const [pages, setPages] = useState<{
    TemplatesPage: ComponentType;
    TemplatePage: ComponentType<{ id: string }>;
  } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    import('./adaptive-templates.tsx').then(setPages, (e) => setError(reason(e)));
  }, []);
  if (error)
    return (
      <div class="page">
        <p class="error" role="alert">
          {t('common.error', { reason: error })}
        </p>
      </div>
    );
  if (!pages)
    return (
      <div class="page">
        <p class="muted" role="status">
          {t('app.loading')}
        </p>
      </div>
    );
  return id ? <pages.TemplatePage id={id} /> : <pages.TemplatesPage />;
}

/**
 * On an SVG asset's page: "Register as adaptive template" (then its form opens), or a link to the
 * template already registered on it. Without Upload the button is disabled and says why.
 */
export function AdaptiveTemplateAction({
  asset,
  disabled,
  onNotice,
}: {
  asset: { objectId: string; contentType?: string; filename?: string };
  disabled: boolean;
  onNotice: (message: string) => void;
}) {
  const svg = isSvg(asset);
  const [existing, setExisting] = useState<AdaptiveTemplate | null | undefined>(undefined);
  const [allowed, setAllowed] = useState<boolean | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (!svg) return;
    let live = true;
    listTemplates().then(
      (list) => live && setExisting(list.find((x) => x.objectId === asset.objectId) ?? null),
      () => live && setExisting(null),
    );
    void mayUpload().then((ok) => live && setAllowed(ok));
    return () => {
      live = false;
    };
  }, [asset.objectId, svg]);
  if (!svg || existing === undefined) return null;
  if (existing)
    return (
      <a
        class="button"
        id="open-adaptive-template"
        href={`/app/templates/${existing.templateId}`}
        onClick={(e) => {
          if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
          e.preventDefault();
          navigate(`/app/templates/${existing.templateId}`);
        }}
      >
        {t('adaptive.openTemplate')}
      </a>
    );
  const refused = allowed === false;
  return (
    <>
      <button
        type="button"
        id="register-adaptive-template"
        disabled={disabled || busy || refused}
        aria-describedby={refused ? 'register-adaptive-refused' : undefined}
        onClick={async () => {
          setBusy(true);
          try {
            const created = await api<AdaptiveTemplate>('POST', '/v1/adaptive-templates', {
              assetId: asset.objectId,
            });
            navigate(`/app/templates/${created.templateId}`);
          } catch (e) {
            onNotice(t('common.error', { reason: reason(e) }));
          } finally {
            setBusy(false);
          }
        }}
      >
        {t('adaptive.fromAsset')}
      </button>
      {refused && (
        <span class="muted small" id="register-adaptive-refused">
          {t('adaptive.mayNotRegister')}
        </span>
      )}
    </>
  );
}
