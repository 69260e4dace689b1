import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { reason } from './api.ts';
import { dateTime, extension, fileSize } from './format.ts';
import { t } from './messages.ts';
import { navigate } from './router.ts';
import { PAGE, ResultSet, loadThumbs, thumbFor, type AssetRecord, type Query } from './search.ts';
import { Filters } from './filters.tsx';
import { placeholderStyle } from './placeholder.ts';

export type ViewMode = 'grid' | 'list';

const TILE_MIN = 168;
const TILE_HEIGHT = 212;
const ROW_HEIGHT = 52;
const OVERSCAN = 3;

interface Props {
  query: Query;
  setQuery: (q: Query) => void;
  selection: Set<string>;
  setSelection: (s: Set<string>) => void;
  revision: number;
  onDragAssets?: (ids: string[]) => void;
  toolbarExtra?: preact.ComponentChildren;
}

/** The whole library as a virtualised grid or list: only the rows in view are in the page. */
export function Library({ query, setQuery, selection, setSelection, revision, toolbarExtra }: Props) {
  const [view, setView] = useState<ViewMode>(() => (localStorage.getItem('tessera.view') === 'list' ? 'list' : 'grid'));
  const [, setTick] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [filtersOpen, setFiltersOpen] = useState(false);
  const rerender = useCallback(() => setTick((n) => n + 1), []);
  const results = useMemo(() => new ResultSet(query, rerender), [JSON.stringify(query), revision]);
  useEffect(() => {
    setError(null);
    results.start().then(
      () => rerender(),
      (e) => {
        if ((e as Error).name !== 'AbortError') setError(reason(e));
      },
    );
    return () => results.close();
  }, [results]);

  const scroller = useRef<HTMLDivElement>(null);
  const [box, setBox] = useState({ width: 800, height: 600, top: 0 });
  useLayoutEffect(() => {
    const el = scroller.current!;
    const measure = () => setBox({ width: el.clientWidth, height: el.clientHeight, top: el.scrollTop });
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    const onScroll = () => setBox((b) => ({ ...b, top: el.scrollTop }));
    el.addEventListener('scroll', onScroll, { passive: true });
    return () => {
      observer.disconnect();
      el.removeEventListener('scroll', onScroll);
    };
  }, []);
  useEffect(() => {
    scroller.current?.scrollTo({ top: 0 });
  }, [results]);

  const total = Math.max(0, results.total);
  const cols = view === 'grid' ? Math.max(1, Math.floor((box.width - 16) / TILE_MIN)) : 1;
  const rowHeight = view === 'grid' ? TILE_HEIGHT : ROW_HEIGHT;
  const tileWidth = Math.floor((box.width - 16) / cols);
  const rows = Math.ceil(total / cols);
  const firstRow = Math.max(0, Math.floor(box.top / rowHeight) - OVERSCAN);
  const lastRow = Math.min(rows - 1, Math.ceil((box.top + box.height) / rowHeight) + OVERSCAN);
  const firstIndex = firstRow * cols;
  const lastIndex = Math.min(total - 1, (lastRow + 1) * cols - 1);

  // Load the pages in view, then their thumbnails; come back while previews are still being made.
  useEffect(() => {
    if (total === 0) return;
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      const pages = new Set<number>();
      for (let p = Math.floor(firstIndex / PAGE); p <= Math.floor(lastIndex / PAGE); p++) pages.add(p);
      try {
        await Promise.all([...pages].map((p) => results.ensure(p)));
        const visible: AssetRecord[] = [];
        for (let i = firstIndex; i <= lastIndex; i++) {
          const r = results.item(i);
          if (r) visible.push(r);
        }
        await loadThumbs(visible);
        if (cancelled) return;
        rerender();
        if (visible.some((r) => r.renditionsState === 'pending' || !r.renditionsState)) {
          timer = setTimeout(async () => {
            for (const p of pages) await results.reload(p).catch(() => undefined);
            if (!cancelled) void run();
          }, 1500);
        }
      } catch (e) {
        if (!cancelled && (e as Error).name !== 'AbortError') setError(reason(e));
      }
    };
    void run();
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [results, firstIndex, lastIndex, total, results.total]);

  // Keyboard and mouse selection.
  const [focus, setFocus] = useState(0);
  const anchor = useRef(0);
  const idAt = (i: number) => results.item(i)?.objectId;
  const selectRange = (from: number, to: number, base: Set<string>) => {
    const next = new Set(base);
    for (let i = Math.min(from, to); i <= Math.max(from, to); i++) {
      const id = idAt(i);
      if (id) next.add(id);
    }
    return next;
  };
  const activate = (index: number, event: { shiftKey: boolean; ctrlKey: boolean; metaKey: boolean }) => {
    const id = idAt(index);
    if (!id) return;
    setFocus(index);
    if (event.shiftKey) {
      setSelection(selectRange(anchor.current, index, event.ctrlKey || event.metaKey ? selection : new Set()));
      return;
    }
    anchor.current = index;
    if (event.ctrlKey || event.metaKey) {
      const next = new Set(selection);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      setSelection(next);
    } else {
      setSelection(new Set([id]));
    }
  };
  const scrollToIndex = (index: number) => {
    const el = scroller.current;
    if (!el) return;
    const top = Math.floor(index / cols) * rowHeight;
    if (top < el.scrollTop) el.scrollTop = top;
    else if (top + rowHeight > el.scrollTop + el.clientHeight) el.scrollTop = top + rowHeight - el.clientHeight;
  };
  const onKeyDown = (event: KeyboardEvent) => {
    if (total === 0) return;
    const moves: Record<string, number> = {
      ArrowRight: 1,
      ArrowLeft: -1,
      ArrowDown: cols,
      ArrowUp: -cols,
      PageDown: cols * Math.max(1, Math.floor(box.height / rowHeight)),
      PageUp: -cols * Math.max(1, Math.floor(box.height / rowHeight)),
    };
    if (event.key in moves || event.key === 'Home' || event.key === 'End') {
      event.preventDefault();
      const next =
        event.key === 'Home'
          ? 0
          : event.key === 'End'
            ? total - 1
            : Math.min(total - 1, Math.max(0, focus + moves[event.key]!));
      setFocus(next);
      scrollToIndex(next);
      if (event.shiftKey) setSelection(selectRange(anchor.current, next, new Set()));
      return;
    }
    if (event.key === ' ') {
      event.preventDefault();
      activate(focus, { shiftKey: event.shiftKey, ctrlKey: true, metaKey: false });
    } else if (event.key === 'Enter') {
      const id = idAt(focus);
      if (id) navigate(`/app/asset/${id}`);
    } else if (event.key === 'a' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      setSelection(new Set(results.loaded().map((r) => r.objectId)));
    } else if (event.key === 'Escape') {
      setSelection(new Set());
    }
  };
  useEffect(() => {
    if (focus >= total && total > 0) setFocus(total - 1);
  }, [total]);

  const items = [];
  for (let i = firstIndex; i <= lastIndex; i++) {
    const record = results.item(i);
    const row = Math.floor(i / cols);
    const col = i % cols;
    const style =
      view === 'grid'
        ? `transform:translate(${col * tileWidth}px, ${row * rowHeight}px);width:${tileWidth}px`
        : `transform:translateY(${row * rowHeight}px)`;
    items.push(
      record ? (
        <Tile
          key={record.objectId}
          record={record}
          index={i}
          total={total}
          view={view}
          style={style}
          selected={selection.has(record.objectId)}
          focused={i === focus}
          onActivate={activate}
          selection={selection}
        />
      ) : (
        <div key={`p${i}`} class={`tile placeholder ${view}`} style={style} aria-hidden="true" />
      ),
    );
  }
  const activeId = results.item(focus)?.objectId;

  return (
    <div class="library">
      <Filters
        query={query}
        setQuery={setQuery}
        facets={results.facets}
        open={filtersOpen}
        onClose={() => setFiltersOpen(false)}
      />
      <section class="results" aria-labelledby="library-title">
        <div class="toolbar">
          <h1 id="library-title" class="count">
            <span class="visually-hidden">{t('library.title')}: </span>
            {results.total < 0
              ? error
                ? t('library.unavailable')
                : t('app.loading')
              : results.total === 1
                ? t('library.count.one')
                : t('library.count', { count: results.total.toLocaleString() })}
          </h1>
          <button
            type="button"
            class="ghost filters-toggle"
            aria-expanded={filtersOpen}
            onClick={() => setFiltersOpen(!filtersOpen)}
          >
            {t('filters.show')}
          </button>
          <label class="inline">
            <span>{t('library.sort')}</span>
            <select
              value={query.sort}
              onChange={(e) => setQuery({ ...query, sort: (e.target as HTMLSelectElement).value as Query['sort'] })}
            >
              <option value="lastUpdatedEpoch">{t('library.sort.updated')}</option>
              <option value="createdEpoch">{t('library.sort.created')}</option>
              <option value="filename">{t('library.sort.filename')}</option>
              <option value="relevance">{t('library.sort.relevance')}</option>
            </select>
          </label>
          <label class="inline">
            <span class="visually-hidden">{t('library.order')}</span>
            <select
              value={query.order}
              onChange={(e) => setQuery({ ...query, order: (e.target as HTMLSelectElement).value as Query['order'] })}
            >
              <option value="desc">{query.sort === 'filename' ? 'Z–A' : t('library.order.desc')}</option>
              <option value="asc">{query.sort === 'filename' ? 'A–Z' : t('library.order.asc')}</option>
            </select>
          </label>
          {/* biome-ignore lint/a11y/useSemanticElements: a toolbar button group; a fieldset would need a visible legend */}
          <div class="segmented" role="group" aria-label={t('library.view')}>
            {(['grid', 'list'] as const).map((mode) => (
              <button
                type="button"
                key={mode}
                aria-pressed={view === mode}
                onClick={() => {
                  setView(mode);
                  localStorage.setItem('tessera.view', mode);
                }}
              >
                {t(mode === 'grid' ? 'library.view.grid' : 'library.view.list')}
              </button>
            ))}
          </div>
        </div>
        {selection.size > 0 && (
          <section class="selectionbar" aria-label={t('library.selected', { count: selection.size })}>
            <span>{t('library.selected', { count: selection.size })}</span>
            {toolbarExtra}
            <button type="button" class="ghost" onClick={() => setSelection(new Set())}>
              {t('library.clearSelection')}
            </button>
          </section>
        )}
        {error && (
          <p class="error" role="alert">
            {t('library.loadError', { reason: error })}
          </p>
        )}
        {results.total === 0 && (
          <p class="empty">
            {query.text || Object.keys(query.facets).length || query.from || query.to
              ? t('library.noMatch')
              : t('library.empty')}
          </p>
        )}
        {view === 'list' && total > 0 && (
          <div class="list-head" aria-hidden="true">
            <span />
            <span>{t('library.col.name')}</span>
            <span>{t('library.col.type')}</span>
            <span>{t('library.col.size')}</span>
            <span>{t('library.col.updated')}</span>
          </div>
        )}
        <div
          ref={scroller}
          class={`scroller ${view}`}
          role="listbox"
          aria-multiselectable="true"
          aria-label={t('library.grid')}
          tabIndex={0}
          aria-activedescendant={activeId ? `asset-${activeId}` : undefined}
          onKeyDown={onKeyDown}
        >
          <div class="spacer" style={`height:${rows * rowHeight}px`}>
            {items}
          </div>
        </div>
      </section>
    </div>
  );
}

