import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, ApiError, reason } from './api.ts';
import { History, Relations, Technical, Versions, type LegacyAsset } from './asset-tabs.tsx';
import { dateTime } from './format.ts';
import { IMAGE_RENDITIONS, Preview, renditionNames } from './media-preview.tsx';
import { Field, problemsByField, type Problems } from './metadata-fields.tsx';
import { t } from './messages.ts';
import { AssetCdnPublish } from './cdn-publish.tsx';
import { AdaptiveTemplateAction } from './adaptive-template-action.tsx';
import { linkClick, navigate } from './router.ts';
import {
  attributesOf,
  metadataTemplates,
  vocabularies,
  type Attribute,
  type Template,
  type Vocabulary,
} from './templates.ts';
import type { UploadQueue } from './upload.ts';

interface SimpleAsset {
  metadata: { name: string; value: unknown }[];
  metadataTemplate?: { id: string; name: string };
}

const TABS = ['metadata', 'versions', 'relations', 'technical', 'history'] as const;
type Tab = (typeof TABS)[number];

/** One asset: preview, the template's metadata form, versions, relationships, technical metadata, history, downloads, share. */
export function AssetPage({ id, uploads, onChanged }: { id: string; uploads: UploadQueue; onChanged: () => void }) {
  const [asset, setAsset] = useState<LegacyAsset | null>(null);
  const [simple, setSimple] = useState<SimpleAsset | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [urls, setUrls] = useState<Record<string, string>>({});
  const [tab, setTab] = useState<Tab>('metadata');
  const [notice, setNotice] = useState<string | null>(null);
  const [reload, setReload] = useState(0);
  const [dropping, setDropping] = useState(false);

  useEffect(() => {
    let cancelled = false;
    setError(null);
    (async () => {
      try {
        const [legacy, modern] = await Promise.all([
          api<LegacyAsset>('GET', `/v1/asset/${encodeURIComponent(id)}`),
          api<{ data: SimpleAsset }>('GET', `/v1/assets/asset/${encodeURIComponent(id)}`),
        ]);
        if (cancelled) return;
        setAsset(legacy);
        setSimple(modern.data);
        const links = await signedUrlsOf(legacy);
        if (!cancelled) setUrls(links);
      } catch (e) {
        if (!cancelled) setError(e instanceof ApiError && e.status === 404 ? t('asset.notFound') : reason(e));
      }
    })();
    return () => {
      cancelled = true;
    };
  }, [id, reload]);

  // While the asset is analysed (its bytes on their way, renditions pending), the page looks again, less
  // often as time goes on, and shows the preview, page viewer or player as soon as they exist. Only the
  // asset and its rendition URLs are renewed: a metadata form being edited keeps what was typed.
  const analysing = asset !== null && (asset.renditionsState === 'pending' || asset.contentState === 'pending');
  useEffect(() => {
    if (!analysing || !asset) return;
    let stopped = false;
    let delay = 1000;
    let timer: ReturnType<typeof setTimeout>;
    const look = async () => {
      try {
        const fresh = await api<LegacyAsset>('GET', `/v1/asset/${encodeURIComponent(asset.objectId)}`);
        if (stopped) return;
        if (fresh.renditionsState !== asset.renditionsState || fresh.contentState !== asset.contentState) {
          const links = await signedUrlsOf(fresh);
          if (stopped) return;
          setUrls(links);
          setAsset(fresh);
          return;
        }
      } catch {
        // A failed look is tried again, later.
      }
      delay = Math.min(Math.round(delay * 1.5), 10_000);
      timer = setTimeout(() => void look(), delay);
    };
    timer = setTimeout(() => void look(), delay);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [asset?.objectId, asset?.renditionsState, asset?.contentState]);

  // A new version uploaded from this page (dropped, or a restored one): the page follows it once stored.
  useEffect(() => {
    if (!asset) return;
    const pending = new Set<number>();
    return uploads.subscribe(() => {
      for (const item of uploads.items) {
        if (item.versionOf !== asset.originalFileId && item.versionOf !== asset.fileId) continue;
        if (item.state !== 'done') pending.add(item.id);
        else if (pending.delete(item.id) && item.objectId) {
          onChanged();
          navigate(`/app/asset/${item.objectId}`);
          setNotice(t('asset.versionStored'));
        }
      }
    });
  }, [asset?.objectId]);

  // A file dropped on the page becomes a new version of this asset.
  const onDrop = (event: DragEvent) => {
    const file = event.dataTransfer?.files?.[0];
    if (!file || !asset) return;
    event.preventDefault();
    setDropping(false);
    uploads.add([{ file, path: file.name }], asset.originalFileId);
    setNotice(t('upload.dropVersion', { name: asset.filename ?? asset.objectId }));
  };

  if (error)
    return (
      <div class="page">
        <BackLink />
        <p class="error" role="alert">
          {error}
        </p>
      </div>
    );
  if (!asset || !simple)
    return (
      <div class="page">
        <p class="muted" role="status">
          {t('app.loading')}
        </p>
      </div>
    );
  const name = asset.filename ?? asset.objectId;
  const deleted =
    Boolean(asset.metadataDeletedEpoch) || asset.fileState === 'deleted' || asset.fileState === 'recycle bin';
  const changed = () => {
    setReload((n) => n + 1);
    onChanged();
  };

  return (
    <div class="page asset-page">
      <BackLink />
      <h1 class="asset-title">{name}</h1>
      {deleted && (
        <p class="error" role="status">
          {t('asset.inRecycleBin', { date: dateTime(asset.metadataDeletedEpoch) })}
        </p>
      )}
      {asset.currentVersion === 'N' && <OlderVersion asset={asset} />}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <div class="asset-layout">
        <section
          class={`preview${dropping ? ' dropping' : ''}`}
          aria-label={t('asset.preview', { name })}
          onDragOver={(e) => {
            if ([...(e.dataTransfer?.types ?? [])].includes('Files')) {
              e.preventDefault();
              setDropping(true);
            }
          }}
          onDragLeave={() => setDropping(false)}
          onDrop={onDrop}
        >
          <Preview
            objectId={asset.objectId}
            name={name}
            contentType={asset.contentType}
            urls={urls}
            pageCount={pageCountOf(asset)}
            renditionsState={asset.renditionsState}
            renditionError={
              typeof asset.technicalMetadata?.renditionError === 'string'
                ? asset.technicalMetadata.renditionError
                : undefined
            }
          />
          <p class="muted small">{t('asset.dropVersion')}</p>
        </section>
        <section class="details" aria-label={t('asset.tabs')}>
          <Actions asset={asset} deleted={deleted} urls={urls} onNotice={setNotice} onChanged={changed} />
          <div role="tablist" aria-label={t('asset.tabs')} class="tabs">
            {TABS.map((key) => (
              <button
                type="button"
                role="tab"
                id={`tab-${key}`}
                key={key}
                aria-selected={tab === key}
                aria-controls={`panel-${key}`}
                tabIndex={tab === key ? 0 : -1}
                onClick={() => setTab(key)}
                onKeyDown={(e) => {
                  const i = TABS.indexOf(key);
                  let next: Tab | undefined;
                  if (e.key === 'ArrowRight' || e.key === 'ArrowLeft')
                    next = TABS[(i + (e.key === 'ArrowRight' ? 1 : TABS.length - 1)) % TABS.length];
                  if (e.key === 'Home') next = TABS[0];
                  if (e.key === 'End') next = TABS[TABS.length - 1];
                  if (next) {
                    e.preventDefault();
                    setTab(next);
                    document.getElementById(`tab-${next}`)?.focus();
                  }
                }}
              >
                {t(`asset.tab.${key}` as 'asset.tab.metadata')}
              </button>
            ))}
          </div>
          <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} class="tabpanel">
            {tab === 'metadata' && <MetadataForm asset={asset} simple={simple} onSaved={changed} />}
            {tab === 'versions' && <Versions asset={asset} uploads={uploads} />}
            {tab === 'relations' && <Relations asset={asset} />}
            {tab === 'technical' && <Technical asset={asset} />}
            {tab === 'history' && <History asset={asset} />}
          </div>
        </section>
      </div>
    </div>
  );
}

