import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, reason } from '../api.ts';
import { t } from '../messages.ts';
import { Ceiling, FieldError, FormError, isForbidden, SecretBox, TextField, withOwnSignIn } from './common.tsx';
import type { SectionProps } from './loader.tsx';

/** A client of the organization, as GET /v1/oauth2/clients answers. */
interface OAuthClient {
  clientId: string;
  name: string;
  redirectUris: string[];
  confidential: boolean;
  /** The organization's "Tessera web app" client (client_id tessera-web): signing in to the app depends on it. */
  builtIn: boolean;
  createdEpoch: number;
}

interface Consent {
  clientId: string;
  name: string;
  builtIn: boolean;
  scopes: string[];
  sessions: number;
  grantedEpoch: number;
  lastUsedEpoch: number;
}

type Load<T> =
  | { state: 'loading' }
  | { state: 'forbidden' }
  | { state: 'error'; message: string }
  | { state: 'ready'; value: T };

const epoch = (ms: number) => new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** The API names a redirect URI's problem `body.redirectUris.<i>`: shown on the URI field, naming the line. */
function clientErrors(error: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!(error instanceof ApiError)) return { form: reason(error) };
  for (const d of error.details) {
    const uri = /redirectUris\.(\d+)$/.exec(d.field);
    if (uri) out.redirectUris ??= t('oauth.uriLine', { n: Number(uri[1]) + 1, message: d.message });
    else out[d.field.split('.').pop()!] ??= d.message;
  }
  if (Object.keys(out).length === 0) out.form = error.message;
  return out;
}

const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

/** The password field every credential change asks for (the app's own token cannot make such changes). */
function PasswordField({
  id,
  value,
  onInput,
  error,
}: {
  id: string;
  value: string;
  onInput: (v: string) => void;
  error?: string;
}) {
  return (
    <div class="field">
      <label for={id}>{t('admin.password')}</label>
      <span class="hint" id={`${id}-hint`}>
        {t('admin.ownSignIn')}
      </span>
      <input
        id={id}
        type="password"
        required
        autocomplete="current-password"
        value={value}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? `${id}-hint ${id}-error` : `${id}-hint`}
        onInput={(e) => onInput((e.target as HTMLInputElement).value)}
      />
      <FieldError id={`${id}-error`} message={error} />
    </div>
  );
}

function UrisField({
  id,
  value,
  onInput,
  error,
}: {
  id: string;
  value: string;
  onInput: (v: string) => void;
  error?: string;
}) {
  return (
    <div class="field">
      <label for={id}>{t('oauth.redirectUris')}</label>
      <span class="hint" id={`${id}-hint`}>
        {t('oauth.redirectUrisHint')}
      </span>
      <textarea
        id={id}
        required
        rows={3}
        value={value}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? `${id}-hint ${id}-error` : `${id}-hint`}
        onInput={(e) => onInput((e.target as HTMLTextAreaElement).value)}
      />
      <FieldError id={`${id}-error`} message={error} />
    </div>
  );
}

