import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, reason } from '../api.ts';
import { fileSize } from '../format.ts';
import { t, type MessageKey } from '../messages.ts';
import { FieldError } from './common.tsx';

interface Hour {
  hour: string;
  requests: number;
  bytesServed: number;
  hits: number;
  misses: number;
}

interface Stats {
  totalBandwidthUsed: number;
  totalOriginTraffic: number;
  totalRequestsServed: number;
  cacheHitRate: number;
  byteHitRate: number;
  totalHits: number;
  totalMisses: number;
  status2xx: number;
  status3xx: number;
  status4xx: number;
  status5xx: number;
  hourly: Hour[];
  geoRequestDistribution: Record<string, number>;
  geoTrafficDistribution: Record<string, number>;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const PERIODS: { id: string; label: MessageKey; ms: number }[] = [
  { id: '24h', label: 'cdn.period.24h', ms: DAY },
  { id: '7d', label: 'cdn.period.7d', ms: 7 * DAY },
  { id: '30d', label: 'cdn.period.30d', ms: 30 * DAY },
  { id: '90d', label: 'cdn.period.90d', ms: 90 * DAY },
];

/** yyyy-mm-dd of a moment in the browser's time zone (what <input type="date"> shows). */
function dayOf(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

/** The first moment of a yyyy-mm-dd day in the browser's time zone (NaN when it is not a day). */
function startOfDay(day: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  return m ? new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3])).getTime() : Number.NaN;
}

/** A period of up to two days is shown by hour, a longer one by day. */
const stepOf = (from: number, to: number) => (to - from <= 2 * DAY ? HOUR : DAY);

interface Bucket {
  start: number;
  requests: number;
  bytes: number;
  hits: number;
}

/** The hourly series in buckets of the period's step (hours, or UTC days), every bucket present, empty ones as 0. */
function buckets(hourly: Hour[], from: number, to: number, step: number): Bucket[] {
  const first = Math.floor(from / step) * step;
  const out: Bucket[] = [];
  for (let start = first; start < to; start += step) out.push({ start, requests: 0, bytes: 0, hits: 0 });
  for (const h of hourly) {
    const i = Math.floor((Date.parse(h.hour) - first) / step);
    const b = out[Math.max(0, Math.min(out.length - 1, i))];
    if (!b) continue;
    b.requests += h.requests;
    b.bytes += h.bytesServed;
    b.hits += h.hits;
  }
  return out;
}

const percent = (rate: number) => `${(rate * 100).toFixed(1)} %`;
const count = (n: number) => n.toLocaleString();

