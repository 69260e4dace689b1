import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, reason } from './api.ts';
import { BlockView, type BoardView, type ViewAsset, usePictures, viewAssets } from './board-view.tsx';
import { BoardPreview } from './board-preview.tsx';
import { BoardSharing } from './board-share.tsx';
import { type MessageKey, t } from './messages.ts';
import { linkClick, navigate } from './router.ts';
import { type AssetRecord, loadThumbs, searchTerms, thumbFor } from './search.ts';

/** A story board as GET /v1/storyboards/{id} answers (docs/storyboards.md). */
export interface Board {
  id: string;
  title: string;
  description: string;
  locale: string;
  status: 'draft' | 'published';
  blockCount: number;
  version: number;
  lastUpdatedDate: string;
  canEdit: boolean;
  canDelete: boolean;
  canPublish: boolean;
  canShareInternal: boolean;
  canShareExternal: boolean;
  blocks?: Block[];
}

export interface Block {
  id?: string;
  type: BlockType;
  text?: string;
  level?: number;
  html?: string;
  assetId?: string;
  assetIds?: string[];
  collectionId?: string;
  savedSearchId?: string;
  limit?: number;
  caption?: string;
  title?: string;
  url?: string;
  label?: string;
  redacted?: boolean;
}

export const BLOCK_TYPES = [
  'heading',
  'richText',
  'asset',
  'gallery',
  'collection',
  'savedSearch',
  'link',
  'divider',
] as const;
type BlockType = (typeof BLOCK_TYPES)[number];

const typeName = (type: string) => t(`boards.type.${type}` as MessageKey);

