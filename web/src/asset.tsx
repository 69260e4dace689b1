import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, ApiError, reason, type FieldProblem } from './api.ts';
import { dateTime, extension, fileSize } from './format.ts';
import { t } from './messages.ts';
import { linkClick } from './router.ts';
import { attributesOf, metadataTemplates, vocabularies, type Attribute, type Template, type Vocabulary } from './templates.ts';
import type { UploadQueue } from './upload.ts';

interface LegacyAsset {
  objectId: string;
  fileId: string;
  originalFileId: string;
  filename?: string;
  versionNumber: number;
  createdEpoch: number;
  lastUpdatedEpoch: number;
  contentType?: string;
  fileSizeInBytes?: number;
  renditionsState?: string | null;
  metadataTemplateId?: string;
  technicalMetadata?: Record<string, unknown>;
  fileState?: string;
  metadataDeletedEpoch?: number | null;
}

interface SimpleAsset {
  metadata: { name: string; value: unknown }[];
  metadataTemplate?: { id: string; name: string };
}

const RENDITIONS = ['imageThumb', 'imagePreview', 'imagePreviewLarge', 'mezzaninePreview'] as const;

/** One asset: preview with zoom, the template's metadata form, versions, relationships, technical metadata, downloads, share. */
export function AssetPage({ id, uploads, onChanged }: { id: string; uploads: UploadQueue; onChanged: () => void }) {
  const [asset, setAsset] = useState<LegacyAsset | null>(null);
  const [simple, setSimple] = useState<SimpleAsset | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [urls, setUrls] = useState<Record<string, string>>({});
  const [tab, setTab] = useState<'metadata' | 'versions' | 'relations' | 'technical'>('metadata');
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
        const links = await api<{ urls: Record<string, Record<string, string>> }>('POST', '/v1/asset/rendition-urls', { ids: [legacy.objectId], renditions: [...RENDITIONS] });
        if (!cancelled) setUrls(links.urls[legacy.objectId] ?? {});
      } catch (e) {
        if (!cancelled) setError(e instanceof ApiError && e.status === 404 ? t('asset.notFound') : reason(e));
      }
    })();
    return () => {
      cancelled = true;
    };
  }, [id, reload]);

  // A file dropped on the page becomes a new version of this asset.
  const onDrop = (event: DragEvent) => {
    const file = event.dataTransfer?.files?.[0];
    if (!file || !asset) return;
    event.preventDefault();
    setDropping(false);
    uploads.add([{ file, path: file.name }], asset.fileId);
    setNotice(t('upload.dropVersion', { name: asset.filename ?? asset.objectId }));
  };

  if (error) return <div class="page"><BackLink /><p class="error" role="alert">{error}</p></div>;
  if (!asset || !simple) return <div class="page"><p class="muted" role="status">{t('app.loading')}</p></div>;
  const name = asset.filename ?? asset.objectId;
  const deleted = Boolean(asset.metadataDeletedEpoch) || asset.fileState === 'deleted';

  return (
    <div class="page asset-page">
      <BackLink />
      <h1 class="asset-title">{name}</h1>
      {notice && <p class="notice" role="status">{notice}</p>}
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
          <Preview name={name} large={urls.imagePreviewLarge ?? urls.imagePreview} full={urls.mezzaninePreview} />
          <p class="muted small">{t('asset.dropVersion')}</p>
        </section>
        <section class="details">
          <Actions asset={asset} deleted={deleted} urls={urls} onNotice={setNotice} onChanged={() => {
            setReload((n) => n + 1);
            onChanged();
          }} />
          <div role="tablist" aria-label={t('asset.tabs')} class="tabs">
            {(['metadata', 'versions', 'relations', 'technical'] as const).map((key) => (
              <button type="button" role="tab" id={`tab-${key}`} key={key} aria-selected={tab === key} aria-controls={`panel-${key}`} tabIndex={tab === key ? 0 : -1}
                onClick={() => setTab(key)}
                onKeyDown={(e) => {
                  const order = ['metadata', 'versions', 'relations', 'technical'] as const;
                  const i = order.indexOf(key);
                  if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
                    const next = order[(i + (e.key === 'ArrowRight' ? 1 : order.length - 1)) % order.length]!;
                    setTab(next);
                    document.getElementById(`tab-${next}`)?.focus();
                  }
                }}>
                {t(`asset.tab.${key}` as 'asset.tab.metadata')}
              </button>
            ))}
          </div>
          <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} class="tabpanel">
            {tab === 'metadata' && <MetadataForm asset={asset} simple={simple} onSaved={() => {
              setReload((n) => n + 1);
              onChanged();
            }} />}
            {tab === 'versions' && <Versions asset={asset} />}
            {tab === 'relations' && <Relations asset={asset} />}
            {tab === 'technical' && <Technical asset={asset} />}
          </div>
        </section>
      </div>
    </div>
  );
}