/** A zone's statistics over a chosen period: totals, three series and the countries, each chart with its table. */
export function CdnStats({ zoneId }: { zoneId: number }) {
  const [period, setPeriod] = useState('24h');
  const [fromDay, setFromDay] = useState(() => dayOf(Date.now() - DAY));
  const [toDay, setToDay] = useState(() => dayOf(Date.now()));
  const [stats, setStats] = useState<{ stats: Stats; from: number; to: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [fieldErrors, setFieldErrors] = useState<{ from?: string; to?: string }>({});
  const [busy, setBusy] = useState(false);
  /** The period asked for: a preset ends now; chosen days run from the first one's start to the last one's end. */
  const range = (): { from: number; to: number } => {
    const preset = PERIODS.find((x) => x.id === period);
    if (preset) {
      const to = Date.now();
      return { from: to - preset.ms, to };
    }
    const end = startOfDay(toDay);
    return { from: startOfDay(fromDay), to: Number.isNaN(end) ? end : Math.min(Date.now(), end + DAY - 1) };
  };
  const load = async () => {
    const { from, to } = range();
    setFieldErrors({});
    if (Number.isNaN(from) || Number.isNaN(to)) {
      setFieldErrors(Number.isNaN(from) ? { from: t('cdn.period.badDay') } : { to: t('cdn.period.badDay') });
      return;
    }
    setBusy(true);
    try {
      const query = new URLSearchParams({ dateFrom: new Date(from).toISOString(), dateTo: new Date(to).toISOString() });
      setStats({ stats: await api<Stats>('GET', `/v1/cdn/pullzones/${zoneId}/stats?${query}`), from, to });
      setError(null);
    } catch (e) {
      // The API names the query parameter it refuses (a start after the end): said on that date field.
      const field = e instanceof ApiError ? e.details.find((d) => /date(From|To)/.test(d.field)) : undefined;
      if (field) setFieldErrors(/dateFrom/.test(field.field) ? { from: field.message } : { to: field.message });
      else setError(reason(e));
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => void load(), [zoneId, period]);
  const choosePreset = (id: string) => {
    const preset = PERIODS.find((x) => x.id === id);
    if (preset) {
      setFromDay(dayOf(Date.now() - preset.ms));
      setToDay(dayOf(Date.now()));
    }
    setPeriod(id);
  };
  const step = stats ? stepOf(stats.from, stats.to) : HOUR;
  const series = stats ? buckets(stats.stats.hourly, stats.from, stats.to, step) : [];
  const label = (b: Bucket) =>
    new Date(b.start).toLocaleString(
      undefined,
      step === HOUR ? { hour: '2-digit', minute: '2-digit', day: 'numeric', month: 'short' } : { dateStyle: 'medium' },
    );
  const s = stats?.stats;
  return (
    <section class="card" aria-labelledby="stats-title" id="stats">
      <h2 id="stats-title">{t('cdn.stats')}</h2>
      <form
        class="row stats-period"
        id="stats-form"
        onSubmit={(e) => {
          e.preventDefault();
          void load();
        }}
      >
        <div class="field">
          <label for="stats-period">{t('cdn.period')}</label>
          <select
            id="stats-period"
            value={period}
            onChange={(e) => choosePreset((e.target as HTMLSelectElement).value)}
          >
            {PERIODS.map((x) => (
              <option key={x.id} value={x.id}>
                {t(x.label)}
              </option>
            ))}
            <option value="custom">{t('cdn.period.custom')}</option>
          </select>
        </div>
        <div class="field">
          <label for="stats-from">{t('cdn.period.from')}</label>
          <input
            id="stats-from"
            type="date"
            value={fromDay}
            max={dayOf(Date.now())}
            aria-invalid={fieldErrors.from ? 'true' : undefined}
            aria-describedby={fieldErrors.from ? 'stats-from-error' : undefined}
            onInput={(e) => {
              setFromDay((e.target as HTMLInputElement).value);
              setPeriod('custom');
            }}
          />
          <FieldError id="stats-from-error" message={fieldErrors.from} />
        </div>
        <div class="field">
          <label for="stats-to">{t('cdn.period.to')}</label>
          <input
            id="stats-to"
            type="date"
            value={toDay}
            max={dayOf(Date.now())}
            aria-invalid={fieldErrors.to ? 'true' : undefined}
            aria-describedby={fieldErrors.to ? 'stats-to-error' : undefined}
            onInput={(e) => {
              setToDay((e.target as HTMLInputElement).value);
              setPeriod('custom');
            }}
          />
          <FieldError id="stats-to-error" message={fieldErrors.to} />
        </div>
        <button type="submit" id="stats-refresh" disabled={busy}>
          {period === 'custom' ? t('cdn.period.show') : t('cdn.refresh')}
        </button>
      </form>
      {stats && (
        <p class="muted small" id="stats-range">
          {t(step === HOUR ? 'cdn.period.rangeHours' : 'cdn.period.rangeDays', {
            from: new Date(stats.from).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }),
            to: new Date(stats.to).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }),
          })}
        </p>
      )}
      {error && (
        <p class="error" role="alert">
          {t('common.error', { reason: error })}
        </p>
      )}
      {s && (
        <>
          <dl class="cdn-totals" id="stats-totals">
            <div>
              <dt>{t('cdn.s.requests')}</dt>
              <dd id="total-requests">{count(s.totalRequestsServed)}</dd>
            </div>
            <div>
              <dt>{t('cdn.s.bandwidth')}</dt>
              <dd>{fileSize(s.totalBandwidthUsed)}</dd>
            </div>
            <div>
              <dt>{t('cdn.s.origin')}</dt>
              <dd>{fileSize(s.totalOriginTraffic)}</dd>
            </div>
            <div>
              <dt>{t('cdn.s.hitRate')}</dt>
              <dd>{percent(s.cacheHitRate)}</dd>
            </div>
            <div>
              <dt>{t('cdn.s.byteHitRate')}</dt>
              <dd>{percent(s.byteHitRate)}</dd>
            </div>
            <div>
              <dt>{t('cdn.s.statuses')}</dt>
              <dd>{t('cdn.s.statusList', { a: s.status2xx, b: s.status3xx, c: s.status4xx, d: s.status5xx })}</dd>
            </div>
          </dl>
          {s.totalRequestsServed === 0 && (
            <p class="muted" id="stats-empty">
              {t('cdn.s.empty')}
            </p>
          )}
          <div class="cdn-charts">
            <BarChart
              id="chart-requests"
              title={t('cdn.s.requestsOver')}
              points={series.map((b) => ({ label: label(b), value: b.requests }))}
              format={count}
            />
            <BarChart
              id="chart-bandwidth"
              title={t('cdn.s.bandwidthOver')}
              points={series.map((b) => ({ label: label(b), value: b.bytes }))}
              format={fileSize}
            />
            <LineChart
              id="chart-hitrate"
              title={t('cdn.s.hitRateOver')}
              points={series.map((b) => ({ label: label(b), value: b.requests > 0 ? b.hits / b.requests : null }))}
            />
            <Countries requests={s.geoRequestDistribution} bytes={s.geoTrafficDistribution} />
          </div>
        </>
      )}
    </section>
  );
}

