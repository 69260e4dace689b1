import { useEffect, useState } from 'preact/hooks';
import { api, reason } from '../api.ts';
import { t, type MessageKey } from '../messages.ts';
import { linkClick } from '../router.ts';
import { when } from './common.tsx';

/** An Action as GET /v1/action/{id} answers it. */
export interface Action {
  id: string;
  type: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  progress: number;
  processed: number;
  total: number | null;
  createdBy: string | null;
  createdDate: string;
  startedDate: string | null;
  finishedDate: string | null;
  result: unknown;
  errors: { item: string; message: string }[];
}

export const finished = (a: Action) => a.status === 'succeeded' || a.status === 'failed' || a.status === 'cancelled';

const TYPES: Record<string, MessageKey> = {
  'metadata.apply': 'actions.type.metadata.apply',
  'assets.bulk_edit': 'actions.type.assets.bulk_edit',
  'assets.purge': 'actions.type.assets.purge',
  'assets.regenerate_renditions': 'actions.type.assets.regenerate_renditions',
  'collections.share': 'actions.type.collections.share',
  'assets.transform': 'actions.type.assets.transform',
};

export function actionLabel(type: string): string {
  const key = TYPES[type];
  return key ? t(key) : type;
}

const STATUS: Record<Action['status'], MessageKey> = {
  queued: 'actions.status.queued',
  running: 'actions.status.running',
  succeeded: 'actions.status.succeeded',
  failed: 'actions.status.failed',
  cancelled: 'actions.status.cancelled',
};

export function StatusBadge({ status }: { status: Action['status'] }) {
  const tone = status === 'succeeded' ? 'ok' : status === 'failed' ? 'bad' : '';
  return <span class={`state ${tone}`}>{t(STATUS[status])}</span>;
}

/** The result's plain numbers (updated, failed, purged…), as "name: value". */
function resultLine(result: unknown): string {
  if (!result || typeof result !== 'object') return '';
  return Object.entries(result as Record<string, unknown>)
    .filter(([, v]) => typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean')
    .map(([k, v]) => `${k}: ${v}`)
    .join(' · ');
}

/**
 * One Action: status, a progress bar, counts, its result and per-item errors, and Cancel or
 * Resume when the API allows them.
 */
export function ActionCard({
  action,
  onChange,
  headingLevel = 3,
}: {
  action: Action;
  onChange: (a: Action) => void;
  headingLevel?: 2 | 3;
}) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const act = async (what: 'cancel' | 'resume') => {
    setBusy(true);
    setError(null);
    try {
      onChange(await api<Action>('POST', `/v1/action/${action.id}/${what}`, {}));
    } catch (e) {
      setError(reason(e));
    } finally {
      setBusy(false);
    }
  };
  const Heading = headingLevel === 2 ? 'h2' : 'h3';
  const count =
    action.total !== null
      ? t('actions.count', { done: action.processed, total: action.total })
      : t('actions.countOpen', { done: action.processed });
  const summary = resultLine(action.result);
  return (
    <article class="action-card" id={`action-${action.id}`} aria-labelledby={`action-${action.id}-title`}>
      <div class="row spread">
        <Heading id={`action-${action.id}-title`} class="action-title">
          {actionLabel(action.type)}
        </Heading>
        <StatusBadge status={action.status} />
      </div>
      <div class="row">
        <progress
          max={100}
          value={action.status === 'succeeded' ? 100 : action.progress}
          aria-label={t('actions.progressOf', { name: actionLabel(action.type), pct: action.progress })}
        />
        <span class="small">{count}</span>
      </div>
      <p class="small muted">
        {t('actions.times', {
          created: when(action.createdDate),
          started: action.startedDate ? when(action.startedDate) : '—',
          finished: action.finishedDate ? when(action.finishedDate) : '—',
        })}
      </p>
      {summary && <p class="small mono result">{summary}</p>}
      {action.errors.length > 0 && (
        <details class="item-errors">
          <summary>{t('actions.errors', { count: action.errors.length })}</summary>
          <ul>
            {action.errors.slice(0, 200).map((e, i) => (
              <li key={i}>
                <code>{e.item}</code>: {e.message}
              </li>
            ))}
          </ul>
        </details>
      )}
      <div class="row">
        {(action.status === 'queued' || action.status === 'running') && (
          <button type="button" class="cancel-action" disabled={busy} onClick={() => void act('cancel')}>
            {t('actions.cancel')}
          </button>
        )}
        {(action.status === 'cancelled' || action.status === 'failed') && (
          <button type="button" class="resume-action" disabled={busy} onClick={() => void act('resume')}>
            {t('actions.resume')}
          </button>
        )}
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </article>
  );
}

/** Follows one Action until it ends (a poll a second), showing it as a card. */
export function WatchedAction({ id, onDone }: { id: string; onDone?: (a: Action) => void }) {
  const [action, setAction] = useState<Action | null>(null);
  const [error, setError] = useState<string | null>(null);
  // Bumped when a Resume (or Cancel) hands back an unfinished action: follow it again.
  const [round, setRound] = useState(0);
  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      try {
        const a = await api<Action>('GET', `/v1/action/${id}`);
        if (stop) return;
        setAction(a);
        if (finished(a)) onDone?.(a);
        else timer = setTimeout(tick, 700);
      } catch (e) {
        if (!stop) setError(reason(e));
      }
    };
    void tick();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [id, round]);
  if (error)
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  if (!action) return null;
  return (
    <div role="status" class="watched">
      <ActionCard
        action={action}
        onChange={(a) => {
          setAction(a);
          if (!finished(a)) setRound((r) => r + 1);
        }}
      />
      <a href="/app/admin/actions" onClick={(e) => linkClick(e, '/app/admin/actions')}>
        {t('actions.seeAll')}
      </a>
    </div>
  );
}