/** Every rendition the asset holds (the image sizes, and media renditions once they exist), as signed URLs. */
async function signedUrlsOf(asset: LegacyAsset): Promise<Record<string, string>> {
  const names = [...new Set([...IMAGE_RENDITIONS, ...renditionNames(asset.renditions)])].slice(0, 50);
  const links = await api<{ urls: Record<string, Record<string, string>> }>('POST', '/v1/asset/rendition-urls', {
    ids: [asset.objectId],
    renditions: names,
  });
  return links.urls[asset.objectId] ?? {};
}

/** The page count of an analysed PDF (technicalMetadata.document_metadata.pageCount). */
function pageCountOf(asset: LegacyAsset): number | undefined {
  const doc = asset.technicalMetadata?.document_metadata as { pageCount?: unknown } | undefined;
  return typeof doc?.pageCount === 'number' ? doc.pageCount : undefined;
}

function BackLink() {
  return (
    <a class="back" href="/app/" onClick={(e) => linkClick(e, '/app/')}>
      ← {t('asset.back')}
    </a>
  );
}

/** An older version is shown: a link to the current one. */
function OlderVersion({ asset }: { asset: LegacyAsset }) {
  const [latest, setLatest] = useState<LegacyAsset | null>(null);
  useEffect(() => {
    void api<LegacyAsset>('GET', `/v1/asset/${asset.objectId}/latest`).then(setLatest, () => undefined);
  }, [asset.objectId]);
  return (
    <p class="notice" role="status">
      {t('asset.olderVersion', { n: asset.versionNumber })}{' '}
      {latest && (
        <a href={`/app/asset/${latest.objectId}`} onClick={(e) => linkClick(e, `/app/asset/${latest.objectId}`)}>
          {t('asset.toCurrent', { n: latest.versionNumber })}
        </a>
      )}
    </p>
  );
}

