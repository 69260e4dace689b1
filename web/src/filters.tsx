import { useEffect, useState } from 'preact/hooks';
import { api, reason } from './api.ts';
import { t } from './messages.ts';
import { EMPTY_QUERY, searchBody, type Facet, type Query } from './search.ts';

/** A saved query back into the app's filters: "Name: Value" terms are facets, the rest the text. */
export function queryOf(saved: Record<string, unknown>): Query {
  const raw = saved.searchTerm;
  const terms = (Array.isArray(raw) ? raw : typeof raw === 'string' ? [raw] : []) as string[];
  const facets: Record<string, string> = {};
  const words: string[] = [];
  for (const term of terms) {
    const m = /^([^":]+):\s+(.+)$/.exec(term);
    if (m) facets[m[1]!.trim()] = m[2]!.trim();
    else if (term !== '*') words.push(term);
  }
  const sort = (saved.sortBy as { metadataDefinitionSearchField?: string; order?: string }[] | undefined)?.[0];
  const range = (saved.dateRanges as { from?: string; to?: string }[] | undefined)?.[0];
  return {
    ...EMPTY_QUERY,
    text: words.join(' ').replace(/\*$/, ''),
    facets,
    sort: (['lastUpdatedEpoch', 'createdEpoch', 'filename', 'relevance'].includes(
      sort?.metadataDefinitionSearchField ?? '',
    )
      ? sort!.metadataDefinitionSearchField
      : EMPTY_QUERY.sort) as Query['sort'],
    order: sort?.order === 'asc' ? 'asc' : 'desc',
    from: range?.from,
    to: range?.to,
  };
}

interface SavedSearch {
  id: string;
  name: string;
  query?: Record<string, unknown>;
}

/** The sidebar: facet values as filters, a date range, and saved searches. */
export function Filters({
  query,
  setQuery,
  facets,
  open,
  onClose,
}: {
  query: Query;
  setQuery: (q: Query) => void;
  facets: Facet[];
  open: boolean;
  onClose: () => void;
}) {
  const toggle = (name: string, key: string) => {
    const next = { ...query.facets };
    if (next[name] === key) delete next[name];
    else next[name] = key;
    setQuery({ ...query, facets: next });
  };
  const active = Object.keys(query.facets).length > 0 || query.from || query.to;
  return (
    <aside class={`filters${open ? ' open' : ''}`} aria-labelledby="filters-title">
      <div class="filters-head">
        <h2 id="filters-title">{t('filters.title')}</h2>
        {open && (
          <button type="button" class="ghost close" onClick={onClose}>
            {t('common.close')}
          </button>
        )}
      </div>
      {active && (
        <button
          type="button"
          class="link"
          onClick={() => setQuery({ ...query, facets: {}, from: undefined, to: undefined })}
        >
          {t('filters.clear')}
        </button>
      )}
      <fieldset class="dates">
        <legend>{t('filters.dates')}</legend>
        <label>
          {t('filters.from')}{' '}
          <input
            type="date"
            value={query.from ?? ''}
            onChange={(e) => setQuery({ ...query, from: (e.target as HTMLInputElement).value || undefined })}
          />
        </label>
        <label>
          {t('filters.to')}{' '}
          <input
            type="date"
            value={query.to ?? ''}
            onChange={(e) => setQuery({ ...query, to: (e.target as HTMLInputElement).value || undefined })}
          />
        </label>
      </fieldset>
      {facets
        .filter((f) => f.values.length > 0)
        .map((facet) => (
          <fieldset key={facet.facet_name} class="facet">
            <legend>{facet.facet_name}</legend>
            <ul>
              {facet.values.map((v) => {
                const checked = query.facets[facet.facet_name] === v.key;
                return (
                  <li key={v.key}>
                    <label>
                      <input type="checkbox" checked={checked} onChange={() => toggle(facet.facet_name, v.key)} />
                      <span class="facet-key">{v.key}</span>
                      <span class="facet-count">{v.doc_count.toLocaleString()}</span>
                    </label>
                  </li>
                );
              })}
            </ul>
          </fieldset>
        ))}
      {facets.length === 0 && <p class="muted">{t('filters.none')}</p>}
      <SavedSearches query={query} setQuery={setQuery} />
    </aside>
  );
}

function SavedSearches({ query, setQuery }: { query: Query; setQuery: (q: Query) => void }) {
  const [list, setList] = useState<SavedSearch[]>([]);
  const [name, setName] = useState('');
  const [message, setMessage] = useState<string | null>(null);
  const load = () =>
    api<{ result: SavedSearch[] }>('GET', '/v1/saved-searches?limit=100')
      .then((r) => setList(r.result))
      .catch(() => setList([]));
  useEffect(() => void load(), []);
  const save = async (event: Event) => {
    event.preventDefault();
    if (!name.trim()) return;
    try {
      await api('POST', '/v1/saved-searches', { name: name.trim(), query: searchBody(query) });
      setMessage(t('saved.saved', { name: name.trim() }));
      setName('');
      await load();
    } catch (e) {
      setMessage(t('common.error', { reason: reason(e) }));
    }
  };
  const open = (saved: SavedSearch) => setQuery(queryOf(saved.query ?? {}));
  return (
    <section class="saved" aria-labelledby="saved-title">
      <h2 id="saved-title">{t('saved.title')}</h2>
      {list.length === 0 ? (
        <p class="muted">{t('saved.none')}</p>
      ) : (
        <ul>
          {list.map((s) => (
            <li key={s.id}>
              <button type="button" class="link" onClick={() => open(s)}>
                {s.name}
              </button>
              <button
                type="button"
                class="ghost icon"
                aria-label={t('saved.delete', { name: s.name })}
                onClick={async () => {
                  await api('DELETE', `/v1/saved-searches/${s.id}`).catch(() => undefined);
                  await load();
                }}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <form onSubmit={save} class="row">
        <label class="visually-hidden" for="saved-name">
          {t('saved.name')}
        </label>
        <input
          id="saved-name"
          value={name}
          placeholder={t('saved.name')}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
        <button type="submit">{t('saved.save')}</button>
      </form>
      {message && (
        <p class="muted" role="status">
          {message}
        </p>
      )}
    </section>
  );
}
