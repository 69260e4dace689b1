import { useEffect, useState } from 'preact/hooks';
import { api, reason } from './api.ts';
import { dateTime, fileSize } from './format.ts';
import { t } from './messages.ts';
import { linkClick } from './router.ts';
import type { AssetRecord } from './search.ts';
import type { UploadQueue } from './upload.ts';

export interface LegacyAsset {
  objectId: string;
  fileId: string;
  originalFileId: string;
  filename?: string;
  versionNumber: number;
  currentVersion?: 'Y' | 'N';
  createdEpoch: number;
  lastUpdatedEpoch: number;
  createdBy?: string;
  lastUpdatedBy?: string;
  contentType?: string;
  fileSizeInBytes?: number;
  renditions?: Record<string, unknown>;
  renditionsState?: string | null;
  /** `pending` until the upload's bytes arrive. */
  contentState?: string | null;
  metadataTemplateId?: string;
  technicalMetadata?: Record<string, unknown>;
  fileState?: string;
  metadataDeletedEpoch?: number | null;
  deletedBy?: string;
}

/** Every version, newest first; an older one is restored by uploading its content as a new version. */
export function Versions({ asset, uploads }: { asset: LegacyAsset; uploads: UploadQueue }) {
  const [versions, setVersions] = useState<LegacyAsset[] | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  useEffect(() => {
    void api<LegacyAsset[]>('GET', `/v1/asset/${asset.objectId}/version`).then(setVersions, () => setVersions([]));
  }, [asset.objectId, asset.lastUpdatedEpoch]);
  if (!versions) return <p class="muted">{t('app.loading')}</p>;
  const restore = async (v: LegacyAsset) => {
    setBusy(v.objectId);
    setMessage(null);
    try {
      // The old version's bytes, uploaded again as the newest version (metadata and security are inherited).
      const { presignedURL } = await api<{ presignedURL: string }>('GET', `/v1/asset/${v.objectId}/content`);
      const response = await fetch(presignedURL);
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const blob = await response.blob();
      const filename = v.filename ?? asset.filename ?? 'file';
      uploads.add(
        [{ file: new File([blob], filename, { type: v.contentType || blob.type }), path: filename }],
        asset.originalFileId,
      );
      setMessage(t('asset.versionRestoring', { n: v.versionNumber }));
    } catch (e) {
      setMessage(t('common.error', { reason: reason(e) }));
    } finally {
      setBusy(null);
    }
  };
  return (
    <div>
      {message && (
        <p class="notice" role="status">
          {message}
        </p>
      )}
      <ol class="versions" reversed>
        {[...versions]
          .sort((a, b) => b.versionNumber - a.versionNumber)
          .map((v) => (
            <li key={v.fileId} data-version={v.versionNumber}>
              <div>
                <a
                  href={`/app/asset/${v.objectId}`}
                  aria-current={v.objectId === asset.objectId ? 'page' : undefined}
                  onClick={(e) => linkClick(e, `/app/asset/${v.objectId}`)}
                >
                  {t('asset.version', { n: v.versionNumber })}
                </a>
                {v.currentVersion === 'Y' && <span class="badge">{t('asset.current')}</span>}
              </div>
              <div class="muted small">
                {v.filename} · {fileSize(v.fileSizeInBytes)} · {dateTime(v.createdEpoch)}
              </div>
              {v.currentVersion !== 'Y' && (
                <button type="button" class="small-button" disabled={busy !== null} onClick={() => void restore(v)}>
                  {t('asset.versionRestore')}
                </button>
              )}
            </li>
          ))}
      </ol>
    </div>
  );
}

const RELATIONSHIPS = ['child', 'derivative', 'placed-graphic'] as const;

interface Link {
  primaryId: string;
  secondaryId: string;
  linkType: string;
  relationshipId: string;
}

const names = new Map<string, Promise<string>>();

