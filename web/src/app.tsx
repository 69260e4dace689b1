import type { ComponentType } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, reason } from './api.ts';
import {
  type Acting,
  completeSignIn,
  hasStoredSession,
  onActingChange,
  onAuthChange,
  refresh,
  returnedFromSignOut,
  signIn,
  signOut,
  signOutEverywhere,
  stopActing,
} from './auth.ts';
import { AdminPage } from './admin/loader.tsx';
import { AdaptiveTemplatesRoute } from './adaptive-template-action.tsx';
import { AssetPage } from './asset.tsx';
import { BulkEdit } from './bulk.tsx';
import { SelectionCdnPublish } from './cdn-publish.tsx';
import { BoardPage, Boards } from './boards.tsx';
import { Collections, CollectionPage, AddToCollection } from './collections.tsx';
import { Library } from './library.tsx';
import { t } from './messages.ts';
import { linkClick, navigate, useRoute } from './router.ts';
import { EMPTY_QUERY, type Query } from './search.ts';
import { SetPassword } from './set-password.tsx';
import { applyTheme, currentTheme, type Theme } from './theme.ts';
import { UploadPanel, useUploads } from './upload-panel.tsx';
import { filesFromDrop } from './upload.ts';

interface User {
  userId: string;
  userName: string;
  firstName?: string;
  lastName?: string;
  friendlyName?: string;
}

type Auth = { state: 'loading' } | { state: 'signedOut'; message?: string } | { state: 'signedIn'; user: User };

export function App() {
  const route = useRoute();
  const [auth, setAuth] = useState<Auth>({ state: 'loading' });

  useEffect(() => {
    const loadUser = async () => setAuth({ state: 'signedIn', user: await api<User>('GET', '/v1/user') });
    (async () => {
      try {
        // The invitation page is public: whoever may be signed in here, it stays what it is.
        if (route.page === 'set-password') setAuth({ state: 'signedOut' });
        else if (route.page === 'callback') {
          const returnTo = await completeSignIn(new URL(location.href));
          navigate(returnTo, true);
          await loadUser();
        } else if (hasStoredSession()) {
          await refresh();
          await loadUser();
        } else {
          setAuth(
            returnedFromSignOut() ? { state: 'signedOut', message: t('signedout.title') } : { state: 'signedOut' },
          );
        }
      } catch (error) {
        if (route.page === 'callback') navigate('/app/', true);
        setAuth({
          state: 'signedOut',
          message: route.page === 'callback' ? t('signin.failed', { reason: reason(error) }) : t('signin.expired'),
        });
      }
    })();
    return onAuthChange((signedIn) => {
      if (!signedIn) setAuth({ state: 'signedOut', message: t('signedout.title') });
    });
  }, []);

  // Acting as someone else, or back: the app is theirs (their profile, their rights) from scratch.
  const [acting, setActing] = useState<Acting | null>(null);
  const [epoch, setEpoch] = useState(0);
  useEffect(
    () =>
      onActingChange(async (as) => {
        setActing(as);
        try {
          await loadSignedIn();
        } catch {
          // A refused profile while acting has ended the acting (api.ts); the next change reloads.
        }
        setEpoch((n) => n + 1);
      }),
    [],
  );
  const loadSignedIn = async () => setAuth({ state: 'signedIn', user: await api<User>('GET', '/v1/user') });

  if (route.page === 'set-password') return <SetPassword logo={<Logo />} />;
  if (auth.state === 'loading')
    return (
      <p class="center muted" role="status">
        {t('app.loading')}
      </p>
    );
  if (auth.state === 'signedOut') return <SignIn message={auth.message} />;
  return <Shell key={epoch} user={auth.user} acting={acting} />;
}

function SignIn({ message }: { message?: string }) {
  return (
    <main class="signin" id="main">
      <div class="signin-card">
        <Logo />
        <h1>{t('signin.title')}</h1>
        <p>{t('signin.lead')}</p>
        {message && (
          <p class="notice" role="status">
            {message}
          </p>
        )}
        <button type="button" class="primary large" id="sign-in" onClick={() => void signIn()}>
          {t('signin.button')}
        </button>
      </div>
    </main>
  );
}

/** A page in its own chunk (with the administration styles), loaded on first visit. */
function Lazy({ load, user }: { load: () => Promise<{ default: ComponentType<{ user: User }> }>; user: User }) {
  const [Page, setPage] = useState<ComponentType<{ user: User }> | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    load().then(
      (m) => setPage(() => m.default),
      (e) => setError(reason(e)),
    );
  }, []);
  if (error)
    return (
      <p role="alert" class="error">
        {t('common.error', { reason: error })}
      </p>
    );
  return Page ? (
    <Page user={user} />
  ) : (
    <p class="muted" role="status">
      {t('app.loading')}
    </p>
  );
}