const RENDITION_LABELS: Record<string, string> = {
  imageThumb: 'rendition.imageThumb',
  imagePreview: 'rendition.imagePreview',
  imagePreviewLarge: 'rendition.imagePreviewLarge',
  mezzaninePreview: 'rendition.mezzaninePreview',
  videoProxy: 'rendition.videoProxy',
  audioProxy: 'rendition.audioProxy',
  fpo: 'rendition.fpo',
};

function Actions({
  asset,
  deleted,
  urls,
  onNotice,
  onChanged,
}: {
  asset: LegacyAsset;
  deleted: boolean;
  urls: Record<string, string>;
  onNotice: (m: string) => void;
  onChanged: () => void;
}) {
  const [sharing, setSharing] = useState(false);
  const [emails, setEmails] = useState('');
  const [message, setMessage] = useState('');
  const [days, setDays] = useState(7);
  const [exposing, setExposing] = useState(false);
  const [exposed, setExposed] = useState<{ url: string; expires: number } | null>(null);
  const [shareProblem, setShareProblem] = useState<string | null>(null);
  const run = async (work: () => Promise<unknown>) => {
    try {
      const result = await work();
      if (typeof result === 'string') onNotice(result);
    } catch (e) {
      onNotice(t('common.error', { reason: reason(e) }));
    }
  };
  const renditions = Object.keys(urls);
  return (
    <div class="asset-actions">
      <div class="row">
        <button
          type="button"
          class="primary"
          disabled={deleted}
          onClick={() =>
            run(async () => {
              const { presignedURL } = await api<{ presignedURL: string }>(
                'GET',
                `/v1/asset/${asset.objectId}/content`,
              );
              location.assign(presignedURL);
            })
          }
        >
          {t('asset.download')}
        </button>
        <button
          type="button"
          disabled={deleted}
          onClick={() => setSharing(!sharing)}
          aria-expanded={sharing}
          aria-controls="share-form"
        >
          {t('asset.share')}
        </button>
        <button
          type="button"
          disabled={deleted}
          onClick={() => setExposing(!exposing)}
          aria-expanded={exposing}
          aria-controls="expose-form"
        >
          {t('asset.expose')}
        </button>
        <AssetCdnPublish target={{ objectId: asset.objectId, filename: asset.filename }} disabled={deleted} />
        <AdaptiveTemplateAction asset={asset} disabled={deleted} onNotice={onNotice} />
        {deleted ? (
          <button
            type="button"
            onClick={() =>
              run(async () => {
                await api('POST', `/v1/asset/${asset.objectId}/delete`, { action: 'undelete' });
                onChanged();
                return t('asset.restored');
              })
            }
          >
            {t('asset.restore')}
          </button>
        ) : (
          <button
            type="button"
            class="danger"
            onClick={() =>
              run(async () => {
                await api('POST', `/v1/asset/${asset.objectId}/delete`, { action: 'delete' });
                onChanged();
                return t('asset.deleted');
              })
            }
          >
            {t('asset.delete')}
          </button>
        )}
      </div>
      {renditions.length > 0 && (
        <details class="downloads">
          <summary>{t('asset.renditions', { count: renditions.length })}</summary>
          <ul>
            {renditions.map((r) => (
              <li key={r}>
                <a href={urls[r]} download={`${r}-${asset.filename ?? asset.objectId}`}>
                  {RENDITION_LABELS[r]
                    ? t(RENDITION_LABELS[r] as 'rendition.imageThumb')
                    : t('asset.downloadRendition', { name: r })}
                </a>
              </li>
            ))}
          </ul>
        </details>
      )}
      {exposing && (
        <form
          id="expose-form"
          class="row share"
          onSubmit={(e) => {
            e.preventDefault();
            void run(async () => {
              const answer = await api<{ components: { url: string; expires: number }[] }[]>(
                'POST',
                '/v1/asset/expose',
                [
                  {
                    id: asset.objectId,
                    components: [{ componentType: 'object', componentRef: 'original', expiration: days * 86400 }],
                  },
                ],
              );
              const link = answer[0]?.components[0];
              if (link) setExposed(link);
            });
          }}
        >
          <label for="expose-days">{t('asset.exposeDays')}</label>
          <input
            id="expose-days"
            type="number"
            min={1}
            max={365}
            value={days}
            onInput={(e) => setDays(Math.max(1, Math.min(365, Number((e.target as HTMLInputElement).value) || 1)))}
          />
          <button type="submit">{t('asset.exposeCreate')}</button>
        </form>
      )}
      {exposed && (
        <p class="exposed">
          <label for="exposed-url">{t('asset.exposed', { date: dateTime(exposed.expires) })}</label>{' '}
          <input
            id="exposed-url"
            readOnly
            value={exposed.url}
            onFocus={(e) => (e.target as HTMLInputElement).select()}
          />
        </p>
      )}
      {sharing && (
        <form
          id="share-form"
          class="share"
          onSubmit={(e) => {
            e.preventDefault();
            const shareUsers = emails
              .split(/[,;\s]+/)
              .map((s) => s.trim())
              .filter(Boolean)
              .map((email) => ({ email }));
            if (shareUsers.length === 0) {
              setShareProblem(t('asset.shareNone'));
              return;
            }
            void (async () => {
              try {
                const answer = await api<{ message?: string }>('POST', '/v1/asset/share', {
                  sender: { name: 'Tessera' },
                  shareUsers,
                  assets: [asset.objectId],
                  ...(message ? { shareMessage: message } : {}),
                });
                setSharing(false);
                setShareProblem(null);
                onNotice(answer.message ?? t('asset.shared'));
              } catch (err) {
                setShareProblem(
                  err instanceof ApiError && err.details.length > 0
                    ? err.details.map((d) => d.message).join('; ')
                    : reason(err),
                );
              }
            })();
          }}
        >
          <div class="field">
            <label for="share-emails">{t('asset.shareTo')}</label>
            <input
              id="share-emails"
              type="text"
              inputMode="email"
              autocomplete="email"
              value={emails}
              aria-invalid={shareProblem ? 'true' : undefined}
              aria-describedby={shareProblem ? 'share-error' : undefined}
              onInput={(e) => setEmails((e.target as HTMLInputElement).value)}
            />
            {shareProblem && (
              <span class="field-error" id="share-error">
                {shareProblem}
              </span>
            )}
          </div>
          <div class="field">
            <label for="share-message">{t('asset.shareMessage')}</label>
            <textarea
              id="share-message"
              value={message}
              onInput={(e) => setMessage((e.target as HTMLTextAreaElement).value)}
            />
          </div>
          <button type="submit">{t('asset.shareSend')}</button>
        </form>
      )}
    </div>
  );
}