/** OAuth clients of the organization (User Management): register, edit, rotate the secret, delete. */
export function OAuthClients({ user }: { user: SectionProps['user'] }) {
  const [list, setList] = useState<Load<OAuthClient[]>>({ state: 'loading' });
  const [secret, setSecret] = useState<{ label: string; clientId: string; value: string } | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [open, setOpen] = useState<{ id: string; what: 'edit' | 'rotate' | 'delete' } | null>(null);
  const load = async () => {
    try {
      setList({
        state: 'ready',
        value: (await api<{ clients: OAuthClient[] }>('GET', '/v1/oauth2/clients')).clients,
      });
    } catch (error) {
      setList(isForbidden(error) ? { state: 'forbidden' } : { state: 'error', message: reason(error) });
    }
  };
  useEffect(() => void load(), []);
  const done = async (message: string) => {
    setOpen(null);
    setNotice(message);
    await load();
  };
  return (
    <section class="card" aria-labelledby="oauth-title">
      <h2 id="oauth-title">{t('oauth.title')}</h2>
      <p class="hint">{t('oauth.lead')}</p>
      {list.state === 'forbidden' && <Ceiling what="oauth.what" privilege="privilege.user_management" />}
      {list.state === 'error' && (
        <p class="error" role="alert">
          {t('common.error', { reason: list.message })}
        </p>
      )}
      {notice && (
        <p class="notice" role="status" id="oauth-notice">
          {notice}
        </p>
      )}
      {secret && (
        <div class="stack">
          <p class="mono small" id="oauth-secret-client">
            {t('oauth.clientIdIs', { id: secret.clientId })}
          </p>
          <SecretBox id="oauth-secret" label={secret.label} value={secret.value} onDone={() => setSecret(null)} />
        </div>
      )}
      {list.state === 'ready' && (
        <>
          <ClientForm
            user={user}
            onCreated={(c) => {
              setNotice(c.clientSecret ? null : t('oauth.createdPublic', { name: c.name, id: c.clientId }));
              if (c.clientSecret)
                setSecret({
                  label: t('oauth.secretOnce', { name: c.name }),
                  clientId: c.clientId,
                  value: c.clientSecret,
                });
              void load();
            }}
          />
          <h3>{t('oauth.registered')}</h3>
          {list.value.length === 0 ? (
            <p class="muted">{t('oauth.none')}</p>
          ) : (
            <ul class="plain-list oauth-clients" id="oauth-clients">
              {list.value.map((c) => (
                <li key={c.clientId} class="oauth-client">
                  <div class="row">
                    <strong>{c.name}</strong>
                    {c.builtIn && <span class="state ok">{t('oauth.builtIn')}</span>}
                    <span class="state">{c.confidential ? t('oauth.confidential') : t('oauth.public')}</span>
                  </div>
                  <dl class="client-facts small">
                    <dt>{t('oauth.clientId')}</dt>
                    <dd class="mono">{c.builtIn ? `tessera-web (${c.clientId})` : c.clientId}</dd>
                    <dt>{t('oauth.redirectUris')}</dt>
                    <dd class="mono">
                      {c.builtIn ? t('oauth.builtInRedirect') : c.redirectUris.map((u) => <div key={u}>{u}</div>)}
                    </dd>
                    <dt>{t('oauth.created')}</dt>
                    <dd>{epoch(c.createdEpoch)}</dd>
                  </dl>
                  {c.builtIn && <p class="hint">{t('oauth.builtInHint')}</p>}
                  <div class="row">
                    {!c.builtIn && (
                      <button
                        type="button"
                        aria-label={t('oauth.editName', { name: c.name })}
                        aria-expanded={open?.id === c.clientId && open.what === 'edit'}
                        onClick={() => setOpen({ id: c.clientId, what: 'edit' })}
                      >
                        {t('oauth.edit')}
                      </button>
                    )}
                    {!c.builtIn && c.confidential && (
                      <button
                        type="button"
                        aria-label={t('oauth.rotateName', { name: c.name })}
                        onClick={() => setOpen({ id: c.clientId, what: 'rotate' })}
                      >
                        {t('oauth.rotate')}
                      </button>
                    )}
                    <button
                      type="button"
                      class="danger"
                      aria-label={t('oauth.deleteName', { name: c.name })}
                      onClick={() => setOpen({ id: c.clientId, what: 'delete' })}
                    >
                      {t('admin.delete')}
                    </button>
                  </div>
                  {open?.id === c.clientId && open.what === 'edit' && (
                    <EditClient
                      user={user}
                      client={c}
                      onCancel={() => setOpen(null)}
                      onSaved={() => void done(t('oauth.saved', { name: c.name }))}
                    />
                  )}
                  {open?.id === c.clientId && open.what === 'rotate' && (
                    <RotateSecret
                      user={user}
                      client={c}
                      onCancel={() => setOpen(null)}
                      onRotated={(value) => {
                        setSecret({ label: t('oauth.rotatedOnce', { name: c.name }), clientId: c.clientId, value });
                        void done(t('oauth.rotated', { name: c.name }));
                      }}
                    />
                  )}
                  {open?.id === c.clientId && open.what === 'delete' && (
                    <DeleteClient
                      client={c}
                      onCancel={() => setOpen(null)}
                      onDeleted={() => void done(t('oauth.deleted', { name: c.name }))}
                    />
                  )}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}

function ClientForm({
  user,
  onCreated,
}: {
  user: SectionProps['user'];
  onCreated: (c: OAuthClient & { clientSecret?: string }) => void;
}) {
  const [name, setName] = useState('');
  const [uris, setUris] = useState('');
  const [confidential, setConfidential] = useState(true);
  const [password, setPassword] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="stack"
      id="oauth-form"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setErrors({});
        try {
          const created = await withOwnSignIn<OAuthClient & { clientSecret?: string }>(
            user.userName,
            password,
            'POST',
            '/v1/oauth2/clients',
            { name, redirectUris: lines(uris), confidential },
          );
          setName('');
          setUris('');
          onCreated(created);
        } catch (error) {
          setErrors(clientErrors(error));
        } finally {
          setPassword('');
          setBusy(false);
        }
      }}
    >
      <h3>{t('oauth.new')}</h3>
      <TextField
        id="oauth-name"
        label={t('oauth.name')}
        maxLength={100}
        value={name}
        onInput={setName}
        error={errors.name}
      />
      <UrisField id="oauth-uris" value={uris} onInput={setUris} error={errors.redirectUris} />
      <label class="row small">
        <input
          type="checkbox"
          id="oauth-confidential"
          checked={confidential}
          onChange={(e) => setConfidential((e.target as HTMLInputElement).checked)}
        />
        {t('oauth.confidentialChoice')}
      </label>
      <p class="hint">{t('oauth.grants')}</p>
      <PasswordField id="oauth-password" value={password} onInput={setPassword} error={errors.password} />
      <FormError message={errors.form} />
      <div>
        <button type="submit" class="primary" id="oauth-create" disabled={busy}>
          {t('oauth.create')}
        </button>
      </div>
    </form>
  );
}

function EditClient({
  user,
  client,
  onCancel,
  onSaved,
}: {
  user: SectionProps['user'];
  client: OAuthClient;
  onCancel: () => void;
  onSaved: () => void;
}) {
  const [name, setName] = useState(client.name);
  const [uris, setUris] = useState(client.redirectUris.join('\n'));
  const [password, setPassword] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  return (
    <form
      class="stack"
      id="oauth-edit"
      aria-label={t('oauth.editName', { name: client.name })}
      onSubmit={async (e) => {
        e.preventDefault();
        setErrors({});
        try {
          await withOwnSignIn(user.userName, password, 'PATCH', `/v1/oauth2/clients/${client.clientId}`, {
            name,
            redirectUris: lines(uris),
          });
          onSaved();
        } catch (error) {
          setErrors(clientErrors(error));
        } finally {
          setPassword('');
        }
      }}
    >
      <TextField
        id="oauth-edit-name"
        label={t('oauth.name')}
        maxLength={100}
        value={name}
        onInput={setName}
        error={errors.name}
      />
      <UrisField id="oauth-edit-uris" value={uris} onInput={setUris} error={errors.redirectUris} />
      <PasswordField id="oauth-edit-password" value={password} onInput={setPassword} error={errors.password} />
      <FormError message={errors.form} />
      <div class="row">
        <button type="submit" class="primary" id="oauth-edit-save">
          {t('admin.save')}
        </button>
        <button type="button" onClick={onCancel}>
          {t('admin.cancel')}
        </button>
      </div>
    </form>
  );
}

function RotateSecret({
  user,
  client,
  onCancel,
  onRotated,
}: {
  user: SectionProps['user'];
  client: OAuthClient;
  onCancel: () => void;
  onRotated: (secret: string) => void;
}) {
  const [password, setPassword] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  return (
    <div class="confirm" role="alertdialog" aria-labelledby="oauth-rotate-question">
      <form
        class="stack"
        onSubmit={async (e) => {
          e.preventDefault();
          setErrors({});
          try {
            const answer = await withOwnSignIn<{ clientSecret: string }>(
              user.userName,
              password,
              'POST',
              `/v1/oauth2/clients/${client.clientId}/secret`,
              {},
            );
            onRotated(answer.clientSecret);
          } catch (error) {
            setErrors(clientErrors(error));
          } finally {
            setPassword('');
          }
        }}
      >
        <p id="oauth-rotate-question">{t('oauth.rotateConfirm', { name: client.name })}</p>
        <PasswordField id="oauth-rotate-password" value={password} onInput={setPassword} error={errors.password} />
        <FormError message={errors.form} />
        <div class="row">
          <button type="submit" class="danger" id="oauth-rotate-yes">
            {t('oauth.rotate')}
          </button>
          <button type="button" onClick={onCancel}>
            {t('admin.cancel')}
          </button>
        </div>
      </form>
    </div>
  );
}

function DeleteClient({
  client,
  onCancel,
  onDeleted,
}: {
  client: OAuthClient;
  onCancel: () => void;
  onDeleted: () => void;
}) {
  const [understood, setUnderstood] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <div class="confirm" role="alertdialog" aria-labelledby="oauth-delete-question">
      <p id="oauth-delete-question">
        {client.builtIn ? t('oauth.deleteBuiltIn') : t('oauth.deleteConfirm', { name: client.name })}
      </p>
      {client.builtIn && (
        <label class="row small">
          <input
            type="checkbox"
            id="oauth-delete-understood"
            checked={understood}
            onChange={(e) => setUnderstood((e.target as HTMLInputElement).checked)}
          />
          {t('oauth.deleteBuiltInUnderstood')}
        </label>
      )}
      <FormError message={error ?? undefined} />
      <div class="row">
        <button
          type="button"
          class="danger"
          id="oauth-delete-yes"
          disabled={client.builtIn && !understood}
          onClick={async () => {
            try {
              await api('DELETE', `/v1/oauth2/clients/${client.clientId}`);
              onDeleted();
            } catch (e) {
              setError(t('common.error', { reason: reason(e) }));
            }
          }}
        >
          {t('admin.confirmDelete', { name: client.name })}
        </button>
        <button type="button" onClick={onCancel}>
          {t('admin.cancel')}
        </button>
      </div>
    </div>
  );
}

/** The signed-in person's consents: the OAuth clients holding open sessions in their name, each revocable. */
export function Consents() {
  const [list, setList] = useState<Load<Consent[]>>({ state: 'loading' });
  const [confirming, setConfirming] = useState<Consent | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const load = async () => {
    try {
      setList({
        state: 'ready',
        value: (await api<{ consents: Consent[] }>('GET', '/v1/oauth2/consents')).consents,
      });
    } catch (error) {
      setList({ state: 'error', message: reason(error) });
    }
  };
  useEffect(() => void load(), []);
  return (
    <section class="card" aria-labelledby="consents-title">
      <h2 id="consents-title">{t('consents.title')}</h2>
      <p class="hint">{t('consents.lead')}</p>
      {list.state === 'error' && (
        <p class="error" role="alert">
          {t('common.error', { reason: list.message })}
        </p>
      )}
      {notice && (
        <p class="notice" role="status" id="consents-notice">
          {notice}
        </p>
      )}
      {list.state === 'ready' &&
        (list.value.length === 0 ? (
          <p class="muted">{t('consents.none')}</p>
        ) : (
          <div class="table-scroll">
            <table id="consents">
              <thead>
                <tr>
                  <th scope="col">{t('consents.col.client')}</th>
                  <th scope="col">{t('consents.col.scopes')}</th>
                  <th scope="col" class="col-optional">
                    {t('consents.col.sessions')}
                  </th>
                  <th scope="col" class="col-optional">
                    {t('consents.col.granted')}
                  </th>
                  <th scope="col" class="col-optional">
                    {t('consents.col.used')}
                  </th>
                  <td />
                </tr>
              </thead>
              <tbody>
                {list.value.map((c) => (
                  <tr key={c.clientId}>
                    <th scope="row">
                      {c.name} {c.builtIn && <span class="state ok">{t('oauth.builtIn')}</span>}
                    </th>
                    <td class="mono">{c.scopes.join(' ')}</td>
                    <td class="col-optional">{c.sessions}</td>
                    <td class="col-optional">{epoch(c.grantedEpoch)}</td>
                    <td class="col-optional">{epoch(c.lastUsedEpoch)}</td>
                    <td>
                      <button
                        type="button"
                        class="danger"
                        aria-label={t('consents.revokeName', { name: c.name })}
                        onClick={() => setConfirming(c)}
                      >
                        {t('consents.revoke')}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ))}
      {confirming && (
        <div class="confirm" role="alertdialog" aria-labelledby="consent-question">
          <p id="consent-question">
            {confirming.builtIn
              ? t('consents.revokeBuiltIn')
              : t('consents.revokeConfirm', { name: confirming.name, count: confirming.sessions })}
          </p>
          <div class="row">
            <button
              type="button"
              class="danger"
              id="consent-revoke-yes"
              onClick={async () => {
                try {
                  const answer = await api<{ revoked: number }>('DELETE', `/v1/oauth2/consents/${confirming.clientId}`);
                  setNotice(t('consents.revoked', { name: confirming.name, count: answer.revoked }));
                  await load();
                } catch (error) {
                  setNotice(t('common.error', { reason: reason(error) }));
                }
                setConfirming(null);
              }}
            >
              {t('consents.revoke')}
            </button>
            <button type="button" onClick={() => setConfirming(null)}>
              {t('admin.cancel')}
            </button>
          </div>
        </div>
      )}
    </section>
  );
}
