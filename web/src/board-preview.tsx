import { useEffect, useState } from 'preact/hooks';
import { ApiError, reason } from './api.ts';
import { BoardRender, type BoardView } from './board-view.tsx';
import type { Board } from './boards.tsx';
import { t } from './messages.ts';
import { withOwnSignIn } from './own-sign-in.ts';

type Viewer = 'me' | 'link' | 'person';

/**
 * The board as a given viewer sees it. The API resolves a view for its caller only
 * (GET /v1/storyboards/{id}/view); so "you" is that view, "anyone with a share link" is the view
 * of the link's maker (the API resolves links with their maker's rights: you, for links you make),
 * and "another person" asks the API for a short impersonation session (POST /v1/auth/impersonate,
 * needs the Impersonate privilege, audited), reads the view with it and ends it at once.
 */
export function BoardPreview({ board, view, userName }: { board: Board; view: BoardView; userName: string }) {
  const [viewer, setViewer] = useState<Viewer>('me');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [other, setOther] = useState<{ username: string; view: BoardView | null; problem?: string } | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => setOther(null), [board.version]);

  const asPerson = async () => {
    const name = username.trim();
    if (!name) return;
    setBusy(true);
    try {
      // Impersonating takes the person's own sign-in, which the app's token is not: their password confirms it.
      const session = await withOwnSignIn<{ session: { accessToken: string } }>(
        userName,
        password,
        'POST',
        '/v1/auth/impersonate',
        { username: name, reason: t('boards.preview.reason', { title: board.title }) },
      );
      setPassword('');
      const token = session.session.accessToken;
      try {
        const response = await fetch(`/v1/storyboards/${board.id}/view`, {
          headers: { authorization: `Bearer ${token}` },
        });
        if (response.ok) setOther({ username: name, view: (await response.json()) as BoardView });
        else
          setOther({
            username: name,
            view: null,
            problem: t(response.status === 403 ? 'boards.preview.noPrivilege' : 'boards.preview.hidden', {
              name,
            }),
          });
      } finally {
        await fetch('/v1/auth/token', { method: 'DELETE', headers: { authorization: `Bearer ${token}` } }).catch(
          () => undefined,
        );
      }
    } catch (e) {
      setOther({
        username: name,
        view: null,
        problem:
          e instanceof ApiError && [401, 403, 404].includes(e.status)
            ? t('boards.preview.cannot', { name, reason: e.message })
            : t('common.error', { reason: reason(e) }),
      });
    }
    setBusy(false);
  };

  return (
    <section class="board-preview" aria-labelledby="preview-heading">
      <h2 id="preview-heading">{t('boards.preview')}</h2>
      <div class="row">
        <label for="preview-as">{t('boards.preview.as')}</label>
        <select
          id="preview-as"
          value={viewer}
          onChange={(e) => setViewer((e.target as HTMLSelectElement).value as Viewer)}
        >
          <option value="me">{t('boards.preview.me')}</option>
          <option value="link">{t('boards.preview.link')}</option>
          <option value="person">{t('boards.preview.person')}</option>
        </select>
        {viewer === 'person' && (
          <form
            class="row"
            onSubmit={(e) => {
              e.preventDefault();
              void asPerson();
            }}
          >
            <label for="preview-username">{t('boards.preview.username')}</label>
            <input
              id="preview-username"
              value={username}
              autocomplete="off"
              onInput={(e) => setUsername((e.target as HTMLInputElement).value)}
            />
            <label for="preview-password">{t('boards.ownPassword')}</label>
            <input
              id="preview-password"
              type="password"
              required
              autocomplete="current-password"
              value={password}
              onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
            />
            <button type="submit" disabled={busy}>
              {t('boards.preview.show')}
            </button>
          </form>
        )}
      </div>
      <p class="muted small" id="preview-note">
        {t(
          viewer === 'me'
            ? 'boards.preview.meNote'
            : viewer === 'link'
              ? 'boards.preview.linkNote'
              : 'boards.preview.personNote',
        )}
      </p>
      {viewer === 'person' && other?.problem && (
        <p class="error" role="alert">
          {other.problem}
        </p>
      )}
      <div class={`preview-frame${viewer === 'link' ? ' as-link' : ''}`} id="preview-frame">
        {viewer === 'person' ? other?.view ? <BoardRender view={other.view} /> : null : <BoardRender view={view} />}
      </div>
    </section>
  );
}
