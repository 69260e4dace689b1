import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, reason, type FieldProblem } from './api.ts';
import { isSvg, listTemplates, mayUpload, type AdaptiveTemplate } from './adaptive-template-action.tsx';
import { t } from './messages.ts';
import { linkClick, navigate } from './router.ts';
import { loadThumbs, searchTerms, thumbFor, type AssetRecord } from './search.ts';
import './adaptive-templates.css';

/**
 * Adaptive templates (docs/adaptive-templates.md): `/app/templates` lists them, registers one from
 * an SVG asset and deletes; `/app/templates/{id}` fills in its fields with a live preview rendered
 * by the API (the same render the save stores) and saves the result as a new derivative asset.
 */

type Problems = Record<string, string>;

/** `query.headline` (preview) or `body.values.headline` (save) → `{headline: message}`; others under ''. */
function problemsOf(details: FieldProblem[], names: string[]): Problems {
  const out: Problems = {};
  for (const d of details) {
    const name = d.field.slice(d.field.lastIndexOf('.') + 1);
    const key = names.includes(name) ? name : '';
    out[key] = out[key] ? `${out[key]}; ${d.message}` : d.message;
  }
  return out;
}

async function errorOf(response: Response): Promise<ApiError> {
  const text = await response.text();
  let data: { code?: string; message?: string; details?: FieldProblem[] } = {};
  try {
    data = text ? JSON.parse(text) : {};
  } catch {
    data = { message: text.slice(0, 200) };
  }
  return new ApiError(
    response.status,
    data.code ?? String(response.status),
    data.message ?? `HTTP ${response.status}`,
    data.details ?? [],
  );
}

/** The template assets' thumbnails (signed URLs; an SVG asset's thumbnail shows the source with its {{fields}}). */
async function thumbnailsOf(templates: AdaptiveTemplate[]): Promise<Record<string, string>> {
  if (templates.length === 0) return {};
  const answer = await api<{ urls: Record<string, Record<string, string>> }>('POST', '/v1/asset/rendition-urls', {
    ids: [...new Set(templates.map((x) => x.objectId))],
    renditions: ['imageThumb'],
  });
  return Object.fromEntries(Object.entries(answer.urls).map(([id, urls]) => [id, urls.imageThumb ?? '']));
}

function Thumb({ url }: { url: string | null | undefined }) {
  const [broken, setBroken] = useState(false);
  return (
    <span class="thumb adaptive-thumb">
      {url && !broken ? <img src={url} alt="" onError={() => setBroken(true)} /> : null}
    </span>
  );
}

