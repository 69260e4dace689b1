import { useEffect, useRef, useState } from 'preact/hooks';
import { api, reason } from './api.ts';
import { t } from './messages.ts';
import { attributesOf, metadataTemplates, vocabularies, type Template, type Vocabulary } from './templates.ts';

interface Action {
  status: string;
  progress?: number;
  processed?: number;
  total?: number;
  result?: {
    updated?: number;
    failed?: number;
    total?: number;
    errors?: { objectId?: string; id?: string; message?: string; error?: string }[];
  } & Record<string, unknown>;
  errors?: { objectId?: string; id?: string; message?: string }[];
}

/** Set, add, remove (one value of many) or clear one attribute (and the template) on the selection, watched as an Action with per-item results. */
export function BulkEdit({ ids, onClose }: { ids: string[]; onClose: (changed: boolean) => void }) {
  const [templates, setTemplates] = useState<Template[]>([]);
  const [vocabs, setVocabs] = useState<Map<string, Vocabulary>>(new Map());
  const [templateId, setTemplateId] = useState('');
  const [attributeId, setAttributeId] = useState('');
  const [mode, setMode] = useState<'replace' | 'append' | 'remove' | 'clear'>('replace');
  const [value, setValue] = useState('');
  const [action, setAction] = useState<Action | null>(null);
  const [error, setError] = useState<string | null>(null);
  const dialog = useRef<HTMLDivElement>(null);
  useEffect(() => {
    void metadataTemplates().then((list) => {
      setTemplates(list);
      setTemplateId((list.find((x) => x.isDefault) ?? list[0])?.templateId ?? '');
    });
    void vocabularies().then(setVocabs);
    dialog.current?.querySelector<HTMLElement>('select, input, button')?.focus();
  }, []);
  const template = templates.find((x) => x.templateId === templateId);
  const attributes = attributesOf(template).filter(
    (a) =>
      !a.readonly &&
      a.visible !== false &&
      (a.type === 'text' || a.type === 'date' || a.type === 'controlledVocabulary'),
  );
  const attribute = attributes.find((a) => a.id === attributeId) ?? attributes[0];
  const vocab = attribute?.controlledVocabularyId ? vocabs.get(attribute.controlledVocabularyId) : undefined;

  const apply = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      const body: Record<string, unknown> = { metadataTemplateId: templateId, objectIds: ids };
      if (attribute) {
        const v = mode === 'clear' ? null : attribute.isMultipleSelect ? [value] : value;
        body.metadataDocument = [
          {
            metadataDefinitionId: attribute.id,
            metadataDefinitionValue:
              vocab && v !== null ? (Array.isArray(v) ? v.map((name) => ({ valueName: name })) : { valueName: v }) : v,
            operation: mode === 'append' || mode === 'remove' ? mode : 'replace',
          },
        ];
      }
      const started = await api<{ jobId: string }>('PATCH', '/v1/asset', body);
      for (;;) {
        const state = await api<Action>('GET', `/v1/action/${started.jobId}`);
        setAction(state);
        if (!['queued', 'running'].includes(state.status)) break;
        await new Promise((resolve) => setTimeout(resolve, 400));
      }
    } catch (e) {
      setError(reason(e));
    }
  };
  const done = action && !['queued', 'running'].includes(action.status);
  const itemErrors = [
    ...(action?.errors ?? []),
    ...(Array.isArray(action?.result?.errors) ? action!.result!.errors! : []),
  ];

  return (
    <div class="modal-backdrop">
      <div
        class="modal"
        role="dialog"
        aria-modal="true"
        aria-labelledby="bulk-title"
        ref={dialog}
        onKeyDown={(e) => e.key === 'Escape' && onClose(Boolean(done))}
      >
        <h2 id="bulk-title">{t('bulk.title', { count: ids.length })}</h2>
        <form onSubmit={apply}>
          <div class="field">
            <label for="bulk-template">{t('bulk.template')}</label>
            <select
              id="bulk-template"
              value={templateId}
              onChange={(e) => setTemplateId((e.target as HTMLSelectElement).value)}
            >
              {templates.map((x) => (
                <option key={x.templateId} value={x.templateId}>
                  {x.templateName}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="bulk-attribute">{t('bulk.attribute')}</label>
            <select
              id="bulk-attribute"
              value={attribute?.id ?? ''}
              onChange={(e) => {
                setAttributeId((e.target as HTMLSelectElement).value);
                setValue('');
              }}
            >
              {attributes.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.name}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="bulk-mode">{t('bulk.mode')}</label>
            <select
              id="bulk-mode"
              value={mode}
              onChange={(e) => setMode((e.target as HTMLSelectElement).value as typeof mode)}
            >
              <option value="replace">{t('bulk.mode.set')}</option>
              <option value="append">{t('bulk.mode.add')}</option>
              <option value="remove">{t('bulk.mode.remove')}</option>
              <option value="clear">{t('bulk.mode.clear')}</option>
            </select>
          </div>
          {mode !== 'clear' && (
            <div class="field">
              <label for="bulk-value">{t('bulk.value')}</label>
              {vocab ? (
                <select id="bulk-value" value={value} onChange={(e) => setValue((e.target as HTMLSelectElement).value)}>
                  <option value="">—</option>
                  {vocab.values.map((v) => (
                    <option key={v.valueId} value={v.valueName}>
                      {v.valueName}
                    </option>
                  ))}
                </select>
              ) : (
                <input
                  id="bulk-value"
                  type="text"
                  value={value}
                  placeholder={attribute?.type === 'date' ? 'yyyy-MM-dd' : undefined}
                  onInput={(e) => setValue((e.target as HTMLInputElement).value)}
                />
              )}
            </div>
          )}
          {error && (
            <p class="error" role="alert">
              {error}
            </p>
          )}
          {action && (
            <div class="action-status" role="status">
              <progress
                max={100}
                value={action.progress ?? 0}
                aria-label={t('bulk.running', { done: action.processed ?? 0, count: action.total ?? ids.length })}
              />
              <p id="bulk-result">
                {done
                  ? t('bulk.done', {
                      ok: Number(action.result?.updated ?? action.processed ?? 0),
                      failed: Number(action.result?.failed ?? itemErrors.length),
                    })
                  : t('bulk.running', { done: action.processed ?? 0, count: action.total ?? ids.length })}
              </p>
              {itemErrors.length > 0 && (
                <ul class="item-errors">
                  {itemErrors.slice(0, 50).map((e, i) => (
                    <li key={i}>
                      <code>{e.objectId ?? e.id}</code>: {e.message ?? (e as { error?: string }).error}
                    </li>
                  ))}
                </ul>
              )}
            </div>
          )}
          <div class="row">
            <button type="submit" class="primary" disabled={Boolean(action && !done)}>
              {t('bulk.apply')}
            </button>
            <button type="button" onClick={() => onClose(Boolean(done))}>
              {done ? t('bulk.close') : t('common.cancel')}
            </button>
          </div>
        </form>
      </div>
    </div>
  );
}
