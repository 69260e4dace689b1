import { useEffect, useRef, useState } from 'preact/hooks';
import { api, reason } from '../api.ts';
import { t } from '../messages.ts';
import { type Action, ActionCard, finished } from './action-view.tsx';
import type { SectionProps } from './loader.tsx';

const STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;

/**
 * Actions: the caller's running and past Actions, and the organization's ones their privileges
 * show (GET /v1/actions?scope=visible), with progress, results and per-item errors; Cancel and
 * Resume (POST /v1/action/{id}/cancel, /resume). Refreshed every second while one is unfinished.
 */
export default function Actions(_: SectionProps) {
  const [status, setStatus] = useState('');
  const [actions, setActions] = useState<Action[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const load = async () => {
    const query = new URLSearchParams({ scope: 'visible', limit: '50' });
    if (status) query.set('status', status);
    try {
      const answer = await api<{ actions: Action[]; next: string | null }>('GET', `/v1/actions?${query}`);
      setActions(answer.actions);
      setNext(answer.next);
      setError(null);
      clearTimeout(timer.current);
      if (answer.actions.some((a) => !finished(a))) timer.current = setTimeout(() => void load(), 1000);
    } catch (e) {
      setError(reason(e));
    }
  };
  const more = async (before: string) => {
    const query = new URLSearchParams({ scope: 'visible', limit: '50', before });
    if (status) query.set('status', status);
    try {
      const answer = await api<{ actions: Action[]; next: string | null }>('GET', `/v1/actions?${query}`);
      setActions((old) => [...(old ?? []), ...answer.actions]);
      setNext(answer.next);
    } catch (e) {
      setError(reason(e));
    }
  };
  useEffect(() => {
    void load();
    return () => clearTimeout(timer.current);
  }, [status]);
  const shown = actions;
  return (
    <>
      <h1>{t('admin.section.actions')}</h1>
      <p class="hint">{t('actions.lead')}</p>
      <p class="ceiling" role="note">
        {t('actions.ceiling')}
      </p>
      <div class="row">
        <label for="actions-status">{t('actions.filter')}</label>
        <select id="actions-status" value={status} onChange={(e) => setStatus((e.target as HTMLSelectElement).value)}>
          <option value="">{t('hooks.status.all')}</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {t(`actions.status.${s}`)}
            </option>
          ))}
        </select>
        <button type="button" id="actions-refresh" onClick={() => void load()}>
          {t('hooks.refresh')}
        </button>
      </div>
      {error && (
        <p class="error" role="alert">
          {t('common.error', { reason: error })}
        </p>
      )}
      {actions === null && !error && (
        <p class="muted" role="status">
          {t('admin.loading')}
        </p>
      )}
      {shown && shown.length === 0 && <p class="muted">{t('actions.none')}</p>}
      <div class="action-list" id="actions" aria-live="polite">
        {shown?.map((a) => (
          <ActionCard
            key={a.id}
            action={a}
            headingLevel={2}
            onChange={(changed) => {
              setActions((old) => old?.map((o) => (o.id === changed.id ? changed : o)) ?? null);
              if (!finished(changed)) void load();
            }}
          />
        ))}
      </div>
      {next && (
        <button type="button" onClick={() => void more(next)}>
          {t('admin.more')}
        </button>
      )}
    </>
  );
}