function assetName(id: string): Promise<string> {
  let name = names.get(id);
  if (!name) {
    name = api<LegacyAsset>('GET', `/v1/asset/${encodeURIComponent(id)}`).then(
      (a) => a.filename ?? id,
      () => id,
    );
    names.set(id, name);
  }
  return name;
}

/** Related assets: the list (either side), a search to relate another asset by name, and removal. */
export function Relations({ asset }: { asset: LegacyAsset }) {
  const [links, setLinks] = useState<(Link & { other: string; name: string })[] | null>(null);
  const [type, setType] = useState<(typeof RELATIONSHIPS)[number]>('child');
  const [text, setText] = useState('');
  const [found, setFound] = useState<AssetRecord[]>([]);
  const [message, setMessage] = useState<string | null>(null);
  const load = async () => {
    try {
      const list = await api<Link[]>('GET', `/v1/asset/${asset.objectId}/link`);
      const self = new Set([asset.objectId, asset.fileId, asset.originalFileId]);
      setLinks(
        await Promise.all(
          list.map(async (l) => {
            const other = self.has(l.primaryId) ? l.secondaryId : l.primaryId;
            return { ...l, other, name: await assetName(other) };
          }),
        ),
      );
    } catch {
      setLinks([]);
    }
  };
  useEffect(() => void load(), [asset.objectId]);
  useEffect(() => {
    if (text.trim().length < 2) {
      setFound([]);
      return;
    }
    const controller = new AbortController();
    const timer = setTimeout(() => {
      void api<{ result: AssetRecord[] }>(
        'POST',
        '/v1/search/keyword',
        {
          searchTerm: [`${text.trim().replace(/[*"]/g, '')}*`],
          limit: 8,
          excludes: ['technicalMetadata', 'metadata', 'metadataDenormalized', 'securityDenormalized'],
        },
        controller.signal,
      ).then(
        (answer) => setFound(answer.result.filter((r) => r.objectId !== asset.objectId)),
        () => undefined,
      );
    }, 200);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [text]);
  /** Relates (POST) or unrelates (PATCH, on the link's primary side) an asset. */
  const change = async (method: 'POST' | 'PATCH', id: string, linkType: string, primary = asset.objectId) => {
    try {
      const results = await api<{ status: string; message: string }[]>(method, `/v1/asset/${primary}/link`, {
        secondaryIds: [{ id, linkType }],
      });
      const failed = results.find((r) => r.status !== 'success');
      setMessage(failed ? failed.message : null);
      if (!failed) setText('');
      await load();
    } catch (err) {
      setMessage(reason(err));
    }
  };
  return (
    <div class="relations">
      {!links ? (
        <p class="muted">{t('app.loading')}</p>
      ) : links.length === 0 ? (
        <p class="muted">{t('asset.noRelations')}</p>
      ) : (
        <ul class="plain links">
          {links.map((l) => (
            <li key={l.relationshipId}>
              <span class="badge">{t(`asset.relation.${l.linkType.replace('_', '-')}` as 'asset.relation.child')}</span>
              <a href={`/app/asset/${l.other}`} onClick={(e) => linkClick(e, `/app/asset/${l.other}`)}>
                {l.name}
              </a>
              <button
                type="button"
                class="ghost icon"
                aria-label={t('asset.unrelate', { name: l.name })}
                onClick={() => void change('PATCH', l.secondaryId, l.linkType, l.primaryId)}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <div class="relate">
        <label for="relate-type">{t('asset.relationType')}</label>
        <select
          id="relate-type"
          value={type}
          onChange={(e) => setType((e.target as HTMLSelectElement).value as typeof type)}
        >
          {RELATIONSHIPS.map((r) => (
            <option key={r} value={r}>
              {t(`asset.relation.${r}` as 'asset.relation.child')}
            </option>
          ))}
        </select>
        <label for="relate-search">{t('asset.addRelation')}</label>
        <input
          id="relate-search"
          type="search"
          autocomplete="off"
          value={text}
          onInput={(e) => setText((e.target as HTMLInputElement).value)}
        />
        {found.length > 0 && (
          <ul class="plain found" aria-label={t('asset.relateResults')}>
            {found.map((r) => (
              <li key={r.objectId}>
                <button type="button" class="link" onClick={() => void change('POST', r.objectId, type)}>
                  {t('asset.relateTo', { name: r.filename ?? r.objectId })}
                </button>
              </li>
            ))}
          </ul>
        )}
      </div>
      {message && (
        <p class="error" role="alert">
          {message}
        </p>
      )}
    </div>
  );
}

export function Technical({ asset }: { asset: LegacyAsset }) {
  const rows: [string, string][] = [
    [t('library.col.type'), asset.contentType ?? ''],
    [t('library.col.size'), fileSize(asset.fileSizeInBytes)],
  ];
  const walk = (prefix: string, value: unknown) => {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value)) walk(prefix ? `${prefix} › ${k}` : k, v);
    } else if (value !== null && value !== undefined && value !== '')
      rows.push([prefix, Array.isArray(value) ? value.join(', ') : String(value)]);
  };
  walk('', asset.technicalMetadata ?? {});
  const shown = rows.filter(([, v]) => v !== '');
  if (shown.length === 0) return <p class="muted">{t('asset.noTechnical')}</p>;
  return (
    <dl class="technical">
      {shown.slice(0, 300).map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

const people = new Map<string, Promise<string>>();

/** A user's name as the caller may see it (`GET /v1/user/{id}`), or "someone" when they may not. */
function personName(id: string | undefined): Promise<string> {
  if (!id) return Promise.resolve(t('asset.someone'));
  let name = people.get(id);
  if (!name) {
    name = api<{ userName: string; firstName?: string; lastName?: string; friendlyName?: string }>(
      'GET',
      `/v1/user/${encodeURIComponent(id)}`,
    ).then(
      (u) => u.friendlyName || [u.firstName, u.lastName].filter(Boolean).join(' ') || u.userName,
      () => t('asset.someone'),
    );
    people.set(id, name);
  }
  return name;
}

interface Event {
  at: number;
  text: string;
}

/** What the API records about the asset: each version's upload, the last change, the move to the recycle bin. */
export function History({ asset }: { asset: LegacyAsset }) {
  const [events, setEvents] = useState<Event[] | null>(null);
  useEffect(() => {
    let cancelled = false;
    (async () => {
      const versions = await api<LegacyAsset[]>('GET', `/v1/asset/${asset.objectId}/version`).catch(() => [asset]);
      const out: Event[] = [];
      for (const v of versions) {
        out.push({
          at: v.createdEpoch,
          text: t(v.versionNumber === 1 ? 'history.created' : 'history.version', {
            n: v.versionNumber,
            who: await personName(v.createdBy),
            name: v.filename ?? '',
          }),
        });
      }
      const current = versions.find((v) => v.currentVersion === 'Y') ?? asset;
      if (current.lastUpdatedEpoch > current.createdEpoch + 1000)
        out.push({
          at: current.lastUpdatedEpoch,
          text: t('history.updated', { who: await personName(current.lastUpdatedBy) }),
        });
      if (asset.metadataDeletedEpoch)
        out.push({
          at: asset.metadataDeletedEpoch,
          text: t('history.deleted', { who: await personName(asset.deletedBy) }),
        });
      if (!cancelled) setEvents(out.sort((a, b) => b.at - a.at));
    })();
    return () => {
      cancelled = true;
    };
  }, [asset.objectId, asset.lastUpdatedEpoch, asset.metadataDeletedEpoch]);
  if (!events) return <p class="muted">{t('app.loading')}</p>;
  if (events.length === 0) return <p class="muted">{t('asset.noHistory')}</p>;
  return (
    <ol class="history">
      {events.map((e, i) => (
        <li key={i}>
          <time dateTime={new Date(e.at).toISOString()}>{dateTime(e.at)}</time> <span>{e.text}</span>
        </li>
      ))}
    </ol>
  );
}
