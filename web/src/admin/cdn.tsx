import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, reason } from '../api.ts';
import { fileSize } from '../format.ts';
import { t, type MessageKey } from '../messages.ts';
import { linkClick, navigate } from '../router.ts';
import { CdnStats, ScrollRegion } from './cdn-stats.tsx';
import { Ceiling, EditorActions, FieldError, FormError, isForbidden, SecretBox, TextField, when } from './common.tsx';
import type { SectionProps } from './loader.tsx';
import './cdn.css';

/** CDN: pull zones with every setting, purge, signed URLs, publishing assets and statistics (docs/cdn.md). */
export default function Cdn({ id }: SectionProps) {
  return id ? <ZonePage id={id} /> : <ZoneList />;
}

export interface Zone {
  id: number;
  name: string;
  url: string;
  edgePathPrefix: string;
  originType: string;
  originUrl: string | null;
  enabled: boolean;
  hostnames: string[];
  filesStored: number;
  monthlyBandwidthUsed: number;
  zoneSecurityEnabled: boolean;
  zoneSecurityIncludeHashRemoteIP: boolean;
  dateCreated: string;
  dateModified: string;
  [field: string]: unknown;
}

type Load<T> =
  | { state: 'loading' }
  | { state: 'forbidden' }
  | { state: 'error'; message: string }
  | { state: 'ready'; value: T };

/** The API's field problems by zone field: `body.allowedReferrers[2]` and `/body/requestLimit` → the field. */
export function zoneFieldErrors(error: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (error instanceof ApiError)
    for (const d of error.details) {
      const name = d.field.replace(/^\/?body[./]?/, '').match(/^\w+/)?.[0];
      if (name) out[name] ??= d.message;
    }
  return out;
}

function CdnCeiling() {
  return <Ceiling what="cdn.what" privilege="privilege.cdn_management" />;
}

// --- the list of zones and the new-zone form ---

/** Said on the list after a zone was deleted from its page. */
let deletedNotice: string | null = null;