interface TileProps {
  record: AssetRecord;
  index: number;
  total: number;
  view: ViewMode;
  style: string;
  selected: boolean;
  focused: boolean;
  selection: Set<string>;
  onActivate: (index: number, event: MouseEvent) => void;
}

function Tile({ record, index, total, view, style, selected, focused, onActivate, selection }: TileProps) {
  const thumb = thumbFor(record);
  const name = record.filename ?? record.objectId;
  const href = `/app/asset/${record.objectId}`;
  const onDragStart = (event: DragEvent) => {
    const ids = selection.has(record.objectId) ? [...selection] : [record.objectId];
    event.dataTransfer?.setData('application/x-tessera-assets', JSON.stringify(ids));
    event.dataTransfer?.setData('text/plain', ids.join('\n'));
  };
  const image = thumb ? (
    <img src={thumb} alt="" loading="lazy" decoding="async" draggable={false} />
  ) : (
    <span class="filetype" aria-hidden="true">
      {record.renditionsState === 'pending' || !record.renditionsState ? '…' : extension(name) || '?'}
    </span>
  );
  return (
    // The listbox owns the keyboard (arrows, Space, Enter, aria-activedescendant): options are not tab stops.
    // biome-ignore lint/a11y/useKeyWithClickEvents: see above
    // biome-ignore lint/a11y/useFocusableInteractive: see above
    <div
      id={`asset-${record.objectId}`}
      role="option"
      aria-selected={selected}
      aria-posinset={index + 1}
      aria-setsize={total}
      data-asset-id={record.objectId}
      data-state={record.renditionsState ?? ''}
      class={`tile ${view}${selected ? ' selected' : ''}${focused ? ' focused' : ''}`}
      style={style}
      draggable
      onDragStart={onDragStart}
      onClick={(e) => onActivate(index, e)}
      onDblClick={() => navigate(href)}
    >
      {view === 'grid' ? (
        <>
          <div class="thumb" style={placeholderStyle(record.placeholder)}>
            {image}
          </div>
          <span class="name" title={name}>
            {name}
          </span>
        </>
      ) : (
        <>
          <div class="thumb small">{image}</div>
          <span class="name" title={name}>
            {name}
          </span>
          <span>{extension(name)}</span>
          <span>{fileSize(record.fileSizeInBytes)}</span>
          <span>{dateTime(record.lastUpdatedEpoch)}</span>
        </>
      )}
    </div>
  );
}