type Values = Record<string, unknown>;

/** The form generated from the asset's metadata template; the API's validation errors appear on their fields. */
function MetadataForm({ asset, simple, onSaved }: { asset: LegacyAsset; simple: SimpleAsset; onSaved: () => void }) {
  const [template, setTemplate] = useState<Template | undefined>();
  const [loaded, setLoaded] = useState(false);
  const [vocabs, setVocabs] = useState<Map<string, Vocabulary>>(new Map());
  const initial = useMemo(() => Object.fromEntries(simple.metadata.map((m) => [m.name, m.value])), [simple]);
  const [values, setValues] = useState<Values>(initial);
  const [problems, setProblems] = useState<Problems>({});
  const [status, setStatus] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  useEffect(() => setValues(initial), [initial]);
  useEffect(() => {
    void Promise.all([metadataTemplates(), vocabularies()]).then(([list, v]) => {
      setVocabs(v);
      setTemplate(list.find((x) => x.templateId === (simple.metadataTemplate?.id ?? asset.metadataTemplateId)));
      setLoaded(true);
    });
  }, [asset.metadataTemplateId]);
  const groups = (template?.metadataGroups ?? [])
    .map((g) => ({ ...g, metadataAttributes: g.metadataAttributes.filter((a) => a.visible !== false) }))
    .filter((g) => g.metadataAttributes.length > 0);

  const save = async (event: Event) => {
    event.preventDefault();
    const editable = attributesOf(template).filter((a) => a.visible !== false && !a.readonly);
    const metadata = editable.map((a) => ({ name: a.name, value: cleaned(a, values[a.name]) }));
    setSaving(true);
    setStatus(null);
    try {
      await api('PATCH', `/v1/assets/asset/${asset.objectId}`, { metadata });
      setProblems({});
      setStatus(t('asset.saved'));
      onSaved();
    } catch (e) {
      if (e instanceof ApiError && e.details.length > 0) {
        setProblems(problemsByField(e.details, editable));
        setStatus(t('asset.invalid'));
      } else setStatus(t('common.error', { reason: reason(e) }));
    } finally {
      setSaving(false);
    }
  };

  if (!loaded) return <p class="muted">{t('app.loading')}</p>;
  if (!template) return <p class="muted">{t('asset.noTemplate')}</p>;
  const invalid = Object.keys(problems).length > 0;
  return (
    <form class="metadata-form" onSubmit={save} noValidate>
      <p class="muted">
        {t('asset.template')}: {template.templateName}
      </p>
      {status && (
        <p class={invalid ? 'error' : 'notice'} role={invalid ? 'alert' : 'status'}>
          {status}
        </p>
      )}
      {groups.map((g) => (
        <fieldset key={g.metadataGroupId} class="group">
          <legend>{g.metadataGroupName}</legend>
          {g.metadataAttributes.map((a) => (
            <Field
              key={a.id}
              attribute={a}
              value={values[a.name]}
              vocabs={vocabs}
              problems={problems}
              onChange={(v) => setValues((old) => ({ ...old, [a.name]: v }))}
            />
          ))}
        </fieldset>
      ))}
      <div class="form-actions">
        <button type="submit" class="primary" disabled={saving}>
          {t('asset.save')}
        </button>
        <button
          type="button"
          disabled={saving}
          onClick={() => {
            setValues(initial);
            setProblems({});
            setStatus(null);
          }}
        >
          {t('asset.revert')}
        </button>
      </div>
    </form>
  );
}

/** What is sent for an attribute: empty as null, tables without their empty rows. */
function cleaned(a: Attribute, value: unknown): unknown {
  if (a.type === 'table' && Array.isArray(value)) value = value.filter((row) => !Array.isArray(row) || row.length > 0);
  if (value === '' || value === undefined || (Array.isArray(value) && value.length === 0)) return null;
  return value;
}