function ZoneList() {
  const [zones, setZones] = useState<Load<Zone[]>>({ state: 'loading' });
  useEffect(() => {
    api<{ items: Zone[] }>('GET', '/v1/cdn/pullzones').then(
      (answer) => setZones({ state: 'ready', value: answer.items }),
      (error) => setZones(isForbidden(error) ? { state: 'forbidden' } : { state: 'error', message: reason(error) }),
    );
  }, []);
  const [notice] = useState(() => {
    const n = deletedNotice;
    deletedNotice = null;
    return n;
  });
  return (
    <>
      <h1>{t('admin.section.cdn')}</h1>
      <p class="hint">{t('cdn.lead')}</p>
      {zones.state === 'loading' && (
        <p class="muted" role="status">
          {t('admin.loading')}
        </p>
      )}
      {zones.state === 'forbidden' && <CdnCeiling />}
      {zones.state === 'error' && (
        <p class="error" role="alert">
          {t('common.error', { reason: zones.message })}
        </p>
      )}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {zones.state === 'ready' && (
        <>
          <section class="card" aria-labelledby="zones-title">
            <h2 id="zones-title">{t('cdn.zones')}</h2>
            {zones.value.length === 0 ? (
              <p class="muted">{t('cdn.none')}</p>
            ) : (
              <ScrollRegion label={t('cdn.zones')}>
                <table id="zones">
                  <thead>
                    <tr>
                      <th scope="col">{t('cdn.col.name')}</th>
                      <th scope="col">{t('cdn.col.origin')}</th>
                      <th scope="col" class="col-optional">
                        {t('cdn.col.reach')}
                      </th>
                      <th scope="col">{t('cdn.col.state')}</th>
                      <th scope="col" class="col-optional">
                        {t('cdn.col.published')}
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {zones.value.map((z) => (
                      <tr key={z.id}>
                        <th scope="row">
                          <a
                            href={`/app/admin/cdn/${z.id}`}
                            aria-label={t('cdn.open', { name: z.name })}
                            onClick={(e) => linkClick(e, `/app/admin/cdn/${z.id}`)}
                          >
                            {z.name}
                          </a>
                        </th>
                        <td class="mono">{z.originType === 'url' ? z.originUrl : t('cdn.origin.assets')}</td>
                        <td class="col-optional mono">{[z.edgePathPrefix, ...z.hostnames].join(' ')}</td>
                        <td>
                          <span class={`state ${z.enabled ? 'ok' : 'bad'}`}>
                            {z.enabled ? t('cdn.enabled') : t('cdn.disabled')}
                          </span>
                        </td>
                        <td class="col-optional">{z.originType === 'assets' ? z.filesStored : '—'}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </ScrollRegion>
            )}
          </section>
          <NewZone />
        </>
      )}
    </>
  );
}

function NewZone() {
  const [name, setName] = useState('');
  const [originType, setOriginType] = useState<'assets' | 'url'>('assets');
  const [originUrl, setOriginUrl] = useState('');
  const [region, setRegion] = useState('de');
  const [errors, setErrors] = useState<Record<string, string>>({});
  return (
    <section class="card" aria-labelledby="new-zone-title">
      <form
        class="stack"
        id="zone-new"
        onSubmit={async (e) => {
          e.preventDefault();
          setErrors({});
          try {
            const body: Record<string, unknown> = { name, region, originType };
            if (originType === 'url') body.originUrl = originUrl;
            const zone = await api<Zone>('POST', '/v1/cdn/pullzones', body);
            navigate(`/app/admin/cdn/${zone.id}`);
          } catch (error) {
            const fields = zoneFieldErrors(error);
            setErrors(Object.keys(fields).length > 0 ? fields : { form: reason(error) });
          }
        }}
      >
        <h2 id="new-zone-title">{t('cdn.new')}</h2>
        <TextField
          id="zone-new-name"
          label={t('cdn.f.name')}
          value={name}
          maxLength={100}
          onInput={setName}
          error={errors.name}
        />
        <SelectField
          id="zone-new-region"
          label="cdn.f.region"
          value={region}
          options={REGIONS}
          onChange={setRegion}
          error={errors.region}
        />
        <SelectField
          id="zone-new-originType"
          label="cdn.f.originType"
          value={originType}
          options={ORIGIN_TYPES}
          onChange={(v) => setOriginType(v as 'assets' | 'url')}
          error={errors.originType}
        />
        {originType === 'url' && (
          <TextField
            id="zone-new-originUrl"
            label={t('cdn.f.originUrl')}
            value={originUrl}
            onInput={setOriginUrl}
            error={errors.originUrl}
          />
        )}
        <FormError message={errors.form} />
        <div class="row">
          <button type="submit" class="primary" id="zone-create">
            {t('cdn.create')}
          </button>
        </div>
      </form>
    </section>
  );
}

const REGIONS: [string, MessageKey][] = [
  ['de', 'cdn.region.de'],
  ['ny', 'cdn.region.ny'],
  ['la', 'cdn.region.la'],
  ['sg', 'cdn.region.sg'],
];
const ORIGIN_TYPES: [string, MessageKey][] = [
  ['assets', 'cdn.origin.assets'],
  ['url', 'cdn.origin.url'],
];

function SelectField({
  id,
  label,
  value,
  options,
  onChange,
  error,
}: {
  id: string;
  label: MessageKey;
  value: string;
  options: [string, MessageKey][];
  onChange: (value: string) => void;
  error?: string;
}) {
  return (
    <div class="field">
      <label for={id}>{t(label)}</label>
      <select
        id={id}
        value={value}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        onChange={(e) => onChange((e.target as HTMLSelectElement).value)}
      >
        {options.map(([v, l]) => (
          <option key={v} value={v}>
            {t(l)}
          </option>
        ))}
      </select>
      <FieldError id={`${id}-error`} message={error} />
    </div>
  );
}

// --- one zone: settings, purge, signed URLs, publishing, statistics ---

function ZonePage({ id }: { id: string }) {
  const [zone, setZone] = useState<Load<Zone>>({ state: 'loading' });
  const [notice, setNotice] = useState<string | null>(null);
  const load = () =>
    api<Zone>('GET', `/v1/cdn/pullzones/${encodeURIComponent(id)}`).then(
      (value) => setZone({ state: 'ready', value }),
      (error) => setZone(isForbidden(error) ? { state: 'forbidden' } : { state: 'error', message: reason(error) }),
    );
  useEffect(() => void load(), [id]);
  const back = (
    <a href="/app/admin/cdn" onClick={(e) => linkClick(e, '/app/admin/cdn')}>
      {t('admin.back', { name: t('cdn.zones') })}
    </a>
  );
  if (zone.state !== 'ready')
    return (
      <>
        <p>{back}</p>
        <h1>{t('admin.section.cdn')}</h1>
        {zone.state === 'loading' && (
          <p class="muted" role="status">
            {t('admin.loading')}
          </p>
        )}
        {zone.state === 'forbidden' && <CdnCeiling />}
        {zone.state === 'error' && (
          <p class="error" role="alert">
            {t('common.error', { reason: zone.message })}
          </p>
        )}
      </>
    );
  const z = zone.value;
  return (
    <>
      <p>{back}</p>
      <h1>{t('cdn.zoneTitle', { name: z.name })}</h1>
      <p class="hint">
        {t('cdn.reach', { prefix: z.edgePathPrefix })}{' '}
        {t('cdn.meta', { created: when(z.dateCreated), used: fileSize(z.monthlyBandwidthUsed) })}
      </p>
      {notice && (
        <p class="notice" role="status" id="zone-notice">
          {notice}
        </p>
      )}
      <div class="cdn-grid">
        <ZoneSettings
          zone={z}
          onSaved={(value) => {
            setZone({ state: 'ready', value });
            setNotice(t('cdn.saved', { name: value.name }));
          }}
        />
        <div class="cdn-side">
          <Purge zone={z} />
          <SignUrl zone={z} />
          {z.originType === 'assets' && <Publish zone={z} onDone={() => void load()} />}
        </div>
      </div>
      <CdnStats zoneId={z.id} />
    </>
  );
}

/** How each zone setting is edited; every writable field of the API's zone (cdn.schemas.ts). */
type Kind = 'bool' | 'int' | 'ttl' | 'text' | 'nullText' | 'list' | 'region' | 'origin';
const GROUPS: { legend: MessageKey; fields: [string, Kind][] }[] = [
  {
    legend: 'cdn.g.general',
    fields: [
      ['name', 'text'],
      ['enabled', 'bool'],
      ['region', 'region'],
      ['enableGeoReplication', 'bool'],
      ['url', 'text'],
      ['hostnames', 'list'],
    ],
  },
  {
    legend: 'cdn.g.origin',
    fields: [
      ['originType', 'origin'],
      ['originUrl', 'nullText'],
      ['originHostHeader', 'nullText'],
    ],
  },
  {
    legend: 'cdn.g.caching',
    fields: [
      ['cacheControlMaxAgeOverride', 'ttl'],
      ['cacheControlPublicMaxAgeOverride', 'ttl'],
      ['ignoreQueryStrings', 'bool'],
      ['enableWebpVary', 'bool'],
      ['enableAvifVary', 'bool'],
      ['useStaleWhileUpdating', 'bool'],
      ['useStaleWhileOffline', 'bool'],
      ['serveActiveContentInline', 'bool'],
    ],
  },
  {
    legend: 'cdn.g.access',
    fields: [
      ['allowedReferrers', 'list'],
      ['blockedReferrers', 'list'],
      ['blockedIPs', 'list'],
      ['blockedCountries', 'list'],
      ['enableGeoZoneUS', 'bool'],
      ['enableGeoZoneEU', 'bool'],
      ['enableGeoZoneAsia', 'bool'],
      ['enableGeoZoneSA', 'bool'],
      ['enableGeoZoneAF', 'bool'],
    ],
  },
  {
    legend: 'cdn.g.security',
    fields: [
      ['zoneSecurityEnabled', 'bool'],
      ['zoneSecurityIncludeHashRemoteIP', 'bool'],
      ['enableAccessControlOriginHeader', 'bool'],
      ['accessControlOriginHeaderExtensions', 'list'],
    ],
  },
  {
    legend: 'cdn.g.limits',
    fields: [
      ['monthlyBandwidthLimit', 'int'],
      ['requestLimit', 'int'],
      ['burstSize', 'int'],
      ['limitRateAfter', 'int'],
      ['limitRatePerSecond', 'int'],
    ],
  },
  {
    legend: 'cdn.g.optimizer',
    fields: [
      ['optimizerEnabled', 'bool'],
      ['optimizerEnableWebP', 'bool'],
      ['optimizerEnableAvif', 'bool'],
      ['optimizerImageQuality', 'int'],
      ['optimizerMaxWidth', 'int'],
      ['optimizerMinifyCSS', 'bool'],
      ['optimizerMinifyJavaScript', 'bool'],
    ],
  },
];
const KINDS = new Map(GROUPS.flatMap((g) => g.fields));

/** A zone's value as the form holds it: text for inputs, true/false for check boxes. */
function toForm(zone: Zone): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (const [field, kind] of KINDS) {
    const v = zone[field];
    if (kind === 'bool') out[field] = v === true;
    else if (kind === 'list') out[field] = ((v as string[] | undefined) ?? []).join('\n');
    else out[field] = v === null || v === undefined ? '' : String(v);
  }
  return out;
}

/** The form's value as the API takes it; a number that is not one is sent as typed, so the API names the field. */
function fromForm(field: string, value: string | boolean): unknown {
  const kind = KINDS.get(field)!;
  if (kind === 'bool') return value;
  const text = String(value).trim();
  if (kind === 'list')
    return text
      .split(/[\n,]/)
      .map((s) => s.trim())
      .filter(Boolean);
  if (kind === 'int' || kind === 'ttl') {
    if (text === '') return kind === 'ttl' ? null : 0;
    return /^\d+$/.test(text) ? Number(text) : text;
  }
  if (kind === 'nullText') return text === '' ? null : text;
  return text;
}

function ZoneSettings({ zone, onSaved }: { zone: Zone; onSaved: (zone: Zone) => void }) {
  const initial = toForm(zone);
  const [values, setValues] = useState(initial);
  const [errors, setErrors] = useState<Record<string, string>>({});
  useEffect(() => setValues(toForm(zone)), [zone]);
  const set = (field: string, value: string | boolean) => setValues((v) => ({ ...v, [field]: value }));
  return (
    <section class="card" aria-labelledby="settings-title">
      <form
        class="stack wide"
        id="zone-form"
        onSubmit={async (e) => {
          e.preventDefault();
          setErrors({});
          const body: Record<string, unknown> = {};
          for (const field of KINDS.keys())
            if (values[field] !== initial[field]) body[field] = fromForm(field, values[field]!);
          try {
            onSaved(await api<Zone>('PATCH', `/v1/cdn/pullzones/${zone.id}`, body));
          } catch (error) {
            const fields = zoneFieldErrors(error);
            setErrors(Object.keys(fields).length > 0 ? fields : { form: reason(error) });
          }
        }}
      >
        <h2 id="settings-title">{t('cdn.settings')}</h2>
        <p class="hint">{t('cdn.settingsHint')}</p>
        {GROUPS.map((group) => (
          <fieldset key={group.legend} class="cdn-group">
            <legend>{t(group.legend)}</legend>
            {group.fields.map(([field, kind]) => (
              <SettingField
                key={field}
                field={field}
                kind={kind}
                value={values[field]!}
                error={errors[field]}
                onChange={(v) => set(field, v)}
              />
            ))}
          </fieldset>
        ))}
        {Object.keys(errors).some((f) => f !== 'form') && (
          <p class="error" role="alert">
            {t('cdn.fixFields')}
          </p>
        )}
        <FormError message={errors.form} />
        <EditorActions
          id="zone"
          onCancel={() => {
            setValues(toForm(zone));
            setErrors({});
          }}
          deletes={{
            name: zone.name,
            run: async () => {
              try {
                await api('DELETE', `/v1/cdn/pullzones/${zone.id}`);
                deletedNotice = t('cdn.deleted', { name: zone.name });
                navigate('/app/admin/cdn');
              } catch (error) {
                setErrors({ form: reason(error) });
              }
            },
          }}
        />
      </form>
    </section>
  );
}

function SettingField({
  field,
  kind,
  value,
  error,
  onChange,
}: {
  field: string;
  kind: Kind;
  value: string | boolean;
  error?: string;
  onChange: (value: string | boolean) => void;
}) {
  const id = `zone-${field}`;
  const label = t(`cdn.f.${field}` as MessageKey);
  const described = [error ? `${id}-error` : '', HINTED.has(field) ? `${id}-hint` : ''].filter(Boolean).join(' ');
  const hint = HINTED.has(field) ? (
    <span class="hint" id={`${id}-hint`}>
      {t(`cdn.h.${field}` as MessageKey)}
    </span>
  ) : null;
  if (kind === 'bool')
    return (
      <div class="field check">
        <label>
          <input
            type="checkbox"
            id={id}
            checked={value === true}
            aria-invalid={error ? 'true' : undefined}
            aria-describedby={described || undefined}
            onChange={(e) => onChange((e.target as HTMLInputElement).checked)}
          />
          {label}
        </label>
        {hint}
        <FieldError id={`${id}-error`} message={error} />
      </div>
    );
  if (kind === 'region' || kind === 'origin')
    return (
      <SelectField
        id={id}
        label={`cdn.f.${field}` as MessageKey}
        value={String(value)}
        options={kind === 'region' ? REGIONS : ORIGIN_TYPES}
        onChange={onChange}
        error={error}
      />
    );
  const common = {
    id,
    value: String(value),
    'aria-invalid': error ? ('true' as const) : undefined,
    'aria-describedby': described || undefined,
  };
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {kind === 'list' ? (
        <textarea {...common} rows={2} onInput={(e) => onChange((e.target as HTMLTextAreaElement).value)} />
      ) : (
        <input
          {...common}
          type="text"
          inputMode={kind === 'int' || kind === 'ttl' ? 'numeric' : undefined}
          onInput={(e) => onChange((e.target as HTMLInputElement).value)}
        />
      )}
      {hint}
      <FieldError id={`${id}-error`} message={error} />
    </div>
  );
}

/** Fields with a line of explanation under them (cdn.h.<field>). */
const HINTED = new Set([
  'url',
  'hostnames',
  'originUrl',
  'cacheControlMaxAgeOverride',
  'cacheControlPublicMaxAgeOverride',
  'serveActiveContentInline',
  'allowedReferrers',
  'blockedIPs',
  'blockedCountries',
  'zoneSecurityEnabled',
  'accessControlOriginHeaderExtensions',
  'monthlyBandwidthLimit',
  'requestLimit',
  'limitRateAfter',
  'optimizerMaxWidth',
]);

function Purge({ zone }: { zone: Zone }) {
  const [kind, setKind] = useState<'url' | 'tag' | 'prefix' | 'everything'>('url');
  const [value, setValue] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [result, setResult] = useState<string | null>(null);
  return (
    <section class="card" aria-labelledby="purge-title">
      <form
        class="stack"
        id="purge-form"
        onSubmit={async (e) => {
          e.preventDefault();
          setErrors({});
          setResult(null);
          try {
            const answer = await api<{ kind: string; value: string; edges: number; unreachableEdges: number }>(
              'POST',
              `/v1/cdn/pullzones/${zone.id}/purge`,
              kind === 'everything' ? { everything: true } : { [kind]: value },
            );
            setResult(
              t('cdn.purged', {
                what: answer.kind === 'all' ? t('cdn.purge.everything') : `${answer.kind} ${answer.value}`,
                edges: answer.edges,
                unreachable: answer.unreachableEdges,
              }),
            );
          } catch (error) {
            const fields = zoneFieldErrors(error);
            setErrors(fields[kind] ? { value: fields[kind]! } : { form: reason(error) });
          }
        }}
      >
        <h2 id="purge-title">{t('cdn.purge')}</h2>
        <fieldset class="checks">
          <legend>{t('cdn.purge.kind')}</legend>
          {(['url', 'tag', 'prefix', 'everything'] as const).map((k) => (
            <label key={k}>
              <input
                type="radio"
                name="purge-kind"
                id={`purge-${k}`}
                checked={kind === k}
                onChange={() => setKind(k)}
              />
              {t(`cdn.purge.${k}`)}
            </label>
          ))}
        </fieldset>
        {kind !== 'everything' && (
          <TextField
            id="purge-value"
            label={t(`cdn.purge.${kind}Value`)}
            value={value}
            onInput={setValue}
            error={errors.value}
          />
        )}
        <FormError message={errors.form} />
        <div class="row">
          <button type="submit" class={kind === 'everything' ? 'danger' : 'primary'} id="purge-run">
            {kind === 'everything' ? t('cdn.purge.all', { name: zone.name }) : t('cdn.purge.run')}
          </button>
        </div>
        {result && (
          <p class="notice" role="status" id="purge-result">
            {result}
          </p>
        )}
      </form>
    </section>
  );
}

function SignUrl({ zone }: { zone: Zone }) {
  const [path, setPath] = useState('/');
  const [expires, setExpires] = useState('3600');
  const [ip, setIp] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [signed, setSigned] = useState<{ url: string; expires: number } | null>(null);
  return (
    <section class="card" aria-labelledby="sign-title">
      <form
        class="stack"
        id="sign-form"
        onSubmit={async (e) => {
          e.preventDefault();
          setErrors({});
          setSigned(null);
          try {
            const body: Record<string, unknown> = {
              path,
              expiresInSeconds: /^\d+$/.test(expires.trim()) ? Number(expires) : expires,
            };
            if (ip.trim()) body.ip = ip.trim();
            setSigned(await api<{ url: string; expires: number }>('POST', `/v1/cdn/pullzones/${zone.id}/sign`, body));
          } catch (error) {
            const fields = zoneFieldErrors(error);
            setErrors(Object.keys(fields).length > 0 ? fields : { form: reason(error) });
          }
        }}
      >
        <h2 id="sign-title">{t('cdn.sign')}</h2>
        <p class="hint">{zone.zoneSecurityEnabled ? t('cdn.sign.on') : t('cdn.sign.off')}</p>
        <TextField id="sign-path" label={t('cdn.sign.path')} value={path} onInput={setPath} error={errors.path} />
        <TextField
          id="sign-expires"
          label={t('cdn.sign.expires')}
          value={expires}
          onInput={setExpires}
          error={errors.expiresInSeconds}
        />
        {zone.zoneSecurityIncludeHashRemoteIP && (
          <TextField id="sign-ip" label={t('cdn.sign.ip')} value={ip} onInput={setIp} error={errors.ip} />
        )}
        <FormError message={errors.form} />
        <div class="row">
          <button type="submit" class="primary" id="sign-run">
            {t('cdn.sign.run')}
          </button>
        </div>
        {signed && (
          <SecretBox
            id="signed-url"
            label={t('cdn.sign.result', { date: when(new Date(signed.expires * 1000).toISOString()) })}
            value={signed.url}
          />
        )}
      </form>
    </section>
  );
}

function Publish({ zone, onDone }: { zone: Zone; onDone: () => void }) {
  const [ids, setIds] = useState(() => new URLSearchParams(location.search).get('asset') ?? '');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [result, setResult] = useState<string | null>(null);
  const run = async (publish: boolean) => {
    setErrors({});
    setResult(null);
    const assets = ids
      .split(/[\s,]+/)
      .map((s) => s.trim())
      .filter(Boolean);
    try {
      await api('POST', `/v1/cdn/${publish ? 'publish' : 'unpublish'}`, { assets, pullZoneId: zone.id });
      setResult(t(publish ? 'cdn.published' : 'cdn.unpublished', { count: assets.length, name: zone.name }));
      onDone();
    } catch (error) {
      const fields = zoneFieldErrors(error);
      setErrors(fields.assets ? { assets: `${fields.assets} ${reason(error)}` } : { form: reason(error) });
    }
  };
  return (
    <section class="card" aria-labelledby="publish-title">
      <form
        class="stack"
        id="publish-form"
        onSubmit={(e) => {
          e.preventDefault();
          void run(true);
        }}
      >
        <h2 id="publish-title">{t('cdn.publish')}</h2>
        <p class="hint">{t('cdn.publish.lead', { count: zone.filesStored, prefix: zone.edgePathPrefix })}</p>
        <div class="field">
          <label for="publish-assets">{t('cdn.publish.assets')}</label>
          <textarea
            id="publish-assets"
            class="mono"
            rows={2}
            value={ids}
            aria-invalid={errors.assets ? 'true' : undefined}
            aria-describedby={errors.assets ? 'publish-assets-error' : undefined}
            onInput={(e) => setIds((e.target as HTMLTextAreaElement).value)}
          />
          <FieldError id="publish-assets-error" message={errors.assets} />
        </div>
        <FormError message={errors.form} />
        <div class="row">
          <button type="submit" class="primary" id="publish-run">
            {t('cdn.publish.run')}
          </button>
          <button type="button" id="unpublish-run" onClick={() => void run(false)}>
            {t('cdn.unpublish.run')}
          </button>
        </div>
        {result && (
          <p class="notice" role="status" id="publish-result">
            {result}
          </p>
        )}
      </form>
    </section>
  );
}