/**
 * A table that may be wider than a phone: it scrolls sideways, so it takes keyboard focus to be
 * scrolled without a mouse (WCAG 2.1.1; axe's scrollable-region-focusable), named by `label`.
 */
export function ScrollRegion({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard to be scrolled
    <section class="table-scroll" aria-label={label} tabIndex={0}>
      {children}
    </section>
  );
}

const W = 600;
const H = 160;

interface Point {
  label: string;
  value: number;
}

function SeriesTable({ id, title, points }: { id: string; title: string; points: { label: string; value: string }[] }) {
  return (
    <details class="chart-table">
      <summary>{t('cdn.s.asTable')}</summary>
      <ScrollRegion label={title}>
        <table id={`${id}-table`}>
          <thead>
            <tr>
              <th scope="col">{t('cdn.s.when')}</th>
              <th scope="col">{t('cdn.s.value')}</th>
            </tr>
          </thead>
          <tbody>
            {points.map((p) => (
              <tr key={p.label}>
                <th scope="row">{p.label}</th>
                <td>{p.value}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
    </details>
  );
}

function BarChart({
  id,
  title,
  points,
  format,
}: {
  id: string;
  title: string;
  points: Point[];
  format: (n: number) => string;
}) {
  const max = Math.max(0, ...points.map((p) => p.value));
  const total = points.reduce((sum, p) => sum + p.value, 0);
  const peak = points.find((p) => p.value === max && max > 0);
  const summary = peak
    ? t('cdn.s.barSummary', { total: format(total), peak: format(max), when: peak.label })
    : t('cdn.s.noneSummary');
  const width = W / Math.max(1, points.length);
  return (
    <figure class="chart" id={id}>
      <figcaption>
        <strong>{title}</strong> <span class="muted small">{summary}</span>
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label={`${title}. ${summary}`}>
        <line class="axis" x1="0" y1={H - 0.5} x2={W} y2={H - 0.5} />
        {points.map((p, i) => {
          const h = max > 0 ? (p.value / max) * (H - 4) : 0;
          return (
            <rect key={p.label} class="bar" x={i * width + width * 0.1} y={H - h} width={width * 0.8} height={h}>
              <title>{`${p.label}: ${format(p.value)}`}</title>
            </rect>
          );
        })}
      </svg>
      <div class="chart-axis small muted" aria-hidden="true">
        <span>{points[0]?.label}</span>
        <span>{t('cdn.s.max', { value: format(max) })}</span>
        <span>{points[points.length - 1]?.label}</span>
      </div>
      <SeriesTable id={id} title={title} points={points.map((p) => ({ label: p.label, value: format(p.value) }))} />
    </figure>
  );
}

function LineChart({
  id,
  title,
  points,
}: {
  id: string;
  title: string;
  points: { label: string; value: number | null }[];
}) {
  const step = W / Math.max(1, points.length);
  const x = (i: number) => i * step + step / 2;
  const y = (v: number) => H - 2 - v * (H - 4);
  const known = points.filter((p) => p.value !== null);
  const summary =
    known.length > 0
      ? t('cdn.s.lineSummary', {
          low: percent(Math.min(...known.map((p) => p.value!))),
          high: percent(Math.max(...known.map((p) => p.value!))),
        })
      : t('cdn.s.noneSummary');
  // One polyline per run of hours that had requests: an hour without requests has no hit rate.
  const runs: string[] = [];
  let run: string[] = [];
  points.forEach((p, i) => {
    if (p.value === null) {
      if (run.length) runs.push(run.join(' '));
      run = [];
    } else run.push(`${x(i)},${y(p.value)}`);
  });
  if (run.length) runs.push(run.join(' '));
  return (
    <figure class="chart" id={id}>
      <figcaption>
        <strong>{title}</strong> <span class="muted small">{summary}</span>
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label={`${title}. ${summary}`}>
        <line class="axis" x1="0" y1={H - 0.5} x2={W} y2={H - 0.5} />
        <line class="grid" x1="0" y1={y(0.5)} x2={W} y2={y(0.5)} />
        {runs.map((r) =>
          r.includes(' ') ? (
            <polyline key={r} class="line" points={r} />
          ) : (
            <circle key={r} class="dot" cx={r.split(',')[0]} cy={r.split(',')[1]} r="3" />
          ),
        )}
      </svg>
      <div class="chart-axis small muted" aria-hidden="true">
        <span>{points[0]?.label}</span>
        <span>{t('cdn.s.scale')}</span>
        <span>{points[points.length - 1]?.label}</span>
      </div>
      <SeriesTable
        id={id}
        title={title}
        points={points.map((p) => ({ label: p.label, value: p.value === null ? '—' : percent(p.value) }))}
      />
    </figure>
  );
}

function Countries({ requests, bytes }: { requests: Record<string, number>; bytes: Record<string, number> }) {
  const rows = Object.entries(requests).sort((a, b) => b[1] - a[1]);
  const max = Math.max(1, ...rows.map(([, n]) => n));
  const names = (() => {
    try {
      return new Intl.DisplayNames(undefined, { type: 'region' });
    } catch {
      return null;
    }
  })();
  const name = (code: string) => (code === 'ZZ' ? t('cdn.s.unknownCountry') : (names?.of(code) ?? code));
  return (
    <figure class="chart" id="chart-countries">
      <figcaption>
        <strong>{t('cdn.s.countries')}</strong>
      </figcaption>
      {rows.length === 0 ? (
        <p class="muted small">{t('cdn.s.noneSummary')}</p>
      ) : (
        <ScrollRegion label={t('cdn.s.countries')}>
          <table class="countries">
            <thead>
              <tr>
                <th scope="col">{t('cdn.s.country')}</th>
                <th scope="col">{t('cdn.s.requests')}</th>
                <th scope="col">{t('cdn.s.bandwidth')}</th>
                <th scope="col" class="bar-col">
                  <span class="visually-hidden">{t('cdn.s.share')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map(([code, n]) => (
                <tr key={code}>
                  <th scope="row">
                    {name(code)} <span class="mono muted">{code}</span>
                  </th>
                  <td>{count(n)}</td>
                  <td>{fileSize(bytes[code] ?? 0)}</td>
                  <td class="bar-col">
                    <svg viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true" class="bar-cell">
                      <rect class="bar" x="0" y="0" height="10" width={(n / max) * 100} />
                    </svg>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
    </figure>
  );
}
