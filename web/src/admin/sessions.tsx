import { useEffect, useState } from 'preact/hooks';
import { api, reason } from '../api.ts';
import { signOutEverywhere } from '../auth.ts';
import { dateTime } from '../format.ts';
import { t } from '../messages.ts';
import { isForbidden } from './common.tsx';

export interface Session {
  id: string;
  kind: 'password' | 'impersonation' | 'oauth';
  current: boolean;
  clientId: string | null;
  impersonatorId: string | null;
  ip: string | null;
  userAgent: string | null;
  createdEpoch: number;
  lastUsedEpoch: number;
  expireEpoch: number;
}

/** "Chrome on Linux" from a user agent, else the agent itself, shortened. */
function device(agent: string | null): string {
  if (!agent) return t('sessions.unknown');
  const browser = /Edg\//.test(agent)
    ? 'Edge'
    : /Firefox\//.test(agent)
      ? 'Firefox'
      : /Chrome\//.test(agent)
        ? 'Chrome'
        : /Safari\//.test(agent)
          ? 'Safari'
          : null;
  const os = /Windows/.test(agent)
    ? 'Windows'
    : /Android/.test(agent)
      ? 'Android'
      : /iPhone|iPad/.test(agent)
        ? 'iOS'
        : /Mac OS X/.test(agent)
          ? 'macOS'
          : /Linux/.test(agent)
            ? 'Linux'
            : null;
  if (browser && os) return t('sessions.browserOn', { browser, os });
  return agent.length > 40 ? `${agent.slice(0, 40)}…` : agent;
}

/**
 * The active sessions of one person, with "End session" per row and "End all sessions". `own`:
 * the signed-in person's (GET /v1/auth/sessions): their current session is marked and ended by
 * signing out; else someone else's, for an administrator (GET /v1/user/{id}/sessions).
 */
export function SessionList({ userId, name, own = false }: { userId?: string; name: string; own?: boolean }) {
  const base = own ? '/v1/auth/sessions' : `/v1/user/${userId}/sessions`;
  const [sessions, setSessions] = useState<Session[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const load = async () => {
    try {
      setSessions((await api<{ sessions: Session[] }>('GET', base)).sessions);
      setProblem(null);
    } catch (e) {
      setProblem(isForbidden(e) ? t('sessions.forbidden') : t('common.error', { reason: reason(e) }));
    }
  };
  useEffect(() => void load(), [base]);
  const run = async (what: () => Promise<unknown>, done: string) => {
    try {
      await what();
      await load();
      setNotice(done);
    } catch (e) {
      setProblem(t('common.error', { reason: reason(e) }));
    }
  };
  const kind = (s: Session) =>
    s.kind === 'oauth'
      ? t('sessions.kind.oauth')
      : s.kind === 'impersonation'
        ? t('sessions.kind.impersonation')
        : t('sessions.kind.password');
  return (
    <section class="sessions" aria-labelledby={`sessions-title-${userId ?? 'own'}`}>
      <h3 id={`sessions-title-${userId ?? 'own'}`}>{t('sessions.of', { name })}</h3>
      {notice && (
        <p class="notice" role="status" id="sessions-notice">
          {notice}
        </p>
      )}
      {problem && (
        <p class="error" role="alert">
          {problem}
        </p>
      )}
      {sessions?.length === 0 && <p class="muted">{t('sessions.none')}</p>}
      {sessions && sessions.length > 0 && (
        <>
          <div class="table-scroll">
            <table class="sessions-table">
              <thead>
                <tr>
                  <th scope="col">{t('sessions.client')}</th>
                  <th scope="col">{t('sessions.created')}</th>
                  <th scope="col">{t('sessions.lastUsed')}</th>
                  <th scope="col">{t('sessions.ip')}</th>
                  <td />
                </tr>
              </thead>
              <tbody>
                {sessions.map((s) => (
                  <tr key={s.id} data-session={s.id}>
                    <th scope="row">
                      {kind(s)}
                      <span class="small muted block" title={s.userAgent ?? undefined}>
                        {device(s.userAgent)}
                      </span>
                    </th>
                    <td>{dateTime(s.createdEpoch)}</td>
                    <td>{dateTime(s.lastUsedEpoch)}</td>
                    <td class="mono">{s.ip ?? t('sessions.unknown')}</td>
                    <td>
                      {s.current ? (
                        <span class="state ok">{t('sessions.current')}</span>
                      ) : (
                        <button
                          type="button"
                          class="danger"
                          aria-label={t('sessions.endNamed', { client: kind(s), date: dateTime(s.createdEpoch) })}
                          onClick={() => void run(() => api('DELETE', `${base}/${s.id}`), t('sessions.ended'))}
                        >
                          {t('sessions.end')}
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <button
            type="button"
            class="danger"
            id={own ? 'sessions-end-all-own' : 'sessions-end-all'}
            onClick={() =>
              own
                ? void signOutEverywhere().catch((e) => setProblem(t('common.error', { reason: reason(e) })))
                : void run(() => api('DELETE', base), t('sessions.endedAll', { name }))
            }
          >
            {own ? t('user.signoutEverywhere') : t('sessions.endAll')}
          </button>
        </>
      )}
    </section>
  );
}

/** /app/sessions: the signed-in person's own sessions (from the account menu). */
export default function MySessions({ user }: { user: { userName: string } }) {
  return (
    <div class="page admin">
      <h1>{t('sessions.mine')}</h1>
      <p class="hint">{t('sessions.mineLead')}</p>
      <div class="card">
        <SessionList own name={user.userName} />
      </div>
    </div>
  );
}