/** `/app/templates`: the templates the caller may use, registering one from an SVG asset, delete. */
export function TemplatesPage() {
  const [list, setList] = useState<AdaptiveTemplate[] | null>(null);
  const [allowed, setAllowed] = useState<boolean | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [asking, setAsking] = useState<string | null>(null);
  const [thumbs, setThumbs] = useState<Record<string, string>>({});
  const load = async () => {
    try {
      const templates = await listTemplates();
      setList(templates);
      setThumbs(await thumbnailsOf(templates));
    } catch (e) {
      setMessage(t('common.error', { reason: reason(e) }));
    }
  };
  useEffect(() => {
    void load();
    void mayUpload().then(setAllowed);
  }, []);
  const remove = async (template: AdaptiveTemplate) => {
    try {
      await api('DELETE', `/v1/adaptive-templates/${template.templateId}`);
      setAsking(null);
      setMessage(t('adaptive.deleted', { name: template.metadataDocument.template_title }));
      await load();
    } catch (e) {
      setMessage(t('common.error', { reason: reason(e) }));
    }
  };
  return (
    <div class="page adaptive" id="adaptive-templates">
      <h1>{t('adaptive.title')}</h1>
      <p class="muted">{t('adaptive.lead')}</p>
      {message && (
        <p class="notice" role="status" id="adaptive-notice">
          {message}
        </p>
      )}
      {allowed === false && (
        <p class="ceiling" role="note" id="adaptive-refused">
          {t('adaptive.mayNotRegister')}
        </p>
      )}
      <section aria-labelledby="adaptive-list-title">
        <h2 id="adaptive-list-title">{t('adaptive.list')}</h2>
        {list === null && !message && (
          <p class="muted" role="status">
            {t('app.loading')}
          </p>
        )}
        {list?.length === 0 && <p class="muted">{t('adaptive.empty')}</p>}
        <ul class="adaptive-list">
          {list?.map((x) => {
            const name = x.metadataDocument.template_title;
            const href = `/app/templates/${x.templateId}`;
            return (
              <li key={x.templateId} class="adaptive-card" data-template-id={x.templateId}>
                <a href={href} onClick={(e) => linkClick(e, href)} aria-label={t('adaptive.open', { name })}>
                  <Thumb url={thumbs[x.objectId]} />
                </a>
                <div class="adaptive-card-body">
                  <a href={href} onClick={(e) => linkClick(e, href)} class="adaptive-name">
                    {name}
                  </a>
                  <span class="muted small">
                    {x.kind.toUpperCase()} ·{' '}
                    {x.fields.length === 1
                      ? t('adaptive.fields.one')
                      : t('adaptive.fields', { count: x.fields.length })}{' '}
                    · {x.filename}
                  </span>
                  {x.metadataDocument.description && <span class="small">{x.metadataDocument.description}</span>}
                  {asking === x.templateId ? (
                    <span class="row">
                      <span class="small">{t('adaptive.deleteQuestion', { name })}</span>
                      <button type="button" class="danger" onClick={() => void remove(x)}>
                        {t('adaptive.deleteConfirm', { name })}
                      </button>
                      <button type="button" onClick={() => setAsking(null)}>
                        {t('common.cancel')}
                      </button>
                    </span>
                  ) : (
                    <span class="row">
                      <button
                        type="button"
                        class="danger"
                        aria-label={t('adaptive.delete', { name })}
                        disabled={allowed === false}
                        aria-describedby={allowed === false ? 'adaptive-refused' : undefined}
                        onClick={() => setAsking(x.templateId)}
                      >
                        {t('admin.delete')}
                      </button>
                    </span>
                  )}
                </div>
              </li>
            );
          })}
        </ul>
      </section>
      {allowed && (
        <Register
          onDone={(created) => {
            setMessage(t('adaptive.registered', { name: created.metadataDocument.template_title }));
            void load();
          }}
        />
      )}
    </div>
  );
}

