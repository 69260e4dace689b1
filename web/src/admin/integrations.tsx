import { useEffect, useState } from 'preact/hooks';
import { api, reason } from '../api.ts';
import { t } from '../messages.ts';
import { linkClick, navigate } from '../router.ts';
import {
  Ceiling,
  FieldError,
  FormError,
  fieldErrors,
  isForbidden,
  SecretBox,
  TextField,
  when,
  withOwnSignIn,
} from './common.tsx';
import type { SectionProps } from './loader.tsx';
import { Consents, OAuthClients } from './oauth-clients.tsx';

/** Integrations: API keys, webhook endpoints (with an endpoint's own page and delivery log), OAuth clients and your consents. */
export default function Integrations({ id, user }: SectionProps) {
  if (id) return <EndpointPage id={id} />;
  return (
    <>
      <h1>{t('admin.section.integrations')}</h1>
      <ApiKeys user={user} />
      <Endpoints />
      <OAuthClients user={user} />
      <Consents />
    </>
  );
}

interface Role {
  id: string;
  name: string;
  privileges: string[];
}

interface ApiKey {
  id: string;
  name: string;
  keyHint: string;
  roleId: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

type Load<T> =
  | { state: 'loading' }
  | { state: 'forbidden' }
  | { state: 'error'; message: string }
  | { state: 'ready'; value: T };

async function allKeys(includeOld: boolean): Promise<ApiKey[]> {
  const out: ApiKey[] = [];
  let pageCursor: string | null = null;
  for (let page = 0; page < 20; page++) {
    const body: Record<string, unknown> = { maxSize: 100, includeRevoked: includeOld, includeExpired: includeOld };
    if (pageCursor) body.pageCursor = pageCursor;
    const answer: { apiKeys: ApiKey[]; pagination: { nextPageCursor: string | null } } = await api(
      'POST',
      '/api/v1/api-key/list-api-keys',
      body,
    );
    out.push(...answer.apiKeys);
    pageCursor = answer.pagination.nextPageCursor;
    if (!pageCursor) break;
  }
  return out;
}

/** The roles a key may take: all of them when the caller may list roles (those above the caller disabled), else the caller's own. */
async function keyRoles(): Promise<{ roles: Role[] | null; own: Role | null; ownRoleId: string }> {
  const me = await api<{ roleId: string }>('GET', '/v1/user');
  try {
    const roles = await api<Role[]>('GET', '/v1/roles');
    return { roles, own: roles.find((r) => r.id === me.roleId) ?? null, ownRoleId: me.roleId };
  } catch (error) {
    if (isForbidden(error)) return { roles: null, own: null, ownRoleId: me.roleId };
    throw error;
  }
}

function ApiKeys({ user }: { user: SectionProps['user'] }) {
  const [keys, setKeys] = useState<Load<ApiKey[]>>({ state: 'loading' });
  const [includeOld, setIncludeOld] = useState(false);
  const [roles, setRoles] = useState<Awaited<ReturnType<typeof keyRoles>> | null>(null);
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<ApiKey | null>(null);
  const load = async () => {
    try {
      setKeys({ state: 'ready', value: await allKeys(includeOld) });
    } catch (error) {
      setKeys(isForbidden(error) ? { state: 'forbidden' } : { state: 'error', message: reason(error) });
    }
  };
  useEffect(() => void load(), [includeOld]);
  useEffect(() => void keyRoles().then(setRoles, () => setRoles({ roles: null, own: null, ownRoleId: '' })), []);
  const roleName = (roleId: string) =>
    roles?.roles?.find((r) => r.id === roleId)?.name ??
    (roleId === roles?.ownRoleId ? t('keys.ownRole') : roleId.slice(0, 8));
  return (
    <section class="card" aria-labelledby="keys-title">
      <h2 id="keys-title">{t('keys.title')}</h2>
      <p class="hint">
        {t('keys.lead')} {t('keys.noEdit')}
      </p>
      {keys.state === 'forbidden' && <Ceiling what="keys.what" privilege="privilege.api_key_management" />}
      {keys.state === 'error' && (
        <p class="error" role="alert">
          {t('common.error', { reason: keys.message })}
        </p>
      )}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {created && (
        <SecretBox
          id="new-key"
          label={t('keys.created', { name: created.name })}
          value={created.key}
          onDone={() => setCreated(null)}
        />
      )}
      {keys.state === 'ready' && (
        <>
          <KeyForm
            user={user}
            roles={roles}
            onCreated={(name, key) => {
              setCreated({ name, key });
              setNotice(null);
              void load();
            }}
          />
          <h3>{t('keys.title')}</h3>
          <label class="row small">
            <input
              type="checkbox"
              id="keys-old"
              checked={includeOld}
              onChange={(e) => setIncludeOld((e.target as HTMLInputElement).checked)}
            />
            {t('keys.showOld')}
          </label>
          {keys.value.length === 0 ? (
            <p class="muted">{t('keys.none')}</p>
          ) : (
            <div class="table-scroll">
              <table id="api-keys">
                <thead>
                  <tr>
                    <th scope="col">{t('keys.col.name')}</th>
                    <th scope="col">{t('keys.col.hint')}</th>
                    <th scope="col">{t('keys.col.role')}</th>
                    <th scope="col" class="col-optional">
                      {t('keys.col.created')}
                    </th>
                    <th scope="col" class="col-optional">
                      {t('keys.col.expires')}
                    </th>
                    <th scope="col" class="col-optional">
                      {t('keys.col.used')}
                    </th>
                    <th scope="col">{t('keys.col.state')}</th>
                    <td />
                  </tr>
                </thead>
                <tbody>
                  {keys.value.map((k) => {
                    const expired = !k.revokedAt && k.expiresAt !== null && Date.parse(k.expiresAt) <= Date.now();
                    return (
                      <tr key={k.id}>
                        <th scope="row">{k.name}</th>
                        <td class="mono">…{k.keyHint}</td>
                        <td>{roleName(k.roleId)}</td>
                        <td class="col-optional">{when(k.createdAt)}</td>
                        <td class="col-optional">{k.expiresAt ? when(k.expiresAt) : t('admin.never')}</td>
                        <td class="col-optional">{when(k.lastUsedAt)}</td>
                        <td>
                          <span class={`state ${k.revokedAt || expired ? 'bad' : 'ok'}`}>
                            {k.revokedAt
                              ? t('keys.revoked', { date: when(k.revokedAt) })
                              : expired
                                ? t('keys.expired')
                                : t('keys.active')}
                          </span>
                        </td>
                        <td>
                          {!k.revokedAt && (
                            <button
                              type="button"
                              class="danger"
                              aria-label={t('keys.revoke', { name: k.name })}
                              onClick={() => setConfirming(k)}
                            >
                              {t('keys.revokeYes')}
                            </button>
                          )}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )}
          {confirming && (
            <div class="confirm" role="alertdialog" aria-labelledby="revoke-question">
              <p id="revoke-question">{t('keys.revokeConfirm', { name: confirming.name })}</p>
              <div class="row">
                <button
                  type="button"
                  class="danger"
                  id="revoke-yes"
                  onClick={async () => {
                    try {
                      await api('POST', '/api/v1/api-key/revoke-api-key', { id: confirming.id });
                      setNotice(t('keys.revokedDone', { name: confirming.name }));
                      await load();
                    } catch (error) {
                      setNotice(t('common.error', { reason: reason(error) }));
                    }
                    setConfirming(null);
                  }}
                >
                  {t('keys.revokeYes')}
                </button>
                <button type="button" onClick={() => setConfirming(null)}>
                  {t('admin.cancel')}
                </button>
              </div>
            </div>
          )}
        </>
      )}
    </section>
  );
}

function KeyForm({
  user,
  roles,
  onCreated,
}: {
  user: SectionProps['user'];
  roles: Awaited<ReturnType<typeof keyRoles>> | null;
  onCreated: (name: string, key: string) => void;
}) {
  const [name, setName] = useState('');
  const [roleId, setRoleId] = useState('');
  const [expires, setExpires] = useState('');
  const [password, setPassword] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const own = new Set(roles?.own?.privileges ?? []);
  // A role holding a privilege the caller lacks cannot be given to a key: shown, not offered.
  const options = roles?.roles
    ? roles.roles.map((r) => ({
        id: r.id,
        label: r.privileges.every((p) => own.has(p)) ? r.name : t('keys.roleTooHigh', { name: r.name }),
        allowed: r.privileges.every((p) => own.has(p)),
      }))
    : roles
      ? [{ id: roles.ownRoleId, label: t('keys.ownRole'), allowed: true }]
      : [];
  const chosen = roleId || options.find((o) => o.allowed)?.id || '';
  const today = new Date().toISOString().slice(0, 10);
  return (
    <form
      class="stack"
      id="key-form"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setErrors({});
        try {
          const body: Record<string, unknown> = { name, roleId: chosen };
          if (expires) body.expiresAt = new Date(`${expires}T23:59:59`).toISOString();
          const answer = await withOwnSignIn<{ name: string; key: string }>(
            user.userName,
            password,
            'POST',
            '/api/v1/api-key/create-api-key',
            body,
          );
          setName('');
          setExpires('');
          onCreated(answer.name, answer.key);
        } catch (error) {
          const fields = fieldErrors(error);
          setErrors(Object.keys(fields).length > 0 ? fields : { form: reason(error) });
        } finally {
          setPassword('');
          setBusy(false);
        }
      }}
    >
      <h3>{t('keys.new')}</h3>
      <TextField
        id="key-name"
        label={t('keys.name')}
        maxLength={100}
        value={name}
        onInput={setName}
        error={errors.name}
      />
      <div class="field">
        <label for="key-role">{t('keys.role')}</label>
        <select
          id="key-role"
          value={chosen}
          aria-invalid={errors.roleId ? 'true' : undefined}
          aria-describedby={errors.roleId ? 'key-role-error' : undefined}
          onChange={(e) => setRoleId((e.target as HTMLSelectElement).value)}
        >
          {options.map((o) => (
            <option key={o.id} value={o.id} disabled={!o.allowed}>
              {o.label}
            </option>
          ))}
        </select>
        {roles && !roles.roles && <span class="hint">{t('keys.rolesHidden')}</span>}
        <FieldError id="key-role-error" message={errors.roleId} />
      </div>
      <div class="field">
        <label for="key-expires">{t('keys.expires')}</label>
        <input
          id="key-expires"
          type="date"
          min={today}
          value={expires}
          aria-invalid={errors.expiresAt ? 'true' : undefined}
          aria-describedby={errors.expiresAt ? 'key-expires-error' : undefined}
          onInput={(e) => setExpires((e.target as HTMLInputElement).value)}
        />
        <FieldError id="key-expires-error" message={errors.expiresAt} />
      </div>
      <div class="field">
        <label for="key-password">{t('admin.password')}</label>
        <span class="hint" id="key-password-hint">
          {t('admin.ownSignIn')}
        </span>
        <input
          id="key-password"
          type="password"
          required
          autocomplete="current-password"
          value={password}
          aria-invalid={errors.password ? 'true' : undefined}
          aria-describedby={errors.password ? 'key-password-hint key-password-error' : 'key-password-hint'}
          onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
        />
        <FieldError id="key-password-error" message={errors.password} />
      </div>
      <FormError message={errors.form} />
      <div>
        <button type="submit" class="primary" id="key-create" disabled={busy || !chosen}>
          {t('keys.create')}
        </button>
      </div>
    </form>
  );
}

interface Endpoint {
  id: string;
  description: string;
  url: string;
  eventTypes: string[];
  disabled: boolean;
  disabledReason: string | null;
  rateLimit: number | null;
  timeoutSeconds: number;
  oauth: {
    clientId: string;
    tokenUrl: string;
    scope: string[];
    extraParams: Record<string, string>;
    authMethod: 'client_secret_basic' | 'client_secret_post';
  } | null;
  createdDate: string;
}

interface EventType {
  name: string;
  description: string;
}

let eventTypeCache: EventType[] | null = null;
async function eventTypes(): Promise<EventType[]> {
  eventTypeCache ??= await api<EventType[]>('GET', '/v1/webhooks/event-type/list');
  return eventTypeCache;
}

function Endpoints() {
  const [list, setList] = useState<Load<Endpoint[]>>({ state: 'loading' });
  const [created, setCreated] = useState<string | null>(null);
  const load = async () => {
    try {
      setList({ state: 'ready', value: await api<Endpoint[]>('GET', '/v1/webhooks/endpoint/list?limit=250') });
    } catch (error) {
      setList(isForbidden(error) ? { state: 'forbidden' } : { state: 'error', message: reason(error) });
    }
  };
  useEffect(() => void load(), []);
  return (
    <section class="card" aria-labelledby="hooks-title">
      <h2 id="hooks-title">{t('hooks.title')}</h2>
      <p class="hint">{t('hooks.lead')}</p>
      {list.state === 'forbidden' && <Ceiling what="hooks.what" privilege="privilege.webhooks_administration" />}
      {list.state === 'error' && (
        <p class="error" role="alert">
          {t('common.error', { reason: list.message })}
        </p>
      )}
      {created && (
        <SecretBox id="new-hook-secret" label={t('hooks.created')} value={created} onDone={() => setCreated(null)} />
      )}
      {list.state === 'ready' && (
        <>
          {list.value.length === 0 ? (
            <p class="muted">{t('hooks.none')}</p>
          ) : (
            <ul class="endpoint-list" id="endpoints">
              {list.value.map((e) => (
                <li key={e.id}>
                  <a
                    href={`/app/admin/integrations/${e.id}`}
                    aria-label={t('hooks.open', { name: e.description })}
                    onClick={(ev) => linkClick(ev, `/app/admin/integrations/${e.id}`)}
                  >
                    {e.description}
                  </a>
                  <span class="url">{e.url}</span>
                  <span class={`state ${e.disabled ? 'bad' : 'ok'}`}>
                    {e.disabled ? t('hooks.disabled') : t('hooks.enabled')}
                  </span>
                  <span class="small muted">{e.eventTypes.join(', ')}</span>
                </li>
              ))}
            </ul>
          )}
          <EndpointForm
            onSaved={(secret) => {
              setCreated(secret ?? null);
              void load();
            }}
          />
        </>
      )}
    </section>
  );
}

/** Event types by topic, whole topics as `topic.*`, or everything as `*`. */
function EventPicker({
  value,
  onChange,
  invalid,
}: {
  value: string[];
  onChange: (v: string[]) => void;
  invalid?: string;
}) {
  const [types, setTypes] = useState<EventType[]>(eventTypeCache ?? []);
  useEffect(() => void eventTypes().then(setTypes, () => undefined), []);
  const chosen = new Set(value);
  const topics = new Map<string, EventType[]>();
  for (const type of types) {
    const topic = type.name.split('.')[0]!;
    topics.set(topic, [...(topics.get(topic) ?? []), type]);
  }
  const toggle = (name: string, on: boolean) => {
    const next = new Set(chosen);
    if (on) next.add(name);
    else next.delete(name);
    onChange([...next]);
  };
  const all = chosen.has('*');
  return (
    <fieldset class="events" aria-labelledby="events-label" aria-describedby={invalid ? 'events-error' : 'events-hint'}>
      <span class="hint" id="events-hint">
        {t('hooks.eventsHint')}
      </span>
      <label>
        <input type="checkbox" checked={all} onChange={(e) => toggle('*', (e.target as HTMLInputElement).checked)} />
        {t('hooks.everything')}
      </label>
      {[...topics].map(([topic, list]) => {
        const pattern = `${topic}.*`;
        const whole = all || chosen.has(pattern);
        return (
          <fieldset key={topic}>
            <legend>{topic}</legend>
            <label>
              <input
                type="checkbox"
                checked={whole}
                disabled={all}
                onChange={(e) => toggle(pattern, (e.target as HTMLInputElement).checked)}
              />
              {t('hooks.topicAll', { topic, pattern })}
            </label>
            <ul>
              {list.map((type) => (
                <li key={type.name}>
                  <label title={type.description}>
                    <input
                      type="checkbox"
                      value={type.name}
                      checked={whole || chosen.has(type.name)}
                      disabled={whole}
                      onChange={(e) => toggle(type.name, (e.target as HTMLInputElement).checked)}
                    />
                    <span class="mono">{type.name}</span>
                  </label>
                </li>
              ))}
            </ul>
          </fieldset>
        );
      })}
      <FieldError id="events-error" message={invalid} />
    </fieldset>
  );
}

/** Create (no `endpoint`) or change an endpoint. */
function EndpointForm({ endpoint, onSaved }: { endpoint?: Endpoint; onSaved: (secret?: string) => void }) {
  const [description, setDescription] = useState(endpoint?.description ?? '');
  const [url, setUrl] = useState(endpoint?.url ?? '');
  const [events, setEvents] = useState<string[]>(endpoint?.eventTypes ?? []);
  const [rateLimit, setRateLimit] = useState(endpoint?.rateLimit ? String(endpoint.rateLimit) : '');
  const [timeout, setTimeoutSeconds] = useState(String(endpoint?.timeoutSeconds ?? 15));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [done, setDone] = useState(false);
  const field = (name: string) => ({
    'aria-invalid': errors[name] ? ('true' as const) : undefined,
    'aria-describedby': errors[name] ? `hook-${name}-error` : undefined,
  });
  return (
    <form
      class="stack"
      id="endpoint-form"
      onSubmit={async (e) => {
        e.preventDefault();
        setErrors({});
        setDone(false);
        const body = {
          description,
          url,
          eventTypes: events,
          rateLimit: rateLimit ? Number(rateLimit) : null,
          timeoutSeconds: Number(timeout),
        };
        try {
          if (endpoint) {
            await api('PATCH', `/v1/webhooks/endpoint/${endpoint.id}`, body);
            setDone(true);
            onSaved();
          } else {
            const created = await api<{ secret: string }>('POST', '/v1/webhooks/endpoint', [body]);
            setDescription('');
            setUrl('');
            setEvents([]);
            onSaved(created.secret);
          }
        } catch (error) {
          const fields = fieldErrors(error);
          setErrors(Object.keys(fields).length > 0 ? fields : { form: reason(error) });
        }
      }}
    >
      <h3>{endpoint ? t('hooks.edit') : t('hooks.new')}</h3>
      <div class="field">
        <label for="hook-description">{t('hooks.description')}</label>
        <input
          id="hook-description"
          required
          value={description}
          {...field('description')}
          onInput={(e) => setDescription((e.target as HTMLInputElement).value)}
        />
        <FieldError id="hook-description-error" message={errors.description} />
      </div>
      <div class="field">
        <label for="hook-url">{t('hooks.url')}</label>
        <input
          id="hook-url"
          type="url"
          required
          placeholder="https://"
          value={url}
          {...field('url')}
          onInput={(e) => setUrl((e.target as HTMLInputElement).value)}
        />
        <FieldError id="hook-url-error" message={errors.url} />
      </div>
      <div class="field">
        <span class="label" id="events-label">
          {t('hooks.events')}
        </span>
        <EventPicker value={events} onChange={setEvents} invalid={errors.eventTypes} />
      </div>
      <div class="row">
        <div class="field">
          <label for="hook-rate">{t('hooks.rateLimit')}</label>
          <input
            id="hook-rate"
            type="number"
            min={1}
            max={100000}
            value={rateLimit}
            {...field('rateLimit')}
            onInput={(e) => setRateLimit((e.target as HTMLInputElement).value)}
          />
          <FieldError id="hook-rateLimit-error" message={errors.rateLimit} />
        </div>
        <div class="field">
          <label for="hook-timeout">{t('hooks.timeout')}</label>
          <input
            id="hook-timeout"
            type="number"
            min={1}
            max={30}
            value={timeout}
            {...field('timeoutSeconds')}
            onInput={(e) => setTimeoutSeconds((e.target as HTMLInputElement).value)}
          />
          <FieldError id="hook-timeoutSeconds-error" message={errors.timeoutSeconds} />
        </div>
      </div>
      <FormError message={errors.form} />
      {done && (
        <p class="notice" role="status">
          {t('admin.saved')}
        </p>
      )}
      <div>
        <button type="submit" class="primary" id="endpoint-save">
          {endpoint ? t('admin.save') : t('hooks.create')}
        </button>
      </div>
    </form>
  );
}

interface Message {
  id: string;
  eventType: string;
  status: 'pending' | 'delivering' | 'succeeded' | 'failed';
  attempts: number;
  nextAttemptDate: string | null;
  lastStatusCode: number | null;
  createdDate: string;
}

interface Attempt {
  id: string;
  attempt: number;
  date: string;
  success: boolean;
  statusCode: number | null;
  latencyMs: number;
  responseBody: string | null;
  errorClass: string | null;
}

function EndpointPage({ id }: { id: string }) {
  const [endpoint, setEndpoint] = useState<Load<Endpoint>>({ state: 'loading' });
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const [overlap, setOverlap] = useState('24');
  const [notice, setNotice] = useState<string | null>(null);
  const [deleting, setDeleting] = useState(false);
  const load = async () => {
    try {
      setEndpoint({ state: 'ready', value: await api<Endpoint>('GET', `/v1/webhooks/endpoint/${id}`) });
    } catch (error) {
      setEndpoint(isForbidden(error) ? { state: 'forbidden' } : { state: 'error', message: reason(error) });
    }
  };
  useEffect(() => void load(), [id]);
  const run = async (action: () => Promise<void>) => {
    try {
      await action();
    } catch (error) {
      setNotice(t('common.error', { reason: reason(error) }));
    }
  };
  const back = (
    <a class="back" href="/app/admin/integrations" onClick={(e) => linkClick(e, '/app/admin/integrations')}>
      ← {t('admin.back', { name: t('admin.section.integrations') })}
    </a>
  );
  if (endpoint.state === 'loading')
    return (
      <p class="muted" role="status">
        {t('admin.loading')}
      </p>
    );
  if (endpoint.state === 'forbidden')
    return (
      <>
        {back}
        <Ceiling what="hooks.what" privilege="privilege.webhooks_administration" />
      </>
    );
  if (endpoint.state === 'error')
    return (
      <>
        {back}
        <p class="error" role="alert">
          {endpoint.message}
        </p>
      </>
    );
  const e = endpoint.value;
  return (
    <>
      {back}
      <h1>{e.description}</h1>
      <p class="row">
        <span class="mono url">{e.url}</span>
        <span class={`state ${e.disabled ? 'bad' : 'ok'}`} id="endpoint-state">
          {e.disabled ? t('hooks.disabled') : t('hooks.enabled')}
        </span>
      </p>
      {e.disabledReason && <p class="notice">{t('hooks.disabledReason', { reason: e.disabledReason })}</p>}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <section class="card" aria-labelledby="secret-title">
        <h2 id="secret-title">{t('hooks.secret')}</h2>
        <div class="row">
          <button
            type="button"
            id="pause"
            onClick={() =>
              run(async () => {
                await api('PATCH', `/v1/webhooks/endpoint/${id}`, { disabled: !e.disabled });
                await load();
              })
            }
          >
            {e.disabled ? t('hooks.resume') : t('hooks.pause')}
          </button>
          <button
            type="button"
            id="show-secret"
            onClick={() =>
              run(async () => {
                setSecret({
                  label: t('hooks.secret'),
                  value: (await api<{ key: string }>('GET', `/v1/webhooks/endpoint/${id}/secret`)).key,
                });
              })
            }
          >
            {t('hooks.showSecret')}
          </button>
          <label for="overlap">{t('hooks.overlap')}</label>
          <input
            id="overlap"
            type="number"
            min={0}
            max={168}
            value={overlap}
            class="narrow"
            onInput={(ev) => setOverlap((ev.target as HTMLInputElement).value)}
          />
          <button
            type="button"
            id="rotate"
            onClick={() =>
              run(async () => {
                const key = (
                  await api<{ key: string }>('POST', `/v1/webhooks/endpoint/${id}/secret/rotate`, {
                    overlapSeconds: Math.round(Number(overlap || 0) * 3600),
                  })
                ).key;
                setSecret({ label: t('hooks.rotated'), value: key });
              })
            }
          >
            {t('hooks.rotate')}
          </button>
        </div>
        {secret && (
          <SecretBox id="endpoint-secret" label={secret.label} value={secret.value} onDone={() => setSecret(null)} />
        )}
      </section>
      <EndpointOAuth endpoint={e} onChanged={() => void load()} />
      <section class="card" aria-labelledby="log-title">
        <h2 id="log-title">{t('hooks.log')}</h2>
        <DeliveryLog id={id} url={e.url} />
      </section>
      <section class="card">
        <EndpointForm key={e.id} endpoint={e} onSaved={() => void load()} />
        <h3>{t('admin.delete')}</h3>
        {!deleting ? (
          <button type="button" class="danger" id="endpoint-delete" onClick={() => setDeleting(true)}>
            {t('admin.delete')}
          </button>
        ) : (
          <div class="confirm" role="alertdialog" aria-labelledby="delete-question">
            <p id="delete-question">{t('hooks.deleteConfirm')}</p>
            <div class="row">
              <button
                type="button"
                class="danger"
                id="endpoint-delete-yes"
                onClick={() =>
                  run(async () => {
                    await api('DELETE', `/v1/webhooks/endpoint/${id}`);
                    navigate('/app/admin/integrations');
                  })
                }
              >
                {t('admin.confirmDelete', { name: e.description })}
              </button>
              <button type="button" onClick={() => setDeleting(false)}>
                {t('admin.cancel')}
              </button>
            </div>
          </div>
        )}
      </section>
    </>
  );
}

function DeliveryLog({ id, url }: { id: string; url: string }) {
  const [status, setStatus] = useState('');
  const [messages, setMessages] = useState<Message[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [since, setSince] = useState(() =>
    new Date(Date.now() - 86_400_000 - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 16),
  );
  const load = async (after?: string) => {
    const query = new URLSearchParams({ limit: '50' });
    if (status) query.set('status', status);
    if (after) query.set('after', after);
    try {
      const answer = await api<{ messages: Message[]; pagination: { nextCursor: string | null } }>(
        'GET',
        `/v1/webhooks/endpoint/${id}/message/list?${query}`,
      );
      setMessages((old) => (after ? [...(old ?? []), ...answer.messages] : answer.messages));
      setNext(answer.pagination.nextCursor);
    } catch (error) {
      setNotice(t('common.error', { reason: reason(error) }));
    }
  };
  useEffect(() => void load(), [id, status]);
  const recover = async (dryRun: boolean) => {
    try {
      const answer = await api<{ recovered: number }>('POST', `/v1/webhooks/endpoint/${id}/recover`, {
        since: new Date(since).toISOString(),
        dryRun,
      });
      setNotice(t(dryRun ? 'hooks.wouldReplay' : 'hooks.replayed', { count: answer.recovered }));
      if (!dryRun) await load();
    } catch (error) {
      setNotice(t('common.error', { reason: reason(error) }));
    }
  };
  return (
    <>
      <div class="row">
        <label for="log-status">{t('hooks.status')}</label>
        <select id="log-status" value={status} onChange={(e) => setStatus((e.target as HTMLSelectElement).value)}>
          <option value="">{t('hooks.status.all')}</option>
          {(['pending', 'delivering', 'succeeded', 'failed'] as const).map((s) => (
            <option key={s} value={s}>
              {t(`hooks.status.${s}`)}
            </option>
          ))}
        </select>
        <button type="button" id="log-refresh" onClick={() => void load()}>
          {t('hooks.refresh')}
        </button>
      </div>
      <form
        class="row replay"
        onSubmit={(e) => {
          e.preventDefault();
          void recover(false);
        }}
      >
        <span class="label">{t('hooks.replay')}</span>
        <label for="replay-since">{t('hooks.since')}</label>
        <input
          id="replay-since"
          type="datetime-local"
          required
          value={since}
          onInput={(e) => setSince((e.target as HTMLInputElement).value)}
        />
        <button type="button" id="replay-count" onClick={() => void recover(true)}>
          {t('hooks.count')}
        </button>
        <button type="submit" id="replay">
          {t('hooks.replay')}
        </button>
      </form>
      {notice && (
        <p class="notice" role="status" id="log-notice">
          {notice}
        </p>
      )}
      {messages && messages.length === 0 && <p class="muted">{t('hooks.noMessages')}</p>}
      <ul class="messages" id="messages">
        {messages?.map((m) => (
          <MessageItem key={m.id} endpointId={id} url={url} message={m} onResent={() => void load()} />
        ))}
      </ul>
      {next && (
        <button type="button" onClick={() => void load(next)}>
          {t('admin.more')}
        </button>
      )}
    </>
  );
}

function MessageItem({
  endpointId,
  url,
  message,
  onResent,
}: {
  endpointId: string;
  url: string;
  message: Message;
  onResent: () => void;
}) {
  const [attempts, setAttempts] = useState<Attempt[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState(false);
  // An open message follows its attempts as they are made (a refreshed list brings new counts).
  useEffect(() => {
    if (open) void loadAttempts();
  }, [open, message.status, message.attempts]);
  const loadAttempts = async () => {
    try {
      setAttempts(
        (
          await api<{ attempts: Attempt[] }>(
            'GET',
            `/v1/webhooks/endpoint/${endpointId}/attempt/list?messageId=${message.id}&limit=250`,
          )
        ).attempts,
      );
    } catch (e) {
      setError(reason(e));
    }
  };
  return (
    <li class={`message ${message.status}`}>
      <details onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
        <summary>
          <span class={`state ${message.status === 'succeeded' ? 'ok' : message.status === 'failed' ? 'bad' : ''}`}>
            {t(`hooks.status.${message.status}`)}
          </span>{' '}
          <span class="mono">{message.eventType}</span> · {when(message.createdDate)} · {t('hooks.attempts')}:{' '}
          {message.attempts}
          {message.lastStatusCode !== null && <> · HTTP {message.lastStatusCode}</>}
        </summary>
        <div class="row">
          <button
            type="button"
            class="resend"
            onClick={async () => {
              try {
                await api('POST', `/v1/webhooks/endpoint/${endpointId}/message/${message.id}/resend`);
                setError(t('hooks.resent'));
                onResent();
              } catch (e) {
                setError(reason(e));
              }
            }}
          >
            {t('hooks.resend')}
          </button>
          <span class="small muted mono">webhook-id: {message.id}</span>
        </div>
        {error && (
          <p class="notice" role="status">
            {error}
          </p>
        )}
        {attempts?.map((a) => (
          <div class="attempt" key={a.id}>
            <div>
              <strong>{t('hooks.attempt', { n: a.attempt, date: when(a.date) })}</strong>
              <div class="small">{t('hooks.request')}</div>
              <pre>{`POST ${url}\nwebhook-id: ${message.id}\nevent: ${message.eventType}\nsent: ${a.date}`}</pre>
            </div>
            <div>
              <strong>
                <span class={`state ${a.success ? 'ok' : 'bad'}`}>
                  {a.statusCode !== null ? `HTTP ${a.statusCode}` : t('hooks.noAnswer', { error: a.errorClass ?? '?' })}
                </span>{' '}
                {t('hooks.latency', { ms: a.latencyMs })}
              </strong>
              <div class="small">{t('hooks.answer')}</div>
              <pre>{a.responseBody ?? '—'}</pre>
            </div>
          </div>
        ))}
      </details>
    </li>
  );
}

/** The endpoint's OAuth client (client credentials towards the receiver): the secret is write-only. */
function EndpointOAuth({ endpoint, onChanged }: { endpoint: Endpoint; onChanged: () => void }) {
  const current = endpoint.oauth;
  const [tokenUrl, setTokenUrl] = useState(current?.tokenUrl ?? '');
  const [clientId, setClientId] = useState(current?.clientId ?? '');
  const [secret, setSecret] = useState('');
  const [scope, setScope] = useState(current?.scope.join(' ') ?? '');
  const [method, setMethod] = useState(current?.authMethod ?? 'client_secret_basic');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [notice, setNotice] = useState<string | null>(null);
  const field = (name: string) => ({
    'aria-invalid': errors[name] ? ('true' as const) : undefined,
    'aria-describedby': errors[name] ? `hook-oauth-${name}-error` : undefined,
  });
  const url = `/v1/webhooks/endpoint/oauth/${endpoint.id}`;
  return (
    <section class="card" aria-labelledby="hook-oauth-title">
      <h2 id="hook-oauth-title">{t('hooks.oauth')}</h2>
      <p class="hint">{t('hooks.oauthLead')}</p>
      <p id="hook-oauth-current">
        {current
          ? t('hooks.oauthSet', { clientId: current.clientId, tokenUrl: current.tokenUrl })
          : t('hooks.oauthNone')}
        {current && current.scope.length > 0 && <> · {t('hooks.oauthScope', { scope: current.scope.join(' ') })}</>}
      </p>
      {notice && (
        <p class="notice" role="status" id="hook-oauth-notice">
          {notice}
        </p>
      )}
      <form
        class="stack"
        id="hook-oauth-form"
        onSubmit={async (ev) => {
          ev.preventDefault();
          setErrors({});
          setNotice(null);
          try {
            await api('PUT', url, {
              tokenUrl,
              clientId,
              clientSecret: secret,
              scope: scope.split(/\s+/).filter(Boolean),
              authMethod: method,
            });
            setSecret('');
            setNotice(t('hooks.oauthSaved'));
            onChanged();
          } catch (error) {
            const fields = fieldErrors(error);
            setErrors(Object.keys(fields).length > 0 ? fields : { form: reason(error) });
          }
        }}
      >
        <div class="field">
          <label for="hook-oauth-tokenUrl">{t('hooks.oauthTokenUrl')}</label>
          <input
            id="hook-oauth-tokenUrl"
            type="url"
            required
            placeholder="https://"
            value={tokenUrl}
            {...field('tokenUrl')}
            onInput={(ev) => setTokenUrl((ev.target as HTMLInputElement).value)}
          />
          <FieldError id="hook-oauth-tokenUrl-error" message={errors.tokenUrl} />
        </div>
        <div class="field">
          <label for="hook-oauth-clientId">{t('hooks.oauthClientId')}</label>
          <input
            id="hook-oauth-clientId"
            required
            value={clientId}
            {...field('clientId')}
            onInput={(ev) => setClientId((ev.target as HTMLInputElement).value)}
          />
          <FieldError id="hook-oauth-clientId-error" message={errors.clientId} />
        </div>
        <div class="field">
          <label for="hook-oauth-clientSecret">{t('hooks.oauthSecret')}</label>
          <span class="hint" id="hook-oauth-secret-hint">
            {t('hooks.oauthSecretHint')}
          </span>
          <input
            id="hook-oauth-clientSecret"
            type="password"
            required
            autocomplete="new-password"
            value={secret}
            aria-invalid={errors.clientSecret ? 'true' : undefined}
            aria-describedby={
              errors.clientSecret ? 'hook-oauth-secret-hint hook-oauth-clientSecret-error' : 'hook-oauth-secret-hint'
            }
            onInput={(ev) => setSecret((ev.target as HTMLInputElement).value)}
          />
          <FieldError id="hook-oauth-clientSecret-error" message={errors.clientSecret} />
        </div>
        <div class="field">
          <label for="hook-oauth-scope">{t('hooks.oauthScopeField')}</label>
          <input
            id="hook-oauth-scope"
            value={scope}
            {...field('scope')}
            onInput={(ev) => setScope((ev.target as HTMLInputElement).value)}
          />
          <FieldError id="hook-oauth-scope-error" message={errors.scope} />
        </div>
        <div class="field">
          <label for="hook-oauth-method">{t('hooks.oauthMethod')}</label>
          <select
            id="hook-oauth-method"
            value={method}
            onChange={(ev) => setMethod((ev.target as HTMLSelectElement).value as typeof method)}
          >
            <option value="client_secret_basic">{t('hooks.oauthBasic')}</option>
            <option value="client_secret_post">{t('hooks.oauthPost')}</option>
          </select>
        </div>
        <FormError message={errors.form} />
        <div class="row">
          <button type="submit" class="primary" id="hook-oauth-save">
            {t('hooks.oauthSave')}
          </button>
          {current && (
            <button
              type="button"
              id="hook-oauth-remove"
              onClick={async () => {
                try {
                  await api('DELETE', url);
                  setNotice(t('hooks.oauthRemoved'));
                  setClientId('');
                  setTokenUrl('');
                  setScope('');
                  onChanged();
                } catch (error) {
                  setNotice(t('common.error', { reason: reason(error) }));
                }
              }}
            >
              {t('hooks.oauthRemove')}
            </button>
          )}
        </div>
      </form>
    </section>
  );
}
