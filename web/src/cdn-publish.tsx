import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, reason } from './api.ts';
import { t } from './messages.ts';
import { linkClick } from './router.ts';

/** What the library needs of a pull zone (GET /v1/cdn/pullzones; docs/cdn.md). */
interface Zone {
  id: number;
  name: string;
  url: string;
  edgePathPrefix: string;
  originType: string;
  enabled: boolean;
  hostnames: string[];
}

export interface PublishTarget {
  objectId: string;
  filename?: string | null;
}

/**
 * The asset-store zones the caller may publish to; 'forbidden' for a caller without CDN Management
 * (the controls are then not offered at all), null while loading.
 */
function useAssetZones(): Zone[] | 'forbidden' | null {
  const [zones, setZones] = useState<Zone[] | 'forbidden' | null>(null);
  useEffect(() => {
    let live = true;
    api<{ items: Zone[] }>('GET', '/v1/cdn/pullzones')
      .then((list) => live && setZones(list.items.filter((z) => z.originType === 'assets')))
      .catch((e) => live && setZones(e instanceof ApiError && e.status === 403 ? 'forbidden' : []));
    return () => {
      live = false;
    };
  }, []);
  return zones;
}

/**
 * Where a published asset is served: the zone's CNAME or first hostname, otherwise the zone's path
 * on any edge (the same base POST /v1/cdn/pullzones/{id}/sign uses). The file name is optional.
 */
export function cdnUrl(zone: Zone, target: PublishTarget): string {
  const tail = `${target.objectId}${target.filename ? `/${encodeURIComponent(target.filename)}` : ''}`;
  if (zone.url) return `${zone.url.replace(/\/+$/, '')}/${tail}`;
  if (zone.hostnames[0]) return `https://${zone.hostnames[0]}/${tail}`;
  return `${zone.edgePathPrefix}${tail}`;
}

/** Choose a zone, publish or unpublish the assets, and show where they are served. */
function PublishForm({ targets, zones, idPrefix }: { targets: PublishTarget[]; zones: Zone[]; idPrefix: string }) {
  const [zoneId, setZoneId] = useState(String(zones.find((z) => z.enabled)?.id ?? zones[0]?.id ?? ''));
  const [result, setResult] = useState<{ published: boolean; zone: Zone } | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const zone = zones.find((z) => String(z.id) === zoneId);
  if (zones.length === 0)
    return (
      <p class="muted" id={`${idPrefix}-none`}>
        {t('cdnPublish.noZone')}{' '}
        <a href="/app/admin/cdn" onClick={(e) => linkClick(e, '/app/admin/cdn')}>
          {t('cdnPublish.toAdmin')}
        </a>
      </p>
    );
  const run = async (publish: boolean) => {
    if (!zone) return;
    setBusy(true);
    setProblem(null);
    setResult(null);
    try {
      await api('POST', `/v1/cdn/${publish ? 'publish' : 'unpublish'}`, {
        assets: targets.map((x) => x.objectId),
        pullZoneId: zone.id,
      });
      setResult({ published: publish, zone });
    } catch (e) {
      // A refused asset is named by its index (body.assets[i]): say which one.
      const item = e instanceof ApiError ? e.details.find((d) => /assets\[(\d+)\]/.test(d.field)) : undefined;
      const index = item ? Number(/assets\[(\d+)\]/.exec(item.field)![1]) : -1;
      const named = targets[index];
      setProblem(
        named
          ? t('cdnPublish.refusedAsset', { name: named.filename ?? named.objectId, reason: item!.message })
          : reason(e),
      );
    } finally {
      setBusy(false);
    }
  };
  const urls = result?.published ? targets.map((x) => cdnUrl(result.zone, x)) : [];
  return (
    <form
      id={`${idPrefix}-form`}
      class="stack cdn-publish"
      onSubmit={(e) => {
        e.preventDefault();
        void run(true);
      }}
    >
      <div class="row">
        <label for={`${idPrefix}-zone`}>{t('cdnPublish.zone')}</label>
        <select
          id={`${idPrefix}-zone`}
          value={zoneId}
          onChange={(e) => setZoneId((e.target as HTMLSelectElement).value)}
        >
          {zones.map((z) => (
            <option key={z.id} value={String(z.id)}>
              {z.enabled ? z.name : t('cdnPublish.disabledZone', { name: z.name })}
            </option>
          ))}
        </select>
        <button type="submit" class="primary" id={`${idPrefix}-run`} disabled={busy}>
          {t('cdnPublish.run', { count: targets.length })}
        </button>
        <button type="button" id={`${idPrefix}-unpublish`} disabled={busy} onClick={() => void run(false)}>
          {t('cdnPublish.unpublish', { count: targets.length })}
        </button>
      </div>
      {problem && (
        <p class="error" role="alert" id={`${idPrefix}-problem`}>
          {t('common.error', { reason: problem })}
        </p>
      )}
      {result && (
        <p class="notice" role="status" id={`${idPrefix}-result`}>
          {t(result.published ? 'cdnPublish.published' : 'cdnPublish.unpublished', {
            count: targets.length,
            name: result.zone.name,
          })}
        </p>
      )}
      {urls.length === 1 && (
        <div class="field">
          <label for={`${idPrefix}-url`}>{t('cdnPublish.url')}</label>
          <input
            id={`${idPrefix}-url`}
            class="mono"
            readOnly
            value={urls[0]}
            onFocus={(e) => (e.target as HTMLInputElement).select()}
          />
        </div>
      )}
      {urls.length > 1 && (
        <div class="field">
          <label for={`${idPrefix}-url`}>{t('cdnPublish.urls', { count: urls.length })}</label>
          <textarea
            id={`${idPrefix}-url`}
            class="mono"
            readOnly
            rows={Math.min(6, urls.length)}
            value={urls.join('\n')}
            onFocus={(e) => (e.target as HTMLTextAreaElement).select()}
          />
        </div>
      )}
      {urls.length > 0 && !result?.zone.url && !result?.zone.hostnames[0] && (
        <p class="hint">{t('cdnPublish.edgePath')}</p>
      )}
    </form>
  );
}

