import { useEffect, useState } from 'preact/hooks';
import { api, reason } from './api.ts';
import { t } from './messages.ts';
import { linkClick } from './router.ts';
import { loadThumbs, thumbFor, type AssetRecord } from './search.ts';

interface Collection {
  collectionId: string;
  name: string;
  collectionType: string;
  collectionDocument?: string[];
}

let cache: Collection[] | null = null;

async function listCollections(): Promise<Collection[]> {
  const answer = await api<{ result: Collection[] }>('POST', '/v1/search/collection', { limit: 100 });
  cache = answer.result;
  return cache;
}

async function addMembers(collectionId: string, ids: string[]): Promise<void> {
  await api('PATCH', `/v1/collections/${collectionId}`, { collectionUpdates: { operation: 'add', fileIds: ids } });
}

/** The selection bar's "Add to collection" (objectIds are accepted as members, as the reference's clients send them). */
export function AddToCollection({ ids, onDone }: { ids: string[]; onDone: (message: string) => void }) {
  const [list, setList] = useState<Collection[]>(cache ?? []);
  const [target, setTarget] = useState('');
  useEffect(() => {
    void listCollections().then(setList, () => undefined);
  }, []);
  if (list.length === 0) return null;
  return (
    <form
      class="row"
      onSubmit={async (e) => {
        e.preventDefault();
        const chosen = list.find((c) => c.collectionId === (target || list[0]!.collectionId))!;
        try {
          await addMembers(chosen.collectionId, ids);
          onDone(t('collections.added', { count: ids.length, name: chosen.name }));
        } catch (err) {
          onDone(t('common.error', { reason: reason(err) }));
        }
      }}
    >
      <label class="visually-hidden" for="add-to-collection">
        {t('collections.addSelection')}
      </label>
      <select id="add-to-collection" value={target} onChange={(e) => setTarget((e.target as HTMLSelectElement).value)}>
        {list.map((c) => (
          <option key={c.collectionId} value={c.collectionId}>
            {c.name}
          </option>
        ))}
      </select>
      <button type="submit">{t('collections.addSelection')}</button>
    </form>
  );
}