/** Every story board the person may see: create, rename, delete (asked first). */
export function Boards() {
  const [list, setList] = useState<Board[] | null>(null);
  const [title, setTitle] = useState('');
  const [message, setMessage] = useState<string | null>(null);
  const [renaming, setRenaming] = useState<{ id: string; title: string } | null>(null);
  const [confirming, setConfirming] = useState<Board | null>(null);
  const load = () =>
    api<{ items: Board[] }>('GET', '/v1/storyboards?limit=100&sortBy=updatedAt&sortOrder=desc').then(
      (a) => setList(a.items),
      (e) => setMessage(t('common.error', { reason: reason(e) })),
    );
  useEffect(() => void load(), []);
  const act = async (work: () => Promise<unknown>, done?: string) => {
    try {
      await work();
      setMessage(done ?? null);
    } catch (e) {
      setMessage(t('common.error', { reason: reason(e) }));
    }
    await load();
  };
  return (
    <div class="page boards">
      <h1>{t('boards.title')}</h1>
      <form
        class="row"
        onSubmit={async (e) => {
          e.preventDefault();
          if (!title.trim()) return;
          try {
            const board = await api<Board>('POST', '/v1/storyboards', { title: title.trim() });
            setTitle('');
            navigate(`/app/boards/${board.id}`);
          } catch (err) {
            setMessage(t('common.error', { reason: reason(err) }));
          }
        }}
      >
        <label for="board-title">{t('boards.newTitle')}</label>
        <input id="board-title" value={title} onInput={(e) => setTitle((e.target as HTMLInputElement).value)} />
        <button type="submit" class="primary" id="create-board">
          {t('boards.create')}
        </button>
      </form>
      <p class="notice" role="status" hidden={!message}>
        {message}
      </p>
      {list && list.length === 0 && <p class="muted">{t('boards.empty')}</p>}
      <ul class="board-list plain" id="board-list">
        {list?.map((b) => (
          <li key={b.id} class="board-item">
            {renaming?.id === b.id ? (
              <form
                class="row"
                onSubmit={(e) => {
                  e.preventDefault();
                  const next = renaming.title.trim();
                  if (!next) return;
                  setRenaming(null);
                  void act(
                    () => api('PATCH', `/v1/storyboards/${b.id}`, { title: next, version: b.version }),
                    t('boards.renamed', { title: next }),
                  );
                }}
              >
                <label class="visually-hidden" for={`rename-${b.id}`}>
                  {t('boards.renameLabel', { title: b.title })}
                </label>
                <input
                  id={`rename-${b.id}`}
                  value={renaming.title}
                  onInput={(e) => setRenaming({ id: b.id, title: (e.target as HTMLInputElement).value })}
                />
                <button type="submit" class="primary">
                  {t('boards.save')}
                </button>
                <button type="button" onClick={() => setRenaming(null)}>
                  {t('common.cancel')}
                </button>
              </form>
            ) : (
              <>
                <a href={`/app/boards/${b.id}`} onClick={(e) => linkClick(e, `/app/boards/${b.id}`)}>
                  {b.title}
                </a>
                <span class="badge">{t(b.status === 'published' ? 'boards.published' : 'boards.draft')}</span>
                <span class="muted small">{t('boards.blockCount', { count: b.blockCount })}</span>
                <span class="grow" />
                {b.canEdit && (
                  <button
                    type="button"
                    class="ghost"
                    aria-label={t('boards.renameLabel', { title: b.title })}
                    onClick={() => setRenaming({ id: b.id, title: b.title })}
                  >
                    {t('boards.rename')}
                  </button>
                )}
                {b.canDelete && (
                  <button
                    type="button"
                    class="ghost danger"
                    aria-label={t('boards.deleteLabel', { title: b.title })}
                    onClick={() => setConfirming(b)}
                  >
                    {t('boards.delete')}
                  </button>
                )}
              </>
            )}
            {confirming?.id === b.id && (
              <div class="confirm" role="alertdialog" aria-labelledby={`confirm-${b.id}`}>
                <p id={`confirm-${b.id}`}>{t('boards.deleteQuestion', { title: b.title })}</p>
                <button
                  type="button"
                  class="danger"
                  id="confirm-delete"
                  ref={(el) => el?.focus()}
                  onClick={() => {
                    setConfirming(null);
                    void act(() => api('DELETE', `/v1/storyboards/${b.id}`), t('boards.deleted', { title: b.title }));
                  }}
                >
                  {t('boards.delete')}
                </button>
                <button type="button" onClick={() => setConfirming(null)}>
                  {t('common.cancel')}
                </button>
              </div>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The fields a block of this type keeps (a block is sent whole: PATCH replaces it). */
function clean(block: Block): Block {
  const keep: Record<BlockType, (keyof Block)[]> = {
    heading: ['text', 'level'],
    richText: ['html'],
    asset: ['assetId', 'caption'],
    gallery: ['assetIds', 'caption'],
    collection: ['collectionId', 'limit', 'title', 'caption'],
    savedSearch: ['savedSearchId', 'limit', 'title', 'caption'],
    link: ['url', 'label'],
    divider: [],
  };
  const out: Record<string, unknown> = { type: block.type };
  if (block.id) out.id = block.id;
  for (const k of keep[block.type]) {
    const v = block[k];
    if (v !== undefined && v !== '') out[k] = v;
  }
  return out as unknown as Block;
}

/** The builder: a board's blocks, added, edited, removed and reordered (drag or buttons); preview and sharing. */
export function BoardPage({ id, userName }: { id: string; userName: string }) {
  const [board, setBoard] = useState<Board | null>(null);
  const [view, setView] = useState<BoardView | null>(null);
  const [refused, setRefused] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [adding, setAdding] = useState<BlockType | ''>('');
  const [dragged, setDraggedState] = useState<number | null>(null);
  // The dragged block's index, also kept outside the render: drag events can come before a re-render.
  const draggedRef = useRef<number | null>(null);
  const setDragged = (i: number | null) => {
    draggedRef.current = i;
    setDraggedState(i);
  };
  const [over, setOver] = useState<number | null>(null);
  const [details, setDetails] = useState<{ title: string; description: string } | null>(null);
  const listRef = useRef<HTMLOListElement>(null);

  const load = async () => {
    try {
      const b = await api<Board>('GET', `/v1/storyboards/${id}`);
      setBoard(b);
      setDetails({ title: b.title, description: b.description });
      setView(await api<BoardView>('GET', `/v1/storyboards/${id}/view`));
    } catch (e) {
      if (e instanceof ApiError && (e.status === 403 || e.status === 404))
        setRefused(t(e.status === 403 ? 'boards.refused' : 'boards.notFound'));
      else setMessage(t('common.error', { reason: reason(e) }));
    }
  };
  useEffect(() => {
    setBoard(null);
    setRefused(null);
    void load();
  }, [id]);

  /** One change with the version this page knows: a 409 (someone else changed it) reloads and says so. */
  const change = async (work: (version: number) => Promise<Board>, done?: string): Promise<boolean> => {
    if (!board) return false;
    try {
      const next = await work(board.version);
      setBoard(next);
      setMessage(done ?? null);
      setView(await api<BoardView>('GET', `/v1/storyboards/${id}/view`));
      return true;
    } catch (e) {
      setMessage(
        e instanceof ApiError && e.status === 409 ? t('boards.conflict') : t('common.error', { reason: reason(e) }),
      );
      await load();
      return false;
    }
  };

  if (refused)
    return (
      <div class="page">
        <a class="back" href="/app/boards" onClick={(e) => linkClick(e, '/app/boards')}>
          ← {t('boards.title')}
        </a>
        <h1>{t('boards.refusedTitle')}</h1>
        <p class="error" role="alert" id="board-refused">
          {refused}
        </p>
      </div>
    );
  if (!board || !view)
    return (
      <div class="page">
        {message ? (
          <p class="error" role="alert">
            {message}
          </p>
        ) : (
          <p class="muted">{t('app.loading')}</p>
        )}
      </div>
    );

  const blocks = board.blocks ?? [];
  const shown = new Map(view.blocks.map((b) => [b.id, b]));
  const names = new Map(viewAssets(view).map((a) => [a.id, a]));
  const order = (from: number, to: number) => {
    if (from === to || to < 0 || to >= blocks.length) return;
    const ids = blocks.map((b) => b.id!);
    const [moved] = ids.splice(from, 1);
    ids.splice(to, 0, moved!);
    // Shown at once; the API's answer (or a reload on failure) settles it.
    setBoard({ ...board, blocks: ids.map((bid) => blocks.find((b) => b.id === bid)!) });
    const label = blockLabel(blocks[from]!);
    void change(
      (version) => api<Board>('POST', `/v1/storyboards/${id}/blocks/reorder`, { blockIds: ids, version }),
      t('boards.moved', { name: label, position: to + 1, count: ids.length }),
    ).then(() => {
      // Keyboard users keep their place: focus follows the moved block's button.
      const buttons = listRef.current?.querySelectorAll<HTMLButtonElement>(
        `li[data-block-id="${moved}"] .move-${to < from ? 'up' : 'down'}`,
      );
      const button = buttons?.[0];
      if (button && !button.disabled) button.focus();
      else listRef.current?.querySelector<HTMLElement>(`li[data-block-id="${moved}"] .handle`)?.focus();
    });
  };
  const blockLabel = (b: Block) => {
    const summary =
      b.type === 'heading'
        ? b.text
        : b.type === 'collection' || b.type === 'savedSearch'
          ? (shown.get(b.id!)?.title ?? b.title)
          : b.type === 'asset'
            ? names.get(b.assetId ?? '')?.title
            : b.type === 'link'
              ? b.label || b.url
              : b.type === 'richText'
                ? (b.html ?? '')
                    .replace(/<[^>]*>/g, ' ')
                    .replace(/\s+/g, ' ')
                    .trim()
                    .slice(0, 40)
                : '';
    return summary ? `${typeName(b.type)}: ${summary}` : typeName(b.type);
  };

  return (
    <div class="page board-page">
      <a class="back" href="/app/boards" onClick={(e) => linkClick(e, '/app/boards')}>
        ← {t('boards.title')}
      </a>
      <h1>{board.title}</h1>
      <p class="muted">
        <span class="badge">{t(board.status === 'published' ? 'boards.published' : 'boards.draft')}</span>{' '}
        {t('boards.blockCount', { count: blocks.length })}
      </p>
      <p class="notice" role="status" id="board-status" hidden={!message}>
        {message}
      </p>
      {!board.canEdit ? (
        <>
          <p class="notice" id="board-readonly">
            {t('boards.readOnly')}
          </p>
          <ReadOnlyBlocks view={view} />
        </>
      ) : (
        <>
          {details && (
            <form
              class="board-details"
              onSubmit={(e) => {
                e.preventDefault();
                void change(
                  (version) =>
                    api<Board>('PATCH', `/v1/storyboards/${id}`, {
                      title: details.title.trim(),
                      description: details.description,
                      version,
                    }),
                  t('boards.saved'),
                );
              }}
            >
              <div class="field">
                <label for="board-edit-title">{t('boards.field.title')}</label>
                <input
                  id="board-edit-title"
                  value={details.title}
                  required
                  onInput={(e) => setDetails({ ...details, title: (e.target as HTMLInputElement).value })}
                />
              </div>
              <div class="field">
                <label for="board-edit-description">{t('boards.field.description')}</label>
                <textarea
                  id="board-edit-description"
                  rows={2}
                  value={details.description}
                  onInput={(e) => setDetails({ ...details, description: (e.target as HTMLTextAreaElement).value })}
                />
              </div>
              <div class="row">
                <button type="submit">{t('boards.saveDetails')}</button>
                {board.canPublish && (
                  <button
                    type="button"
                    id="publish-toggle"
                    onClick={() =>
                      void change(
                        (version) =>
                          api<Board>(
                            'POST',
                            `/v1/storyboards/${id}/${board.status === 'published' ? 'unpublish' : 'publish'}`,
                            { version },
                          ),
                        t(board.status === 'published' ? 'boards.unpublishedNow' : 'boards.publishedNow'),
                      )
                    }
                  >
                    {t(board.status === 'published' ? 'boards.unpublish' : 'boards.publish')}
                  </button>
                )}
              </div>
            </form>
          )}
          <h2 id="blocks-heading">{t('boards.blocks')}</h2>
          <p class="muted small" id="blocks-help">
            {t('boards.dragHelp')}
          </p>
          {blocks.length === 0 && <p class="muted">{t('boards.noBlocks')}</p>}
          <ol class="block-list" ref={listRef} aria-labelledby="blocks-heading" aria-describedby="blocks-help">
            {blocks.map((b, i) => {
              const label = blockLabel(b);
              return (
                <li
                  key={b.id}
                  data-block-id={b.id}
                  data-block-type={b.type}
                  class={`block-item${over === i && dragged !== null && dragged !== i ? ' over' : ''}${dragged === i ? ' dragging' : ''}`}
                  draggable={editing !== b.id}
                  onDragStart={(e) => {
                    e.dataTransfer?.setData('application/x-tessera-block', String(i));
                    if (e.dataTransfer) e.dataTransfer.effectAllowed = 'move';
                    setDragged(i);
                  }}
                  onDragOver={(e) => {
                    if (draggedRef.current === null) return;
                    e.preventDefault();
                    setOver(i);
                  }}
                  onDragEnd={() => {
                    setDragged(null);
                    setOver(null);
                  }}
                  onDrop={(e) => {
                    const from = draggedRef.current;
                    if (from === null) return;
                    e.preventDefault();
                    setDragged(null);
                    setOver(null);
                    order(from, i);
                  }}
                >
                  <div class="block-bar">
                    <span class="handle" aria-hidden="true" title={t('boards.drag')}>
                      ⠿
                    </span>
                    <span class="block-type">{typeName(b.type)}</span>
                    <span class="grow" />
                    <button
                      type="button"
                      class="ghost icon move-up"
                      disabled={i === 0}
                      aria-label={t('boards.moveUp', { name: label })}
                      onClick={() => order(i, i - 1)}
                    >
                      ↑
                    </button>
                    <button
                      type="button"
                      class="ghost icon move-down"
                      disabled={i === blocks.length - 1}
                      aria-label={t('boards.moveDown', { name: label })}
                      onClick={() => order(i, i + 1)}
                    >
                      ↓
                    </button>
                    <button
                      type="button"
                      class="ghost"
                      aria-label={t('boards.editLabel', { name: label })}
                      aria-expanded={editing === b.id}
                      disabled={b.redacted}
                      onClick={() => setEditing(editing === b.id ? null : b.id!)}
                    >
                      {t('boards.edit')}
                    </button>
                    <button
                      type="button"
                      class="ghost danger"
                      aria-label={t('boards.removeLabel', { name: label })}
                      onClick={() =>
                        void change(
                          (version) => api<Board>('DELETE', `/v1/storyboards/${id}/blocks/${b.id}?version=${version}`),
                          t('boards.removed', { name: label }),
                        )
                      }
                    >
                      {t('boards.remove')}
                    </button>
                  </div>
                  {editing === b.id ? (
                    <BlockEditor
                      initial={b}
                      names={names}
                      onCancel={() => setEditing(null)}
                      onSave={async (next) => {
                        const ok = await change(
                          (version) =>
                            api<Board>('PATCH', `/v1/storyboards/${id}/blocks/${b.id}`, {
                              block: clean({ ...next, id: b.id }),
                              version,
                            }),
                          t('boards.blockSaved'),
                        );
                        if (ok) setEditing(null);
                      }}
                    />
                  ) : (
                    <BlockPreview block={shown.get(b.id!)} redacted={b.redacted} />
                  )}
                </li>
              );
            })}
          </ol>
          <section class="add-block" aria-labelledby="add-block-heading">
            <h2 id="add-block-heading">{t('boards.addBlock')}</h2>
            <div class="row">
              <label for="block-type">{t('boards.blockType')}</label>
              <select
                id="block-type"
                value={adding}
                onChange={(e) => setAdding((e.target as HTMLSelectElement).value as BlockType | '')}
              >
                <option value="">{t('boards.chooseType')}</option>
                {BLOCK_TYPES.map((type) => (
                  <option key={type} value={type}>
                    {typeName(type)}
                  </option>
                ))}
              </select>
            </div>
            {adding && (
              <BlockEditor
                key={adding}
                initial={{ type: adding }}
                names={names}
                onCancel={() => setAdding('')}
                onSave={async (next) => {
                  const ok = await change(
                    (version) => api<Board>('POST', `/v1/storyboards/${id}/blocks`, { block: clean(next), version }),
                    t('boards.added', { type: typeName(next.type) }),
                  );
                  if (ok) setAdding('');
                }}
              />
            )}
          </section>
          <BoardPreview board={board} view={view} userName={userName} />
          {board.canShareExternal && <BoardSharing board={board} userName={userName} />}
        </>
      )}
    </div>
  );
}

function ReadOnlyBlocks({ view }: { view: BoardView }) {
  const pictures = usePictures(viewAssets(view));
  return (
    <div class="board-render">
      {view.description && <p>{view.description}</p>}
      {view.blocks.map((b) => (
        <div class="board-block" key={b.id} data-block-type={b.type}>
          <BlockView block={b} pictures={pictures} />
        </div>
      ))}
    </div>
  );
}

function BlockPreview({ block, redacted }: { block?: BoardView['blocks'][number]; redacted?: boolean }) {
  const pictures = usePictures(block ? [...(block.asset ? [block.asset] : []), ...(block.assets ?? [])] : []);
  if (redacted) return <p class="muted small">{t('boards.redacted')}</p>;
  if (!block) return <p class="muted small">{t('boards.nothingVisible')}</p>;
  return (
    <div class="block-preview">
      <BlockView block={block} pictures={pictures} />
    </div>
  );
}

interface Choice {
  id: string;
  name: string;
}

/** The fields of one block: a new one, or an existing one being changed. */
function BlockEditor({
  initial,
  names,
  onSave,
  onCancel,
}: {
  initial: Block;
  names: Map<string, ViewAsset>;
  onSave: (block: Block) => Promise<void>;
  onCancel: () => void;
}) {
  const [block, setBlock] = useState<Block>({
    ...initial,
    level: initial.type === 'heading' ? (initial.level ?? 2) : initial.level,
  });
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const rich = useRef<HTMLDivElement>(null);
  const uid = initial.id ?? 'new';
  const set = (patch: Partial<Block>) => setBlock((b) => ({ ...b, ...patch }));
  const text = (key: 'text' | 'caption' | 'title' | 'url' | 'label', labelKey: MessageKey, required = false) => (
    <div class="field">
      <label for={`${key}-${uid}`}>
        {t(labelKey)}
        {required && <span class="muted"> ({t('common.required')})</span>}
      </label>
      <input
        id={`${key}-${uid}`}
        type={(key === 'url' ? 'url' : 'text') as 'text'}
        required={required}
        value={block[key] ?? ''}
        onInput={(e) => set({ [key]: (e.target as HTMLInputElement).value })}
      />
    </div>
  );
  const limit = (
    <div class="field">
      <label for={`limit-${uid}`}>{t('boards.field.limit')}</label>
      <input
        id={`limit-${uid}`}
        type="number"
        min={1}
        max={100}
        value={block.limit ?? 24}
        onInput={(e) => set({ limit: Number((e.target as HTMLInputElement).value) || undefined })}
      />
    </div>
  );
  useEffect(() => {
    if (rich.current && block.type === 'richText') rich.current.innerHTML = initial.html ?? '';
  }, []);
  const format = (command: string, value?: string) => {
    rich.current?.focus();
    document.execCommand(command, false, value);
  };

  return (
    <form
      class="block-editor"
      aria-label={t('boards.editorLabel', { type: typeName(block.type) })}
      onSubmit={async (e) => {
        e.preventDefault();
        const next = block.type === 'richText' ? { ...block, html: rich.current?.innerHTML ?? '' } : block;
        if (next.type === 'asset' && !next.assetId) return setProblem(t('boards.pickAsset'));
        if (next.type === 'gallery' && !(next.assetIds ?? []).length) return setProblem(t('boards.pickAssets'));
        setProblem(null);
        setBusy(true);
        await onSave(next);
        setBusy(false);
      }}
    >
      {block.type === 'heading' && (
        <>
          {text('text', 'boards.field.text', true)}
          <div class="field">
            <label for={`level-${uid}`}>{t('boards.field.level')}</label>
            <select
              id={`level-${uid}`}
              value={String(block.level ?? 2)}
              onChange={(e) => set({ level: Number((e.target as HTMLSelectElement).value) })}
            >
              <option value="1">{t('boards.level.1')}</option>
              <option value="2">{t('boards.level.2')}</option>
              <option value="3">{t('boards.level.3')}</option>
            </select>
          </div>
        </>
      )}
      {block.type === 'richText' && (
        <div class="field">
          <span class="label" id={`rich-label-${uid}`}>
            {t('boards.field.html')}
          </span>
          <div class="rich-toolbar" role="toolbar" aria-label={t('boards.rich.toolbar')}>
            <button type="button" class="ghost" onClick={() => format('bold')}>
              <strong>{t('boards.rich.bold')}</strong>
            </button>
            <button type="button" class="ghost" onClick={() => format('italic')}>
              <em>{t('boards.rich.italic')}</em>
            </button>
            <button type="button" class="ghost" onClick={() => format('insertUnorderedList')}>
              {t('boards.rich.list')}
            </button>
            <button type="button" class="ghost" onClick={() => format('formatBlock', 'blockquote')}>
              {t('boards.rich.quote')}
            </button>
          </div>
          {/* biome-ignore lint/a11y/useSemanticElements: a rich-text editor is a contenteditable; a textarea cannot hold formatting */}
          <div
            ref={rich}
            class="rich-editor board-rich"
            id={`html-${uid}`}
            contentEditable
            role="textbox"
            tabIndex={0}
            aria-multiline="true"
            aria-labelledby={`rich-label-${uid}`}
            aria-describedby={`rich-help-${uid}`}
          />
          <span class="muted small" id={`rich-help-${uid}`}>
            {t('boards.rich.help')}
          </span>
        </div>
      )}
      {(block.type === 'asset' || block.type === 'gallery') && (
        <>
          <AssetPicker
            uid={uid}
            multiple={block.type === 'gallery'}
            chosen={block.type === 'asset' ? (block.assetId ? [block.assetId] : []) : (block.assetIds ?? [])}
            names={names}
            onChange={(ids) => (block.type === 'asset' ? set({ assetId: ids[0] }) : set({ assetIds: ids }))}
          />
          {text('caption', 'boards.field.caption')}
        </>
      )}
      {block.type === 'collection' && (
        <>
          <SourcePicker
            uid={uid}
            labelKey="boards.field.collection"
            value={block.collectionId}
            load={async () =>
              (
                await api<{ result: { collectionId: string; name: string }[] }>('POST', '/v1/search/collection', {
                  limit: 100,
                })
              ).result.map((c) => ({ id: c.collectionId, name: c.name }))
            }
            onChange={(collectionId) => set({ collectionId })}
          />
          {limit}
          {text('title', 'boards.field.setTitle')}
          {text('caption', 'boards.field.caption')}
        </>
      )}
      {block.type === 'savedSearch' && (
        <>
          <SourcePicker
            uid={uid}
            labelKey="boards.field.savedSearch"
            value={block.savedSearchId}
            load={async () =>
              (await api<{ result: { id: string; name: string }[] }>('GET', '/v1/saved-searches?limit=100')).result.map(
                (s) => ({ id: s.id, name: s.name }),
              )
            }
            onChange={(savedSearchId) => set({ savedSearchId })}
          />
          {limit}
          {text('title', 'boards.field.setTitle')}
          {text('caption', 'boards.field.caption')}
        </>
      )}
      {block.type === 'link' && (
        <>
          {text('url', 'boards.field.url', true)}
          {text('label', 'boards.field.label')}
        </>
      )}
      {block.type === 'divider' && <p class="muted small">{t('boards.dividerHelp')}</p>}
      {problem && (
        <p class="error" role="alert">
          {problem}
        </p>
      )}
      <div class="row">
        <button type="submit" class="primary" disabled={busy}>
          {t(initial.id ? 'boards.saveBlock' : 'boards.addThisBlock')}
        </button>
        <button type="button" onClick={onCancel}>
          {t('common.cancel')}
        </button>
      </div>
    </form>
  );
}

/** A collection or saved search, chosen from those the editor may see. */
function SourcePicker({
  uid,
  labelKey,
  value,
  load,
  onChange,
}: {
  uid: string;
  labelKey: MessageKey;
  value?: string;
  load: () => Promise<Choice[]>;
  onChange: (id: string) => void;
}) {
  const [choices, setChoices] = useState<Choice[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    load().then(
      (list) => {
        setChoices(list);
        if (!value && list[0]) onChange(list[0].id);
      },
      (e) => setProblem(reason(e)),
    );
  }, []);
  return (
    <div class="field">
      <label for={`source-${uid}`}>{t(labelKey)}</label>
      {problem && <span class="error">{problem}</span>}
      {choices && choices.length === 0 ? (
        <span class="muted" id={`source-${uid}`}>
          {t('boards.noSources')}
        </span>
      ) : (
        <select
          id={`source-${uid}`}
          value={value ?? ''}
          required
          onChange={(e) => onChange((e.target as HTMLSelectElement).value)}
        >
          {(choices ?? []).map((c) => (
            <option key={c.id} value={c.id}>
              {c.name}
            </option>
          ))}
        </select>
      )}
    </div>
  );
}

/** Assets from the library, found by search; one (asset block) or several, in order (gallery). */
function AssetPicker({
  uid,
  multiple,
  chosen,
  names,
  onChange,
}: {
  uid: string;
  multiple: boolean;
  chosen: string[];
  names: Map<string, ViewAsset>;
  onChange: (ids: string[]) => void;
}) {
  const [text, setText] = useState('');
  const [results, setResults] = useState<AssetRecord[]>([]);
  const [known, setKnown] = useState<Map<string, string>>(
    new Map([...names.values()].map((a) => [a.id, a.title] as [string, string])),
  );
  const [, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    const timer = setTimeout(async () => {
      const terms = searchTerms(text);
      try {
        const answer = await api<{ result: AssetRecord[] }>('POST', '/v1/search/keyword', {
          searchTerm: terms.length ? terms : ['*'],
          operation: 'AND',
          limit: 24,
          excludes: ['technicalMetadata', 'metadata', 'metadataDenormalized', 'securityDenormalized'],
        });
        if (!live) return;
        setResults(answer.result);
        setKnown((k) => new Map([...k, ...answer.result.map((r) => [r.objectId, r.filename ?? r.objectId] as const)]));
        await loadThumbs(answer.result);
        if (live) setTick((n) => n + 1);
      } catch {
        if (live) setResults([]);
      }
    }, 200);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [text]);
  const toggle = (objectId: string) => {
    if (!multiple) return onChange([objectId]);
    onChange(chosen.includes(objectId) ? chosen.filter((c) => c !== objectId) : [...chosen, objectId]);
  };
  return (
    <fieldset class="asset-picker">
      <legend>{t(multiple ? 'boards.field.assets' : 'boards.field.asset')}</legend>
      <p class="muted small" id={`chosen-${uid}`} aria-live="polite">
        {chosen.length === 0
          ? t('boards.noneChosen')
          : t('boards.chosen', { names: chosen.map((c) => known.get(c) ?? c).join(', ') })}
      </p>
      <label for={`asset-search-${uid}`}>{t('boards.findAssets')}</label>
      <input
        id={`asset-search-${uid}`}
        type="search"
        value={text}
        autocomplete="off"
        onInput={(e) => setText((e.target as HTMLInputElement).value)}
      />
      <ul class="picker-results">
        {results.map((r) => {
          const name = r.filename ?? r.objectId;
          const thumb = thumbFor(r);
          const on = chosen.includes(r.objectId);
          return (
            <li key={r.objectId}>
              <button
                type="button"
                class={`pick${on ? ' on' : ''}`}
                aria-pressed={on}
                aria-label={t('boards.pickLabel', { name })}
                onClick={() => toggle(r.objectId)}
              >
                <span class="thumb small">{thumb ? <img src={thumb} alt="" /> : null}</span>
                <span class="pick-name">{name}</span>
              </button>
            </li>
          );
        })}
      </ul>
    </fieldset>
  );
}
