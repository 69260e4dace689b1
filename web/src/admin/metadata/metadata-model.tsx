import { useEffect, useState } from 'preact/hooks';
import { api, reason } from '../../api.ts';
import { t, type MessageKey } from '../../messages.ts';
import { linkClick } from '../../router.ts';
import { WatchedAction } from '../action-view.tsx';
import { Ceiling } from '../common.tsx';
import type { SectionProps } from '../loader.tsx';
import { AttributesTab } from './attributes.tsx';
import { GroupsTab } from './groups.tsx';
import {
  listAttributes,
  listGroups,
  listTemplates,
  listVocabularies,
  loadInto,
  type Attribute,
  type Group,
  type Load,
  type Template,
  type Vocabulary,
} from './model.ts';
import { TemplatesTab } from './templates.tsx';
import { VocabulariesTab } from './vocabularies.tsx';
import './metadata.css';

export interface Model {
  attributes: Attribute[];
  vocabularies: Vocabulary[];
  groups: Group[];
  templates: Template[];
}

export interface TabProps {
  model: Model;
  /** Reads the model again (after a change), and says what was done. */
  changed: (notice: string) => Promise<void>;
}

const TABS: { id: string; label: MessageKey }[] = [
  { id: 'attributes', label: 'meta.tab.attributes' },
  { id: 'vocabularies', label: 'meta.tab.vocabularies' },
  { id: 'groups', label: 'meta.tab.groups' },
  { id: 'templates', label: 'meta.tab.templates' },
];

/** The metadata model: attributes, vocabularies, groups, templates (with a live preview), and applying changes. */
export default function MetadataModel({ id }: SectionProps) {
  const tab = TABS.find((x) => x.id === id) ?? TABS[0]!;
  const [model, setModel] = useState<Load<Model>>({ state: 'loading' });
  const [notice, setNotice] = useState<string | null>(null);
  const [pending, setPending] = useState(0);
  const load = () =>
    loadInto(setModel, async () => {
      const [attributes, vocabularies, groups, templates] = await Promise.all([
        listAttributes(),
        listVocabularies(),
        listGroups(),
        listTemplates(),
      ]);
      return { attributes, vocabularies, groups, templates };
    });
  useEffect(() => void load(), []);
  const changed = async (message: string) => {
    setNotice(message);
    setPending((n) => n + 1);
    await load();
  };
  return (
    <>
      <h1>{t('admin.section.metadata')}</h1>
      <p class="hint">{t('meta.lead')}</p>
      {model.state === 'forbidden' && <Ceiling what="meta.what" privilege="privilege.metadata_management" />}
      {model.state === 'error' && (
        <p class="error" role="alert">
          {t('common.error', { reason: model.message })}
        </p>
      )}
      {model.state === 'loading' && (
        <p class="muted" role="status">
          {t('admin.loading')}
        </p>
      )}
      {model.state === 'ready' && (
        <>
          <nav class="tabs" aria-label={t('meta.parts')}>
            {TABS.map((x) => (
              <a
                key={x.id}
                id={`tab-${x.id}`}
                href={`/app/admin/metadata/${x.id}`}
                aria-current={x.id === tab.id ? 'page' : undefined}
                onClick={(e) => {
                  setNotice(null);
                  linkClick(e, `/app/admin/metadata/${x.id}`);
                }}
              >
                {t(x.label)}
              </a>
            ))}
          </nav>
          <p class={notice ? 'notice' : 'visually-hidden'} role="status" id="meta-notice">
            {notice ?? ''}
          </p>
          {tab.id === 'attributes' && <AttributesTab model={model.value} changed={changed} />}
          {tab.id === 'vocabularies' && <VocabulariesTab model={model.value} changed={changed} />}
          {tab.id === 'groups' && <GroupsTab model={model.value} changed={changed} />}
          {tab.id === 'templates' && <TemplatesTab model={model.value} changed={changed} />}
          <ApplyChanges bump={pending} />
        </>
      )}
    </>
  );
}

/**
 * Definition changes not yet applied to stored assets (`GET /v1/metadata/changes`), and applying
 * them (`POST /v1/metadata/apply`), watched as its Action until it ends.
 */
function ApplyChanges({ bump }: { bump: number }) {
  const [count, setCount] = useState<number | null>(null);
  const [actionId, setActionId] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    api<{ hitCount: number }>('GET', '/v1/metadata/changes').then(
      (c) => setCount(c.hitCount),
      (e) => setError(reason(e)),
    );
  useEffect(() => void load(), [bump]);
  return (
    <section class="card" aria-labelledby="apply-title" id="apply">
      <h2 id="apply-title">{t('meta.apply')}</h2>
      <p class="hint">{t('meta.applyLead')}</p>
      {count !== null && <p id="pending-changes">{count === 0 ? t('meta.noPending') : t('meta.pending', { count })}</p>}
      <button
        type="button"
        class="primary"
        id="apply-run"
        disabled={!count}
        onClick={async () => {
          setError(null);
          try {
            setActionId((await api<{ actionId: string }>('POST', '/v1/metadata/apply', {})).actionId);
          } catch (e) {
            setError(reason(e));
          }
        }}
      >
        {t('meta.applyRun')}
      </button>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {actionId && <WatchedAction key={actionId} id={actionId} onDone={() => void load()} />}
    </section>
  );
}