/** Register an SVG asset: a picker over the SVG assets the caller may see, an optional name and description. */
function Register({ onDone }: { onDone: (created: AdaptiveTemplate) => void }) {
  const [text, setText] = useState('');
  const [found, setFound] = useState<AssetRecord[] | null>(null);
  const [chosen, setChosen] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [problems, setProblems] = useState<Problems>({});
  const [busy, setBusy] = useState(false);
  const [, setTick] = useState(0);

  // The SVG assets matching the words typed (a moment after the last key), through the `File Type` facet.
  useEffect(() => {
    let live = true;
    const timer = setTimeout(async () => {
      try {
        const answer = await api<{ result: AssetRecord[] }>('POST', '/v1/search/keyword', {
          searchTerm: [...searchTerms(text), 'File Type: svg'],
          operation: 'AND',
          limit: 24,
          sortBy: [{ metadataDefinitionSearchField: 'lastUpdatedEpoch', order: 'desc' }],
          excludes: ['technicalMetadata', 'metadata', 'metadataDenormalized', 'renditions', 'securityDenormalized'],
        });
        const svgs = answer.result.filter(isSvg);
        if (!live) return;
        setFound(svgs);
        await loadThumbs(svgs);
        if (live) setTick((n) => n + 1);
      } catch (e) {
        if (live) setProblems({ assetId: reason(e) });
      }
    }, 200);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [text]);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!chosen) {
      setProblems({ assetId: t('adaptive.pickFirst') });
      return;
    }
    setBusy(true);
    setProblems({});
    try {
      const body: Record<string, string> = { assetId: chosen };
      if (name.trim()) body.name = name.trim();
      if (description.trim()) body.description = description.trim();
      const created = await api<AdaptiveTemplate>('POST', '/v1/adaptive-templates', body);
      setChosen(null);
      setName('');
      setDescription('');
      onDone(created);
    } catch (err) {
      if (err instanceof ApiError && err.details.length > 0)
        setProblems(problemsOf(err.details, ['assetId', 'name', 'description']));
      else setProblems({ '': reason(err) });
    } finally {
      setBusy(false);
    }
  };

  const problemFor = (key: string, id: string) =>
    problems[key] ? (
      <span class="field-error" id={`${id}-error`}>
        {problems[key]}
      </span>
    ) : null;

  return (
    <section aria-labelledby="adaptive-register-title" class="adaptive-register">
      <h2 id="adaptive-register-title">{t('adaptive.register')}</h2>
      <form onSubmit={submit} id="adaptive-register">
        <fieldset
          class="field adaptive-picker"
          aria-describedby={problems.assetId ? 'adaptive-asset-error' : undefined}
          aria-invalid={problems.assetId ? 'true' : undefined}
        >
          <legend class="label">{t('adaptive.pick')}</legend>
          <label for="adaptive-find" class="small">
            {t('adaptive.find')}
          </label>
          <input
            id="adaptive-find"
            type="search"
            value={text}
            autocomplete="off"
            onInput={(e) => setText((e.target as HTMLInputElement).value)}
          />
          {found?.length === 0 && <p class="muted small">{t('adaptive.noSvg')}</p>}
          <ul class="adaptive-choices">
            {found?.map((r) => (
              <li key={r.objectId}>
                <label class={chosen === r.objectId ? 'chosen' : ''}>
                  <input
                    type="radio"
                    name="adaptive-asset"
                    value={r.objectId}
                    checked={chosen === r.objectId}
                    onChange={() => setChosen(r.objectId)}
                  />
                  <Thumb url={thumbFor(r)} />
                  <span class="adaptive-choice-name">{r.filename ?? r.objectId}</span>
                </label>
              </li>
            ))}
          </ul>
          {problemFor('assetId', 'adaptive-asset')}
        </fieldset>
        <div class="field">
          <label for="adaptive-name">{t('adaptive.name')}</label>
          <input
            id="adaptive-name"
            value={name}
            aria-invalid={problems.name ? 'true' : undefined}
            aria-describedby={problems.name ? 'adaptive-name-error' : undefined}
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
          />
          {problemFor('name', 'adaptive-name')}
        </div>
        <div class="field">
          <label for="adaptive-description">{t('adaptive.description')}</label>
          <textarea
            id="adaptive-description"
            value={description}
            aria-invalid={problems.description ? 'true' : undefined}
            aria-describedby={problems.description ? 'adaptive-description-error' : undefined}
            onInput={(e) => setDescription((e.target as HTMLTextAreaElement).value)}
          />
          {problemFor('description', 'adaptive-description')}
        </div>
        {problems[''] && (
          <p class="error" role="alert">
            {problems['']}
          </p>
        )}
        <button type="submit" class="primary" id="adaptive-register-submit" disabled={busy}>
          {t('adaptive.registerButton')}
        </button>
      </form>
    </section>
  );
}

const HEX = /^#[0-9a-f]{6}$/i;
const PREVIEW_DELAY_MS = 300;