/** Every collection the person may see; new ones; assets dragged from the library onto one are added. */
export function Collections() {
  const [list, setList] = useState<Collection[] | null>(null);
  const [name, setName] = useState('');
  const [message, setMessage] = useState<string | null>(null);
  const [over, setOver] = useState<string | null>(null);
  const load = () => listCollections().then(setList, (e) => setMessage(reason(e)));
  useEffect(() => void load(), []);
  return (
    <div class="page">
      <h1>{t('collections.title')}</h1>
      <form
        class="row"
        onSubmit={async (e) => {
          e.preventDefault();
          if (!name.trim()) return;
          try {
            await api('POST', '/v1/collection', {
              name: name.trim(),
              collectionType: 'private',
              collectionDocument: [],
            });
            setName('');
            await load();
          } catch (err) {
            setMessage(reason(err));
          }
        }}
      >
        <label for="collection-name">{t('collections.name')}</label>
        <input id="collection-name" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        <button type="submit" class="primary">
          {t('collections.create')}
        </button>
      </form>
      {message && (
        <p class="error" role="alert">
          {message}
        </p>
      )}
      {list && list.length === 0 && <p class="muted">{t('collections.empty')}</p>}
      <ul class="collection-list">
        {list?.map((c) => (
          <li
            key={c.collectionId}
            class={over === c.collectionId ? 'over' : ''}
            onDragOver={(e) => {
              if ([...(e.dataTransfer?.types ?? [])].includes('application/x-tessera-assets')) {
                e.preventDefault();
                setOver(c.collectionId);
              }
            }}
            onDragLeave={() => setOver(null)}
            onDrop={async (e) => {
              const ids = JSON.parse(e.dataTransfer?.getData('application/x-tessera-assets') || '[]') as string[];
              e.preventDefault();
              setOver(null);
              if (ids.length === 0) return;
              await addMembers(c.collectionId, ids).catch((err) => setMessage(reason(err)));
              await load();
            }}
          >
            <a
              href={`/app/collections/${c.collectionId}`}
              onClick={(e) => linkClick(e, `/app/collections/${c.collectionId}`)}
            >
              {c.name}
            </a>
            <span class="muted">
              {' '}
              · {t('collections.members', { count: c.collectionDocument?.length ?? 0 })} · {c.collectionType}
            </span>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** One collection: its members as the viewer may see them, in order (reorder), removal, and a zip share. */
export function CollectionPage({ id }: { id: string }) {
  const [collection, setCollection] = useState<Collection | null>(null);
  const [members, setMembers] = useState<AssetRecord[]>([]);
  const [message, setMessage] = useState<string | null>(null);
  const [emails, setEmails] = useState('');
  const [links, setLinks] = useState<{ email: string; url: string }[]>([]);
  const [, setTick] = useState(0);
  const load = async () => {
    try {
      const c = await api<Collection>('GET', `/v1/collection/${id}`);
      setCollection(c);
      const answer = await api<{ result: AssetRecord[] }>('GET', `/v1/collection/${id}/assets?limit=100`);
      const order = new Map((c.collectionDocument ?? []).map((fileId, i) => [fileId, i]));
      const sorted = [...answer.result].sort((a, b) => (order.get(a.fileId) ?? 0) - (order.get(b.fileId) ?? 0));
      setMembers(sorted);
      await loadThumbs(sorted);
      setTick((n) => n + 1);
    } catch (e) {
      setMessage(reason(e));
    }
  };
  useEffect(() => void load(), [id]);
  const setOrder = async (next: AssetRecord[]) => {
    setMembers(next);
    try {
      await api('PATCH', `/v1/collections/${id}`, {
        collectionUpdates: { operation: 'replace', fileIds: next.map((m) => m.fileId) },
      });
    } catch (e) {
      setMessage(reason(e));
      await load();
    }
  };
  const move = (i: number, by: number) => {
    const next = [...members];
    const [item] = next.splice(i, 1);
    next.splice(Math.max(0, Math.min(next.length, i + by)), 0, item!);
    void setOrder(next);
  };
  if (!collection)
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
  return (
    <div class="page">
      <a class="back" href="/app/collections" onClick={(e) => linkClick(e, '/app/collections')}>
        ← {t('collections.title')}
      </a>
      <h1>{collection.name}</h1>
      {message && (
        <p class="notice" role="status">
          {message}
        </p>
      )}
      <ol class="members">
        {members.map((m, i) => {
          const thumb = thumbFor(m);
          const name = m.filename ?? m.objectId;
          return (
            <li key={m.fileId} class="member" data-file-id={m.fileId}>
              <span class="thumb small">{thumb ? <img src={thumb} alt="" /> : null}</span>
              <a href={`/app/asset/${m.objectId}`} onClick={(e) => linkClick(e, `/app/asset/${m.objectId}`)}>
                {name}
              </a>
              <span class="row">
                <button
                  type="button"
                  class="ghost icon"
                  disabled={i === 0}
                  aria-label={t('collections.moveUp', { name })}
                  onClick={() => move(i, -1)}
                >
                  ↑
                </button>
                <button
                  type="button"
                  class="ghost icon"
                  disabled={i === members.length - 1}
                  aria-label={t('collections.moveDown', { name })}
                  onClick={() => move(i, 1)}
                >
                  ↓
                </button>
                <button
                  type="button"
                  class="ghost"
                  onClick={() => void setOrder(members.filter((x) => x.fileId !== m.fileId))}
                >
                  {t('collections.remove')}
                </button>
              </span>
            </li>
          );
        })}
      </ol>
      <form
        class="row share"
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            const shareUsers = emails
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean)
              .map((email) => ({ email }));
            const answer = await api<{ message: string; links?: { email: string; url: string }[] }>(
              'POST',
              `/v1/collection/${id}/share`,
              { sender: { name: 'Tessera' }, shareUsers },
            );
            setLinks(answer.links ?? []);
            setMessage(answer.message);
          } catch (err) {
            setMessage(reason(err));
          }
        }}
      >
        <label for="share-recipients">{t('collections.shareTo')}</label>
        <input id="share-recipients" value={emails} onInput={(e) => setEmails((e.target as HTMLInputElement).value)} />
        <button type="submit">{t('collections.share')}</button>
      </form>
      {links.length > 0 && (
        <div class="share-links">
          <p>{t('collections.shared')}</p>
          <ul>
            {links.map((l) => (
              <li key={l.url}>
                {l.email}: <a href={l.url}>{l.url.replace(/\?.*/, '')}</a>
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}