function BackLink() {
  return <a class="back" href="/app/" onClick={(e) => linkClick(e, '/app/')}>← {t('asset.back')}</a>;
}

function Preview({ name, large, full }: { name: string; large?: string; full?: string }) {
  const [zoom, setZoom] = useState(1);
  if (!large) return <div class="preview-box"><span class="filetype">{extension(name) || t('asset.noPreview')}</span></div>;
  return (
    <div>
      <div class={`preview-box${zoom > 1 ? ' zoomed' : ''}`} tabIndex={zoom > 1 ? 0 : -1}>
        {/* biome-ignore lint/a11y/useKeyWithClickEvents: a mouse shortcut; the Zoom buttons below are the keyboard way */}
        <img src={zoom > 1 && full ? full : large} alt={t('asset.preview', { name })} style={zoom > 1 ? `width:${zoom * 100}%;max-width:none;max-height:none` : undefined} onClick={() => setZoom(zoom > 1 ? 1 : 2)} />
      </div>
      <div class="row zoom">
        <button type="button" onClick={() => setZoom(Math.min(8, zoom * 2))}>{t('asset.zoomIn')}</button>
        <button type="button" disabled={zoom <= 1} onClick={() => setZoom(Math.max(1, zoom / 2))}>{t('asset.zoomOut')}</button>
        <button type="button" disabled={zoom === 1} onClick={() => setZoom(1)}>{t('asset.zoomReset')}</button>
        <span class="muted">{Math.round(zoom * 100)}%</span>
      </div>
    </div>
  );
}

