import { useEffect, useState } from 'preact/hooks';
import { api, reason } from '../api.ts';
import { fileSize } from '../format.ts';
import { t } from '../messages.ts';
import { linkClick } from '../router.ts';
import { WatchedAction } from './action-view.tsx';
import { Ceiling, when } from './common.tsx';
import type { SectionProps } from './loader.tsx';

interface Item {
  objectId: string;
  originalFileId: string;
  filename: string;
  objectType: string;
  versionNumber: number;
  fileSizeInBytes: number | null;
  metadataDeletedEpoch: number;
  deletedBy: string | null;
  deletedByName: string | null;
  mayRestore: boolean;
  mayPurge: boolean;
}

interface Page {
  items: Item[];
  nextCursor: string | null;
  purge: { allowed: boolean };
}

/**
 * The recycle bin: deleted assets the caller may view (GET /v1/asset/recycle-bin), restored one by
 * one (POST /v1/asset/{id}/delete {action: undelete}) or purged for good (POST /v1/asset/purge, an
 * Action watched here). What the caller may not do is said up front: the list names, per asset,
 * whether they may restore or purge it.
 */
export default function RecycleBin(_: SectionProps) {
  const [items, setItems] = useState<Item[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [mayPurge, setMayPurge] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [confirm, setConfirm] = useState<'selected' | 'all' | null>(null);
  const [purgeAction, setPurgeAction] = useState<string | null>(null);
  const load = async (cursor?: string) => {
    try {
      const query = new URLSearchParams({ limit: '50' });
      if (cursor) query.set('cursor', cursor);
      const page = await api<Page>('GET', `/v1/asset/recycle-bin?${query}`);
      setItems((old) => (cursor ? [...(old ?? []), ...page.items] : page.items));
      setNext(page.nextCursor);
      setMayPurge(page.purge.allowed);
      if (!cursor) setSelected(new Set());
    } catch (e) {
      setError(reason(e));
    }
  };
  useEffect(() => void load(), []);
  const restore = async (item: Item) => {
    setNotice(null);
    try {
      await api('POST', `/v1/asset/${item.objectId}/delete`, { action: 'undelete' });
      setNotice(t('bin.restored', { name: item.filename }));
      setItems((old) => old?.filter((i) => i.objectId !== item.objectId) ?? null);
    } catch (e) {
      setNotice(t('common.error', { reason: reason(e) }));
    }
  };
  const purge = async (all: boolean) => {
    setConfirm(null);
    setNotice(null);
    try {
      const started = await api<{ actionId: string }>(
        'POST',
        '/v1/asset/purge',
        all ? { all: true } : { objectIds: [...selected] },
      );
      setPurgeAction(started.actionId);
    } catch (e) {
      setNotice(t('common.error', { reason: reason(e) }));
    }
  };
  const purgeable = items?.filter((i) => i.mayPurge) ?? [];
  const anyRestorable = items?.some((i) => i.mayRestore) ?? true;
  const toggle = (id: string, on: boolean) =>
    setSelected((old) => {
      const copy = new Set(old);
      if (on) copy.add(id);
      else copy.delete(id);
      return copy;
    });
  return (
    <>
      <h1>{t('admin.section.recycleBin')}</h1>
      <p class="hint">{t('bin.lead')}</p>
      {!mayPurge && items && <Ceiling what="bin.purgeWhat" privilege="privilege.purge" />}
      {items && items.length > 0 && !anyRestorable && (
        <p class="ceiling" role="note">
          {t('bin.restoreCeiling')}
        </p>
      )}
      {error && (
        <p class="error" role="alert">
          {t('common.error', { reason: error })}
        </p>
      )}
      <div aria-live="polite">
        {notice && (
          <p class="notice" id="bin-notice">
            {notice}
          </p>
        )}
      </div>
      {purgeAction && (
        <section class="card" aria-labelledby="purge-title">
          <h2 id="purge-title">{t('bin.purging')}</h2>
          <WatchedAction key={purgeAction} id={purgeAction} onDone={() => void load()} />
        </section>
      )}
      {items === null && !error && (
        <p class="muted" role="status">
          {t('admin.loading')}
        </p>
      )}
      {items && items.length === 0 && <p class="muted">{t('bin.empty')}</p>}
      {items && items.length > 0 && (
        <section class="card" aria-labelledby="bin-title">
          <h2 id="bin-title">{t('bin.listTitle')}</h2>
          {mayPurge && (
            <div class="row">
              <button
                type="button"
                class="danger"
                id="purge-selected"
                disabled={selected.size === 0}
                onClick={() => setConfirm('selected')}
              >
                {t('bin.purgeSelected', { count: selected.size })}
              </button>
              <button type="button" class="danger" id="purge-all" onClick={() => setConfirm('all')}>
                {t('bin.purgeAll')}
              </button>
            </div>
          )}
          {confirm && (
            <div class="confirm" role="alertdialog" aria-labelledby="purge-question">
              <p id="purge-question">
                {confirm === 'all' ? t('bin.purgeAllConfirm') : t('bin.purgeConfirm', { count: selected.size })}
              </p>
              <div class="row">
                <button type="button" class="danger" id="purge-yes" onClick={() => void purge(confirm === 'all')}>
                  {t('bin.purgeYes')}
                </button>
                <button type="button" onClick={() => setConfirm(null)}>
                  {t('admin.cancel')}
                </button>
              </div>
            </div>
          )}
          <div class="table-scroll">
            <table id="recycle-bin">
              <thead>
                <tr>
                  {mayPurge && (
                    <td>
                      <input
                        type="checkbox"
                        id="bin-select-all"
                        aria-label={t('bin.selectAll')}
                        checked={purgeable.length > 0 && purgeable.every((i) => selected.has(i.objectId))}
                        disabled={purgeable.length === 0}
                        onChange={(e) =>
                          setSelected(
                            (e.target as HTMLInputElement).checked
                              ? new Set(purgeable.map((i) => i.objectId))
                              : new Set(),
                          )
                        }
                      />
                    </td>
                  )}
                  <th scope="col">{t('bin.col.name')}</th>
                  <th scope="col" class="col-optional">
                    {t('bin.col.version')}
                  </th>
                  <th scope="col" class="col-optional">
                    {t('bin.col.size')}
                  </th>
                  <th scope="col">{t('bin.col.deleted')}</th>
                  <th scope="col" class="col-optional">
                    {t('bin.col.by')}
                  </th>
                  <td />
                </tr>
              </thead>
              <tbody>
                {items.map((item) => (
                  <tr key={item.objectId}>
                    {mayPurge && (
                      <td>
                        <input
                          type="checkbox"
                          aria-label={t('bin.select', { name: item.filename })}
                          checked={selected.has(item.objectId)}
                          disabled={!item.mayPurge}
                          onChange={(e) => toggle(item.objectId, (e.target as HTMLInputElement).checked)}
                        />
                      </td>
                    )}
                    <th scope="row">
                      <a
                        href={`/app/asset/${item.objectId}`}
                        onClick={(e) => linkClick(e, `/app/asset/${item.objectId}`)}
                      >
                        {item.filename}
                      </a>
                    </th>
                    <td class="col-optional">{item.versionNumber}</td>
                    <td class="col-optional">{fileSize(item.fileSizeInBytes)}</td>
                    <td>{when(new Date(item.metadataDeletedEpoch).toISOString())}</td>
                    <td class="col-optional">{item.deletedByName ?? t('bin.unknownUser')}</td>
                    <td>
                      {item.mayRestore ? (
                        <button
                          type="button"
                          class="restore"
                          aria-label={t('bin.restore', { name: item.filename })}
                          onClick={() => void restore(item)}
                        >
                          {t('bin.restoreShort')}
                        </button>
                      ) : (
                        <span class="small muted">{t('bin.noRestore')}</span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {next && (
            <button type="button" onClick={() => void load(next)}>
              {t('admin.more')}
            </button>
          )}
        </section>
      )}
    </>
  );
}