/** `/app/templates/{id}`: the form generated from the fields, the live preview, and Render and save. */
export function TemplatePage({ id }: { id: string }) {
  const [template, setTemplate] = useState<AdaptiveTemplate | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [values, setValues] = useState<Record<string, string>>({});
  const [filename, setFilename] = useState('');
  const [problems, setProblems] = useState<Problems>({});
  const [preview, setPreview] = useState<{ url: string | null; state: 'loading' | 'ready' | 'invalid' | 'failed' }>({
    url: null,
    state: 'loading',
  });
  const [previewProblem, setPreviewProblem] = useState<string | null>(null);
  const [allowed, setAllowed] = useState<boolean | null>(null);
  const [saving, setSaving] = useState(false);
  const [saved, setSaved] = useState<{ assetId: string; name: string } | null>(null);
  const [htmlBase, setHtmlBase] = useState<string | null>(null);
  const launch = useRef<{ base: string; until: number } | null>(null);
  const blob = useRef<string | null>(null);

  useEffect(() => {
    let live = true;
    setTemplate(null);
    setError(null);
    launch.current = null;
    api<AdaptiveTemplate>('GET', `/v1/adaptive-templates/${encodeURIComponent(id)}`).then(
      (x) => {
        if (!live) return;
        setTemplate(x);
        setValues(Object.fromEntries(x.fields.map((f) => [f.name, f.default])));
      },
      (e) =>
        live &&
        setError(e instanceof ApiError && (e.status === 404 || e.status === 400) ? t('adaptive.notFound') : reason(e)),
    );
    void mayUpload().then((ok) => live && setAllowed(ok));
    return () => {
      live = false;
    };
  }, [id]);
  useEffect(
    () => () => {
      if (blob.current) URL.revokeObjectURL(blob.current);
    },
    [],
  );

  /** The signed launch URL's path (valid an hour; asked again a minute before it ends, or when refused). */
  const base = async (fresh = false): Promise<string> => {
    if (!fresh && launch.current && launch.current.until > Date.now() + 60_000) return launch.current.base;
    const answer = await api<{ url: string; expiresAt: string }>('POST', '/v1/template/launch', { templateId: id });
    launch.current = { base: new URL(answer.url, location.href).pathname, until: Date.parse(answer.expiresAt) };
    return launch.current.base;
  };
  const query = (v: Record<string, string>) =>
    new URLSearchParams(Object.entries(v).map(([k, value]): [string, string] => [`f_${k}`, value])).toString();

  // The live preview: the API's render of the values, a moment after the last change.
  useEffect(() => {
    if (!template) return;
    const names = template.fields.map((f) => f.name);
    const controller = new AbortController();
    const timer = setTimeout(async () => {
      setPreview((p) => ({ ...p, state: 'loading' }));
      try {
        let path = await base();
        if (template.kind === 'html') {
          setHtmlBase(path);
          setPreview({ url: null, state: 'ready' });
          setProblems({});
          return;
        }
        let response = await fetch(`${path}/render?${query(values)}`, { signal: controller.signal });
        if (response.status === 404) {
          path = await base(true);
          response = await fetch(`${path}/render?${query(values)}`, { signal: controller.signal });
        }
        if (!response.ok) {
          const problem = await errorOf(response);
          if (problem.status === 400 && problem.details.length > 0) {
            setProblems(problemsOf(problem.details, names));
            setPreviewProblem(t('adaptive.previewFix'));
            setPreview((p) => ({ ...p, state: 'invalid' }));
          } else {
            setPreviewProblem(t('adaptive.previewFailed', { reason: problem.message }));
            setPreview((p) => ({ ...p, state: 'failed' }));
          }
          return;
        }
        const url = URL.createObjectURL(await response.blob());
        if (controller.signal.aborted) {
          URL.revokeObjectURL(url);
          return;
        }
        if (blob.current) URL.revokeObjectURL(blob.current);
        blob.current = url;
        setProblems({});
        setPreviewProblem(null);
        setPreview({ url, state: 'ready' });
      } catch (e) {
        if (controller.signal.aborted) return;
        setPreviewProblem(t('adaptive.previewFailed', { reason: reason(e) }));
        setPreview((p) => ({ ...p, state: 'failed' }));
      }
    }, PREVIEW_DELAY_MS);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [template, values]);

  const save = async (e: Event) => {
    e.preventDefault();
    if (!template) return;
    setSaving(true);
    setSaved(null);
    try {
      const send = async (path: string) =>
        fetch(`${path}/save`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ values, ...(filename.trim() ? { filename: filename.trim() } : {}) }),
        });
      let response = await send(await base());
      if (response.status === 404) response = await send(await base(true));
      if (!response.ok) {
        const problem = await errorOf(response);
        if (problem.status === 400 && problem.details.length > 0) {
          const found = problemsOf(
            problem.details,
            template.fields.map((f) => f.name),
          );
          setProblems(found);
          if (found['']) setPreviewProblem(found['']);
        } else setPreviewProblem(t('common.error', { reason: problem.message }));
        return;
      }
      const { assetId } = (await response.json()) as { assetId: string };
      const asset = await api<{ filename?: string }>('GET', `/v1/asset/${assetId}`).catch(() => ({ filename: '' }));
      setSaved({ assetId, name: asset.filename || assetId });
    } catch (err) {
      setPreviewProblem(t('common.error', { reason: reason(err) }));
    } finally {
      setSaving(false);
    }
  };

  const back = (
    <a class="back" href="/app/templates" onClick={(e) => linkClick(e, '/app/templates')}>
      ← {t('adaptive.back')}
    </a>
  );
  if (error)
    return (
      <div class="page">
        {back}
        <p class="error" role="alert">
          {error}
        </p>
      </div>
    );
  if (!template)
    return (
      <div class="page">
        <p class="muted" role="status">
          {t('app.loading')}
        </p>
      </div>
    );
  const name = template.metadataDocument.template_title;
  const invalid = Object.keys(problems).some((k) => k !== '');
  return (
    <div class="page adaptive" id="adaptive-template">
      {back}
      <h1 class="asset-title">{name}</h1>
      {template.metadataDocument.description && <p class="muted">{template.metadataDocument.description}</p>}
      <p class="small muted">
        {t('adaptive.asset')}:{' '}
        <a
          href={`/app/asset/${template.objectId}`}
          onClick={(e) => linkClick(e, `/app/asset/${template.objectId}`)}
          id="adaptive-source"
        >
          {template.filename}
        </a>
      </p>
      <div class="adaptive-layout">
        <form class="details adaptive-form" onSubmit={save} aria-labelledby="adaptive-form-title" noValidate>
          <h2 id="adaptive-form-title">{t('adaptive.form')}</h2>
          {invalid && (
            <p class="error" role="alert">
              {t('adaptive.invalid')}
            </p>
          )}
          {template.fields.map((f) => {
            const fieldId = `f-${f.name}`;
            const problem = problems[f.name];
            const described = [`${fieldId}-hint`, problem ? `${fieldId}-error` : ''].filter(Boolean).join(' ');
            const value = values[f.name] ?? '';
            const set = (v: string) => {
              setValues((old) => ({ ...old, [f.name]: v }));
              setSaved(null);
            };
            const common = {
              id: fieldId,
              name: f.name,
              value,
              'aria-invalid': problem ? ('true' as const) : undefined,
              'aria-describedby': described,
            };
            return (
              <div class="field" key={f.name}>
                <label for={fieldId}>{f.label}</label>
                <div class="row adaptive-input">
                  {f.multiline ? (
                    <textarea {...common} onInput={(e) => set((e.target as HTMLTextAreaElement).value)} />
                  ) : (
                    <input {...common} onInput={(e) => set((e.target as HTMLInputElement).value)} />
                  )}
                  {HEX.test(f.default) && (
                    <input
                      type="color"
                      class="adaptive-colour"
                      aria-label={t('adaptive.pickColour', { label: f.label })}
                      value={HEX.test(value) ? value : f.default}
                      onInput={(e) => set((e.target as HTMLInputElement).value)}
                    />
                  )}
                </div>
                <span class="muted small" id={`${fieldId}-hint`}>
                  {t('adaptive.maxLength', { count: f.maxLength })}
                </span>
                {problem && (
                  <span class="field-error" id={`${fieldId}-error`}>
                    {problem}
                  </span>
                )}
              </div>
            );
          })}
          <div class="field">
            <label for="adaptive-filename">{t('adaptive.filename')}</label>
            <input
              id="adaptive-filename"
              value={filename}
              onInput={(e) => setFilename((e.target as HTMLInputElement).value)}
            />
          </div>
          {allowed === false && (
            <p class="ceiling" role="note" id="adaptive-save-refused">
              {t('adaptive.mayNotSave')}
            </p>
          )}
          <button
            type="submit"
            class="primary"
            id="adaptive-save"
            disabled={saving || allowed === false}
            aria-describedby={allowed === false ? 'adaptive-save-refused' : undefined}
          >
            {saving ? t('adaptive.saving') : t('adaptive.save')}
          </button>
          {saved && (
            <p class="notice" role="status" id="adaptive-saved">
              {t('adaptive.saved')}{' '}
              <a
                href={`/app/asset/${saved.assetId}`}
                onClick={(e) => {
                  if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
                  e.preventDefault();
                  navigate(`/app/asset/${saved.assetId}`);
                }}
              >
                {t('adaptive.openResult', { name: saved.name })}
              </a>
            </p>
          )}
        </form>
        <section class="preview adaptive-preview" aria-labelledby="adaptive-preview-title">
          <h2 id="adaptive-preview-title">{t('adaptive.preview')}</h2>
          <div
            class="preview-box"
            id="adaptive-preview-box"
            data-state={preview.state}
            aria-busy={preview.state === 'loading' ? 'true' : undefined}
          >
            {template.kind === 'svg' && preview.url && (
              <img id="adaptive-preview" src={preview.url} alt={t('adaptive.previewAlt', { name })} />
            )}
            {template.kind === 'html' && htmlBase && (
              <a href={`${htmlBase}/render?${query(values)}`} target="_blank" rel="noopener noreferrer">
                {t('adaptive.htmlPreview')}
              </a>
            )}
          </div>
          <p class="small muted" aria-live="polite" id="adaptive-preview-state">
            {preview.state === 'loading' ? t('adaptive.previewing') : ''}
          </p>
          {previewProblem && (
            <p class="error" role="alert" id="adaptive-preview-problem">
              {previewProblem}
            </p>
          )}
        </section>
      </div>
    </div>
  );
}