function Actions({ asset, deleted, urls, onNotice, onChanged }: { asset: LegacyAsset; deleted: boolean; urls: Record<string, string>; onNotice: (m: string) => void; onChanged: () => void }) {
  const [sharing, setSharing] = useState(false);
  const [emails, setEmails] = useState('');
  const [exposed, setExposed] = useState<{ url: string; expires: number } | null>(null);
  const run = async (work: () => Promise<unknown>) => {
    try {
      const message = await work();
      if (typeof message === 'string') onNotice(message);
    } catch (e) {
      onNotice(t('common.error', { reason: reason(e) }));
    }
  };
  return (
    <div class="asset-actions">
      <div class="row">
        <button type="button" class="primary" onClick={() => run(async () => {
          const { presignedURL } = await api<{ presignedURL: string }>('GET', `/v1/asset/${asset.objectId}/content`);
          location.assign(presignedURL);
        })}>{t('asset.download')}</button>
        <button type="button" onClick={() => setSharing(!sharing)} aria-expanded={sharing}>{t('asset.share')}</button>
        <button type="button" onClick={() => run(async () => {
          const answer = await api<{ components: { url: string; expires: number }[] }[]>('POST', '/v1/asset/expose', [{ id: asset.objectId, components: [{ componentType: 'object', componentRef: 'original', expiration: 7 * 86400 }] }]);
          const link = answer[0]?.components[0];
          if (link) setExposed(link);
        })}>{t('asset.expose')}</button>
        {deleted
          ? <button type="button" onClick={() => run(async () => {
            await api('POST', `/v1/asset/${asset.objectId}/delete`, { action: 'undelete' });
            onChanged();
            return t('asset.restored');
          })}>{t('asset.restore')}</button>
          : <button type="button" class="danger" onClick={() => run(async () => {
            await api('POST', `/v1/asset/${asset.objectId}/delete`, { action: 'delete' });
            onChanged();
            return t('asset.deleted');
          })}>{t('asset.delete')}</button>}
      </div>
      <ul class="downloads">
        {RENDITIONS.filter((r) => urls[r]).map((r) => <li key={r}><a href={urls[r]} download={`${r}-${asset.filename ?? asset.objectId}`}>{t('asset.downloadRendition', { name: r })}</a></li>)}
      </ul>
      {exposed && <p class="exposed">{t('asset.exposed', { date: dateTime(exposed.expires) })} <input readOnly value={exposed.url} aria-label={t('asset.expose')} onFocus={(e) => (e.target as HTMLInputElement).select()} /></p>}
      {sharing && (
        <form class="row share" onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            const shareUsers = emails.split(',').map((s) => s.trim()).filter(Boolean).map((email) => ({ email }));
            const answer = await api<{ message?: string }>('POST', '/v1/asset/share', { sender: { name: 'Tessera' }, shareUsers, assets: [asset.objectId] });
            setSharing(false);
            return answer.message ?? t('asset.shared');
          });
        }}>
          <label for="share-emails">{t('asset.shareTo')}</label>
          <input id="share-emails" type="text" inputMode="email" value={emails} onInput={(e) => setEmails((e.target as HTMLInputElement).value)} />
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
  const [vocabs, setVocabs] = useState<Map<string, Vocabulary>>(new Map());
  const initial = useMemo(() => Object.fromEntries(simple.metadata.map((m) => [m.name, m.value])), [simple]);
  const [values, setValues] = useState<Values>(initial);
  const [problems, setProblems] = useState<Record<string, string>>({});
  const [status, setStatus] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  useEffect(() => setValues(initial), [initial]);
  useEffect(() => {
    void metadataTemplates().then((list) => setTemplate(list.find((x) => x.templateId === (simple.metadataTemplate?.id ?? asset.metadataTemplateId))));
    void vocabularies().then(setVocabs);
  }, [asset.metadataTemplateId]);
  const attributes = attributesOf(template).filter((a) => a.visible !== false);

  const save = async (event: Event) => {
    event.preventDefault();
    const editable = attributes.filter((a) => !a.readonly);
    const metadata = editable.map((a) => ({ name: a.name, value: emptyToNull(values[a.name]) }));
    setSaving(true);
    setStatus(null);
    try {
      await api('PATCH', `/v1/assets/asset/${asset.objectId}`, { metadata });
      setProblems({});
      setStatus(t('asset.saved'));
      onSaved();
    } catch (e) {
      if (e instanceof ApiError && e.details.length > 0) {
        setProblems(problemsByName(e.details, editable));
        setStatus(t('asset.invalid'));
      } else setStatus(t('common.error', { reason: reason(e) }));
    } finally {
      setSaving(false);
    }
  };

  if (!template) return <p class="muted">{t('app.loading')}</p>;
  return (
    <form class="metadata-form" onSubmit={save} noValidate>
      <p class="muted">{t('asset.template')}: {template.templateName}</p>
      {status && <p class={Object.keys(problems).length ? 'error' : 'notice'} role={Object.keys(problems).length ? 'alert' : 'status'}>{status}</p>}
      {attributes.map((a) => (
        <Field key={a.id} attribute={a} value={values[a.name]} vocab={a.controlledVocabularyId ? vocabs.get(a.controlledVocabularyId) : undefined} problem={problems[a.name]}
          onChange={(v) => setValues({ ...values, [a.name]: v })} />
      ))}
      <button type="submit" class="primary" disabled={saving}>{t('asset.save')}</button>
    </form>
  );
}

function emptyToNull(value: unknown): unknown {
  if (value === '' || value === undefined || (Array.isArray(value) && value.length === 0)) return null;
  return value;
}

