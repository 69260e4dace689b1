import { useState } from 'preact/hooks';
import { signIn } from './auth.ts';
import { t } from './messages.ts';

/** What the invitation link carries; taken out of the address bar at once so it stays out of history. */
function tokenFromAddress(): string {
  const url = new URL(location.href);
  const token = url.searchParams.get('token') ?? '';
  if (token) {
    url.searchParams.delete('token');
    history.replaceState(null, '', url.pathname + url.search + url.hash);
  }
  return token;
}

/**
 * /app/set-password?token=…: the page an invitation link opens (POST /v1/user/{id}/invitation).
 * Public: the person has no password yet. They choose one (the API's password rules), the token is
 * spent, and they sign in with it through the usual sign-in page.
 */
export function SetPassword({ logo }: { logo: preact.ComponentChildren }) {
  const [token] = useState(tokenFromAddress);
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [errors, setErrors] = useState<{ password?: string; repeat?: string; token?: string; form?: string }>({});
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (password !== repeat) {
      setErrors({ repeat: t('setPassword.mismatch') });
      return;
    }
    setErrors({});
    setBusy(true);
    try {
      const response = await fetch('/v1/user/invitation/accept', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token, password }),
      });
      const body = await response.json().catch(() => ({}));
      if (response.ok) {
        setDone(body.username ?? '');
        return;
      }
      const field = (body.details?.[0]?.field ?? '') as string;
      if (response.status === 410) setErrors({ token: t('setPassword.expired') });
      else if (field === 'body.token') setErrors({ token: t('setPassword.used') });
      else if (field === 'body.password') setErrors({ password: body.details[0].message });
      else setErrors({ form: t('common.error', { reason: body.message ?? `HTTP ${response.status}` }) });
    } catch (error) {
      setErrors({ form: t('common.error', { reason: error instanceof Error ? error.message : String(error) }) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="signin" id="main">
      <div class="signin-card">
        {logo}
        <h1>{t('setPassword.title')}</h1>
        {done !== null ? (
          <>
            <p class="notice" role="status" id="set-password-done">
              {t('setPassword.done', { name: done })}
            </p>
            <button type="button" class="primary large" id="sign-in" onClick={() => void signIn('/app/')}>
              {t('signin.button')}
            </button>
          </>
        ) : !token ? (
          <p class="error" role="alert" id="set-password-token-error">
            {t('setPassword.noToken')}
          </p>
        ) : (
          <form class="stack" id="set-password-form" onSubmit={submit} noValidate>
            <p>{t('setPassword.lead')}</p>
            {errors.token && (
              <p class="error" role="alert" id="set-password-token-error">
                {errors.token}
              </p>
            )}
            <div class="field">
              <label for="new-password">{t('setPassword.password')}</label>
              <span class="hint" id="new-password-hint">
                {t('setPassword.rules')}
              </span>
              <input
                id="new-password"
                type="password"
                autocomplete="new-password"
                required
                value={password}
                aria-invalid={errors.password ? 'true' : undefined}
                aria-describedby={errors.password ? 'new-password-hint new-password-error' : 'new-password-hint'}
                onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
              />
              {errors.password && (
                <span class="field-error" id="new-password-error">
                  {errors.password}
                </span>
              )}
            </div>
            <div class="field">
              <label for="repeat-password">{t('setPassword.repeat')}</label>
              <input
                id="repeat-password"
                type="password"
                autocomplete="new-password"
                required
                value={repeat}
                aria-invalid={errors.repeat ? 'true' : undefined}
                aria-describedby={errors.repeat ? 'repeat-password-error' : undefined}
                onInput={(e) => setRepeat((e.target as HTMLInputElement).value)}
              />
              {errors.repeat && (
                <span class="field-error" id="repeat-password-error">
                  {errors.repeat}
                </span>
              )}
            </div>
            {errors.form && (
              <p class="error" role="alert">
                {errors.form}
              </p>
            )}
            <button type="submit" class="primary large" id="set-password-save" disabled={busy}>
              {t('setPassword.save')}
            </button>
          </form>
        )}
      </div>
    </main>
  );
}