/** On the asset page: a "Publish to the CDN" toggle and its form; nothing for a caller without CDN Management. */
export function AssetCdnPublish({ target, disabled }: { target: PublishTarget; disabled: boolean }) {
  const zones = useAssetZones();
  const [open, setOpen] = useState(false);
  if (zones === null || zones === 'forbidden') return null;
  return (
    <>
      <button
        type="button"
        id="cdn-publish"
        disabled={disabled}
        aria-expanded={open}
        aria-controls="cdn-publish-panel"
        onClick={() => setOpen(!open)}
      >
        {t('cdnPublish.button')}
      </button>
      {open && (
        <div id="cdn-publish-panel" class="cdn-publish-panel">
          <PublishForm targets={[target]} zones={zones} idPrefix="cdn-publish" />
        </div>
      )}
    </>
  );
}

/** In the library's selection bar: the same, for every selected asset, in a dialog. */
export function SelectionCdnPublish({ ids }: { ids: string[] }) {
  const zones = useAssetZones();
  const [open, setOpen] = useState(false);
  const dialog = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (open) dialog.current?.querySelector<HTMLElement>('select, button')?.focus();
  }, [open]);
  if (zones === null || zones === 'forbidden') return null;
  return (
    <>
      <button type="button" id="cdn-publish-selection" onClick={() => setOpen(true)}>
        {t('cdnPublish.button')}
      </button>
      {open && (
        <div class="modal-backdrop">
          <div
            class="modal"
            role="dialog"
            aria-modal="true"
            aria-labelledby="cdn-selection-title"
            ref={dialog}
            onKeyDown={(e) => e.key === 'Escape' && setOpen(false)}
          >
            <h2 id="cdn-selection-title">{t('cdnPublish.title', { count: ids.length })}</h2>
            <PublishForm targets={ids.map((objectId) => ({ objectId }))} zones={zones} idPrefix="cdn-selection" />
            <div class="row">
              <button type="button" id="cdn-selection-close" onClick={() => setOpen(false)}>
                {t('cdnPublish.close')}
              </button>
            </div>
          </div>
        </div>
      )}
    </>
  );
}