function Logo() {
  return (
    <span class="logo" aria-hidden="true">
      <svg aria-hidden="true" viewBox="0 0 30 30" width="28" height="28">
        <rect width="14" height="14" rx="2" fill="#2f6fde" />
        <rect x="16" width="14" height="14" rx="2" fill="#f2a93b" />
        <rect y="16" width="14" height="14" rx="2" fill="#3bb273" />
        <rect x="16" y="16" width="14" height="14" rx="2" fill="#e4572e" />
      </svg>
    </span>
  );
}

function Shell({ user, acting }: { user: User; acting: Acting | null }) {
  const route = useRoute();
  const [theme, setTheme] = useState<Theme>(currentTheme());
  const [query, setQuery] = useState<Query>(EMPTY_QUERY);
  const [text, setText] = useState('');
  const [selection, setSelection] = useState<Set<string>>(new Set());
  const [revision, setRevision] = useState(0);
  const [dragging, setDragging] = useState(false);
  const [bulkOpen, setBulkOpen] = useState(false);
  const [uploadsOpen, setUploadsOpen] = useState(false);
  const [menuOpen, setMenuOpen] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const uploads = useUploads(
    () => setRevision((n) => n + 1),
    () => setUploadsOpen(true),
  );
  const fileInput = useRef<HTMLInputElement>(null);
  const folderInput = useRef<HTMLInputElement>(null);

  // Search as you type: the query follows the text a moment after the last key.
  useEffect(() => {
    const timer = setTimeout(
      () =>
        setQuery((q) =>
          q.text === text ? q : { ...q, text, sort: text && q.sort === 'lastUpdatedEpoch' ? q.sort : q.sort },
        ),
      150,
    );
    return () => clearTimeout(timer);
  }, [text]);

  // Drop files or folders anywhere.
  useEffect(() => {
    let depth = 0;
    const isFiles = (e: DragEvent) => [...(e.dataTransfer?.types ?? [])].includes('Files');
    const enter = (e: DragEvent) => {
      if (!isFiles(e)) return;
      depth++;
      setDragging(true);
    };
    const leave = (e: DragEvent) => {
      if (!isFiles(e)) return;
      depth = Math.max(0, depth - 1);
      if (depth === 0) setDragging(false);
    };
    const over = (e: DragEvent) => {
      if (isFiles(e)) e.preventDefault();
    };
    const drop = async (e: DragEvent) => {
      if (!isFiles(e) || e.defaultPrevented) return;
      e.preventDefault();
      depth = 0;
      setDragging(false);
      const files = await filesFromDrop(e.dataTransfer!);
      if (files.length > 0) {
        setUploadsOpen(true);
        uploads.queue.add(files);
      }
    };
    addEventListener('dragenter', enter);
    addEventListener('dragleave', leave);
    addEventListener('dragover', over);
    addEventListener('drop', drop);
    return () => {
      removeEventListener('dragenter', enter);
      removeEventListener('dragleave', leave);
      removeEventListener('dragover', over);
      removeEventListener('drop', drop);
    };
  }, []);

  const pick = (input: HTMLInputElement | null) => {
    const files = [...(input?.files ?? [])].map((file) => ({
      file,
      path: (file as File & { webkitRelativePath?: string }).webkitRelativePath || file.name,
    }));
    if (files.length > 0) {
      setUploadsOpen(true);
      uploads.queue.add(files);
    }
    if (input) input.value = '';
  };

  const toggleTheme = () => {
    const next = theme === 'dark' ? 'light' : 'dark';
    setTheme(next);
    applyTheme(next, true);
  };
  const name = user.friendlyName || [user.firstName, user.lastName].filter(Boolean).join(' ') || user.userName;
  const selected = useMemo(() => [...selection], [selection]);

  return (
    <div class="shell">
      <a class="skip" href="#main">
        {t('app.skip')}
      </a>
      <header class="topbar">
        <a class="brand" href="/app/" onClick={(e) => linkClick(e, '/app/')}>
          <Logo />
          <span>{t('app.name')}</span>
        </a>
        <nav aria-label={t('nav.main')} class="mainnav">
          <a
            href="/app/"
            aria-current={route.page === 'library' ? 'page' : undefined}
            onClick={(e) => linkClick(e, '/app/')}
          >
            {t('nav.library')}
          </a>
          <a
            href="/app/collections"
            aria-current={route.page === 'collections' || route.page === 'collection' ? 'page' : undefined}
            onClick={(e) => linkClick(e, '/app/collections')}
          >
            {t('nav.collections')}
          </a>
          <a
            href="/app/templates"
            aria-current={route.page === 'templates' || route.page === 'template' ? 'page' : undefined}
            onClick={(e) => linkClick(e, '/app/templates')}
          >
            {t('nav.templates')}
          </a>
          <a
            href="/app/boards"
            aria-current={route.page === 'boards' || route.page === 'board' ? 'page' : undefined}
            onClick={(e) => linkClick(e, '/app/boards')}
          >
            {t('nav.boards')}
          </a>
          <a
            href="/app/admin"
            aria-current={route.page === 'admin' ? 'page' : undefined}
            onClick={(e) => linkClick(e, '/app/admin')}
          >
            {t('nav.admin')}
          </a>
        </nav>
        {/* biome-ignore lint/a11y/useSemanticElements: <search> is not in every supported browser yet; role="search" on the form is the same landmark */}
        <form
          role="search"
          class="search"
          onSubmit={(e) => {
            e.preventDefault();
            setQuery({ ...query, text });
            if (route.page !== 'library') navigate('/app/');
          }}
        >
          <label class="visually-hidden" for="search">
            {t('search.label')}
          </label>
          <input
            id="search"
            type="search"
            value={text}
            placeholder={t('search.placeholder')}
            autocomplete="off"
            onInput={(e) => {
              setText((e.target as HTMLInputElement).value);
              if (route.page !== 'library') navigate('/app/');
            }}
          />
        </form>
        <div class="actions">
          <button type="button" class="primary" id="upload-button" onClick={() => setUploadsOpen(true)}>
            {t('upload.button')}
          </button>
          <input ref={fileInput} id="file-input" type="file" multiple hidden onChange={() => pick(fileInput.current)} />
          <input
            ref={folderInput}
            id="folder-input"
            type="file"
            multiple
            hidden
            {...{ webkitdirectory: true }}
            onChange={() => pick(folderInput.current)}
          />
          <button
            type="button"
            class="ghost icon"
            aria-label={t('theme.toggle', { mode: t(theme === 'dark' ? 'theme.light' : 'theme.dark') })}
            onClick={toggleTheme}
          >
            {theme === 'dark' ? '☀' : '☾'}
          </button>
          <div class="menu">
            <button
              type="button"
              class="ghost"
              id="user-menu"
              aria-haspopup="true"
              aria-expanded={menuOpen}
              title={t('user.menu', { name })}
              onClick={() => setMenuOpen(!menuOpen)}
            >
              <span class="avatar" aria-hidden="true">
                {name.slice(0, 1).toUpperCase()}
              </span>
              <span class="username">{name}</span>
            </button>
            {menuOpen && (
              <ul class="menu-list" onKeyDown={(e) => e.key === 'Escape' && setMenuOpen(false)}>
                <li>
                  <a
                    href="/app/sessions"
                    id="my-sessions"
                    onClick={(e) => {
                      setMenuOpen(false);
                      linkClick(e, '/app/sessions');
                    }}
                  >
                    {t('user.sessions')}
                  </a>
                </li>
                <li>
                  <button type="button" id="sign-out" onClick={() => void uploads.queue.forget().then(signOut)}>
                    {t('user.signout')}
                  </button>
                </li>
                <li>
                  <button
                    type="button"
                    id="sign-out-everywhere"
                    onClick={async () => {
                      try {
                        await uploads.queue.forget();
                        await signOutEverywhere();
                      } catch (e) {
                        setNotice(t('common.error', { reason: reason(e) }));
                      }
                    }}
                  >
                    {t('user.signoutEverywhere')}
                  </button>
                </li>
              </ul>
            )}
          </div>
        </div>
      </header>
      {acting && (
        <div class="acting-banner" role="status" id="acting-banner">
          <span>{t('acting.banner', { name })}</span>
          <button type="button" id="acting-stop" onClick={() => void stopActing()}>
            {t('acting.stop')}
          </button>
        </div>
      )}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <main id="main" class="content">
        {route.page === 'library' && (
          <Library
            query={query}
            setQuery={setQuery}
            selection={selection}
            setSelection={setSelection}
            revision={revision}
            toolbarExtra={
              <>
                <button type="button" id="bulk-edit" onClick={() => setBulkOpen(true)}>
                  {t('bulk.button')}
                </button>
                <AddToCollection ids={selected} onDone={setNotice} />
                <SelectionCdnPublish ids={selected} />
              </>
            }
          />
        )}
        {route.page === 'asset' && (
          <AssetPage id={route.id} uploads={uploads.queue} onChanged={() => setRevision((n) => n + 1)} />
        )}
        {route.page === 'collections' && <Collections />}
        {route.page === 'collection' && <CollectionPage id={route.id} />}
        {route.page === 'templates' && <AdaptiveTemplatesRoute />}
        {route.page === 'template' && <AdaptiveTemplatesRoute id={route.id} />}
        {route.page === 'boards' && <Boards />}
        {route.page === 'board' && <BoardPage id={route.id} userName={user.userName} />}
        {route.page === 'admin' && <AdminPage section={route.section} id={route.id} user={user} />}
        {route.page === 'sessions' && <Lazy load={() => import('./admin/sessions.tsx')} user={user} />}
      </main>
      {bulkOpen && (
        <BulkEdit
          ids={selected}
          onClose={(changed) => {
            setBulkOpen(false);
            if (changed) setRevision((n) => n + 1);
          }}
        />
      )}
      {uploadsOpen && (
        <UploadPanel
          queue={uploads.queue}
          onClose={() => setUploadsOpen(false)}
          onChooseFiles={() => fileInput.current?.click()}
          onChooseFolder={() => folderInput.current?.click()}
        />
      )}
      {dragging && (
        <div class="dropzone" aria-hidden="true">
          <p>{t('upload.drop')}</p>
        </div>
      )}
    </div>
  );
}
