import { useEffect, useState } from 'preact/hooks';
import { api, reason } from './api.ts';
import type { Board } from './boards.tsx';
import { t } from './messages.ts';
import { withOwnSignIn } from './own-sign-in.ts';

interface Link {
  id: string;
  tokenHint: string;
  passwordProtected: boolean;
  expiresAt: string | null;
  revokedAt: string | null;
  createdAt: string;
  lastOpenedAt: string | null;
  openCount: number;
  active: boolean;
}

const when = (iso: string) => new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** A date-time-local value `days` from now, in the person's own time. */
function inDays(days: number): string {
  const d = new Date(Date.now() + days * 86_400_000);
  d.setSeconds(0, 0);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/**
 * Read-only links for people outside the organization (POST /v1/storyboards/{id}/links): a
 * password and an expiry, the address shown once to copy, the list with openings, revoke.
 */
export function BoardSharing({ board, userName }: { board: Board; userName: string }) {
  const [links, setLinks] = useState<Link[]>([]);
  const [password, setPassword] = useState('');
  const [own, setOwn] = useState('');
  const [expires, setExpires] = useState(true);
  const [expiresAt, setExpiresAt] = useState(inDays(30));
  const [made, setMade] = useState<{ url: string; copied: boolean } | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const load = () =>
    api<{ links: Link[] }>('GET', `/v1/storyboards/${board.id}/shares`).then(
      (a) => setLinks(a.links),
      (e) => setMessage(t('common.error', { reason: reason(e) })),
    );
  useEffect(() => void load(), [board.id]);

  return (
    <section class="board-sharing" aria-labelledby="sharing-heading">
      <h2 id="sharing-heading">{t('boards.share')}</h2>
      <p class="muted small">{t('boards.share.lead')}</p>
      <form
        class="share-form"
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            const body: Record<string, unknown> = {
              expiresAt: expires ? new Date(expiresAt).toISOString() : null,
            };
            if (password) body.password = password;
            // A link is a lasting credential: it takes the person's own sign-in (their password confirms it).
            const link = await withOwnSignIn<{ url: string }>(
              userName,
              own,
              'POST',
              `/v1/storyboards/${board.id}/links`,
              body,
            );
            setOwn('');
            setMade({ url: link.url, copied: false });
            setPassword('');
            setMessage(null);
            await load();
          } catch (err) {
            setMessage(t('common.error', { reason: reason(err) }));
          }
        }}
      >
        <div class="field">
          <label for="share-password">{t('boards.share.password')}</label>
          <input
            id="share-password"
            type="password"
            autocomplete="new-password"
            minLength={4}
            value={password}
            aria-describedby="share-password-help"
            onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
          />
          <span class="muted small" id="share-password-help">
            {t('boards.share.passwordHelp')}
          </span>
        </div>
        <div class="field">
          <label class="inline">
            <input
              type="checkbox"
              checked={expires}
              onChange={(e) => setExpires((e.target as HTMLInputElement).checked)}
            />{' '}
            {t('boards.share.expires')}
          </label>
          {expires && (
            <>
              <label for="share-expires" class="visually-hidden">
                {t('boards.share.expiresAt')}
              </label>
              <input
                id="share-expires"
                type="datetime-local"
                required
                value={expiresAt}
                onInput={(e) => setExpiresAt((e.target as HTMLInputElement).value)}
              />
            </>
          )}
        </div>
        <div class="field">
          <label for="share-own-password">{t('boards.ownPassword')}</label>
          <input
            id="share-own-password"
            type="password"
            required
            autocomplete="current-password"
            value={own}
            aria-describedby="share-own-help"
            onInput={(e) => setOwn((e.target as HTMLInputElement).value)}
          />
          <span class="muted small" id="share-own-help">
            {t('boards.share.ownHelp')}
          </span>
        </div>
        <button type="submit" class="primary" id="create-link">
          {t('boards.share.create')}
        </button>
      </form>
      {message && (
        <p class="error" role="alert">
          {message}
        </p>
      )}
      {made && (
        <div class="made-link" role="status">
          <p>{t('boards.share.once')}</p>
          <div class="row">
            <label for="made-link-url" class="visually-hidden">
              {t('boards.share.address')}
            </label>
            <input
              id="made-link-url"
              readOnly
              value={made.url}
              onFocus={(e) => (e.target as HTMLInputElement).select()}
            />
            <button
              type="button"
              id="copy-link"
              onClick={async () => {
                try {
                  await navigator.clipboard.writeText(made.url);
                  setMade({ ...made, copied: true });
                } catch {
                  (document.getElementById('made-link-url') as HTMLInputElement | null)?.select();
                }
              }}
            >
              {t(made.copied ? 'boards.share.copied' : 'boards.share.copy')}
            </button>
          </div>
        </div>
      )}
      {links.length === 0 ? (
        <p class="muted">{t('boards.share.none')}</p>
      ) : (
        <table class="link-table">
          <caption class="visually-hidden">{t('boards.share.links')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('boards.share.col.link')}</th>
              <th scope="col">{t('boards.share.col.password')}</th>
              <th scope="col">{t('boards.share.col.expires')}</th>
              <th scope="col">{t('boards.share.col.opened')}</th>
              <th scope="col">{t('boards.share.col.state')}</th>
              <th scope="col">
                <span class="visually-hidden">{t('boards.share.col.actions')}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {links.map((l) => (
              <tr key={l.id} data-link-id={l.id}>
                <th scope="row">{t('boards.share.hint', { hint: l.tokenHint })}</th>
                <td>{t(l.passwordProtected ? 'boards.share.yes' : 'boards.share.no')}</td>
                <td>{l.expiresAt ? when(l.expiresAt) : t('boards.share.never')}</td>
                <td>{t('boards.share.opens', { count: l.openCount })}</td>
                <td>
                  {t(l.revokedAt ? 'boards.share.revoked' : l.active ? 'boards.share.active' : 'boards.share.expired')}
                </td>
                <td>
                  {l.active && (
                    <button
                      type="button"
                      class="ghost danger"
                      aria-label={t('boards.share.revokeLabel', { hint: l.tokenHint })}
                      onClick={async () => {
                        try {
                          await api('DELETE', `/v1/storyboards/${board.id}/links/${l.id}`);
                          setMessage(null);
                        } catch (err) {
                          setMessage(t('common.error', { reason: reason(err) }));
                        }
                        await load();
                      }}
                    >
                      {t('boards.share.revoke')}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