/** `body.metadata[3].value…` names the 4th attribute sent. */
export function problemsByName(details: FieldProblem[], sent: Attribute[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of details) {
    const m = /metadata[.[](\d+)/.exec(d.field);
    const attribute = m ? sent[Number(m[1])] : undefined;
    const key = attribute?.name ?? '';
    out[key] = out[key] ? `${out[key]}; ${d.message}` : d.message;
  }
  return out;
}

function Field({ attribute: a, value, vocab, problem, onChange }: { attribute: Attribute; value: unknown; vocab?: Vocabulary; problem?: string; onChange: (v: unknown) => void }) {
  const id = `field-${a.id}`;
  const errorId = `${id}-error`;
  const common = { id, 'aria-invalid': problem ? 'true' as const : undefined, 'aria-describedby': problem ? errorId : undefined, disabled: a.readonly, required: a.required };
  let control;
  if (a.type === 'date') {
    const iso = typeof value === 'string' ? toIsoDate(value) : '';
    control = <input type="text" inputMode="numeric" placeholder={a.dateFormat && a.dateFormat !== 'N/A' ? a.dateFormat : 'yyyy-MM-dd'} {...common} value={typeof value === 'string' ? value : iso} onInput={(e) => onChange((e.target as HTMLInputElement).value)} />;
  } else if (a.type === 'controlledVocabulary' && vocab) {
    control = <VocabularyControl attribute={a} vocab={vocab} value={value} common={common} onChange={onChange} />;
  } else if (a.type === 'text' || a.type === 'controlledVocabulary') {
    const text = value === null || value === undefined ? '' : Array.isArray(value) ? value.join(', ') : String(value);
    control = a.isMultiLine || a.subType === 'textArea'
      ? <textarea {...common} value={text} onInput={(e) => onChange((e.target as HTMLTextAreaElement).value)} />
      : <input type="text" {...common} value={text} maxLength={a.length} onInput={(e) => onChange((e.target as HTMLInputElement).value)} />;
  } else {
    // Cascades and tables: their JSON value (name-based encoding), edited as text.
    control = <JsonControl common={common} value={value} onChange={onChange} />;
  }
  return (
    <div class="field" data-field={a.name}>
      <label for={id}>{a.name}{a.required ? <span class="muted"> ({t('common.required')})</span> : null}</label>
      {control}
      {problem && <span class="field-error" id={errorId}>{problem}</span>}
    </div>
  );
}

function toIsoDate(value: string): string {
  return /^\d{4}-\d{2}-\d{2}/.test(value) ? value.slice(0, 10) : value;
}

function VocabularyControl({ attribute: a, vocab, value, common, onChange }: { attribute: Attribute; vocab: Vocabulary; value: unknown; common: Record<string, unknown>; onChange: (v: unknown) => void }) {
  const [filter, setFilter] = useState('');
  const names = vocab.values.map((v) => v.valueName);
  if (!a.isMultipleSelect) {
    return (
      <select {...common} value={typeof value === 'string' ? value : ''} onChange={(e) => onChange((e.target as HTMLSelectElement).value || null)}>
        <option value="">—</option>
        {names.map((n) => <option key={n} value={n}>{n}</option>)}
      </select>
    );
  }
  const chosen = new Set(Array.isArray(value) ? value.map(String) : value ? [String(value)] : []);
  const shown = names.filter((n) => n.toLowerCase().includes(filter.toLowerCase()));
  return (
    // biome-ignore lint/a11y/useSemanticElements: a labelled group inside the field's own label and error wiring
    <div class="vocab" id={String(common.id)} role="group" aria-describedby={common['aria-describedby'] as string | undefined}>
      <input type="search" aria-label={t('asset.searchValues', { name: a.name })} value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
      <ul>
        {shown.map((n) => (
          <li key={n}><label><input type="checkbox" checked={chosen.has(n)} disabled={Boolean(common.disabled)} onChange={() => {
            const next = new Set(chosen);
            if (next.has(n)) next.delete(n);
            else next.add(n);
            onChange([...next]);
          }} /> {n}</label></li>
        ))}
      </ul>
    </div>
  );
}

function JsonControl({ common, value, onChange }: { common: Record<string, unknown>; value: unknown; onChange: (v: unknown) => void }) {
  const [text, setText] = useState(value === undefined || value === null ? '' : JSON.stringify(value));
  return <textarea {...common} class="mono" value={text} onInput={(e) => {
    const next = (e.target as HTMLTextAreaElement).value;
    setText(next);
    try {
      onChange(next.trim() === '' ? null : JSON.parse(next));
    } catch {
      onChange(next);
    }
  }} />;
}

function Versions({ asset }: { asset: LegacyAsset }) {
  const [versions, setVersions] = useState<LegacyAsset[] | null>(null);
  useEffect(() => {
    void api<LegacyAsset[]>('GET', `/v1/asset/${asset.objectId}/version`).then(setVersions, () => setVersions([]));
  }, [asset.objectId, asset.lastUpdatedEpoch]);
  if (!versions) return <p class="muted">{t('app.loading')}</p>;
  return (
    <ol class="versions" reversed>
      {[...versions].sort((a, b) => b.versionNumber - a.versionNumber).map((v) => (
        <li key={v.fileId}>
          <a href={`/app/asset/${v.objectId}`} onClick={(e) => linkClick(e, `/app/asset/${v.objectId}`)}>{t('asset.version', { n: v.versionNumber })}</a>
          {' '}{v.filename} · {fileSize(v.fileSizeInBytes)} · {dateTime(v.createdEpoch)}{(v as { currentVersion?: string }).currentVersion === 'Y' ? ` · ${t('asset.current')}` : ''}
        </li>
      ))}
    </ol>
  );
}

function Relations({ asset }: { asset: LegacyAsset }) {
  const [links, setLinks] = useState<{ objectId?: string; relationshipType?: string; filename?: string; [k: string]: unknown }[] | null>(null);
  const [target, setTarget] = useState('');
  const [message, setMessage] = useState<string | null>(null);
  const load = () => api<typeof links>('GET', `/v1/asset/${asset.objectId}/link`).then((l) => setLinks(l ?? []), () => setLinks([]));
  useEffect(() => void load(), [asset.objectId]);
  return (
    <div>
      {!links ? <p class="muted">{t('app.loading')}</p> : links.length === 0 ? <p class="muted">{t('asset.noRelations')}</p> : (
        <ul>{links.map((l, i) => <li key={i}><code>{String(l.relationshipType ?? l.linkType ?? '')}</code> {String(l.filename ?? l.objectId ?? l.childId ?? JSON.stringify(l))}</li>)}</ul>
      )}
      <form class="row" onSubmit={async (e) => {
        e.preventDefault();
        try {
          await api('POST', `/v1/asset/${asset.objectId}/link`, [{ id: target.trim(), relationshipType: 'child' }]);
          setTarget('');
          setMessage(null);
          await load();
        } catch (err) {
          setMessage(reason(err));
        }
      }}>
        <label for="relate-id">{t('asset.addRelation')}</label>
        <input id="relate-id" value={target} onInput={(e) => setTarget((e.target as HTMLInputElement).value)} />
        <button type="submit">{t('asset.relate')}</button>
      </form>
      {message && <p class="error" role="alert">{message}</p>}
    </div>
  );
}

function Technical({ asset }: { asset: LegacyAsset }) {
  const rows: [string, string][] = [];
  const walk = (prefix: string, value: unknown) => {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value)) walk(prefix ? `${prefix} › ${k}` : k, v);
    } else if (value !== null && value !== undefined && value !== '') rows.push([prefix, Array.isArray(value) ? value.join(', ') : String(value)]);
  };
  walk('', asset.technicalMetadata ?? {});
  return (
    <dl class="technical">
      {rows.slice(0, 200).map(([k, v]) => <div key={k}><dt>{k}</dt><dd>{v}</dd></div>)}
    </dl>
  );
}
