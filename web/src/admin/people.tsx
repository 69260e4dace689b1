import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, reason } from '../api.ts';
import { startActing } from '../auth.ts';
import { t } from '../messages.ts';
import {
  Ceiling,
  EditorActions,
  FieldError,
  FormError,
  fieldErrors,
  isForbidden,
  SecretBox,
  TextField,
  withOwnSignIn,
} from './common.tsx';
import type { SectionProps } from './loader.tsx';
import { SessionList } from './sessions.tsx';

interface Role {
  id: string;
  name: string;
  description: string;
  privileges: string[];
}
interface Privilege {
  id: string;
  name: string;
  description: string;
  enabled: boolean;
}
interface Group {
  groupId: string;
  groupName: string;
  description: string;
}
interface Permission {
  permissionId: string;
  id: string;
  name: string;
}
interface Template {
  templateId: string;
  templateName: string;
  description: string;
  securityDenormalized: { groupId: string; permissions: string[] }[];
}

/** A set-password link, shown once after it is made (POST /v1/user/{id}/invitation). */
interface Invitation {
  name: string;
  url: string;
  expires: string;
}

type Load<T> =
  | { state: 'loading' }
  | { state: 'forbidden' }
  | { state: 'error'; message: string }
  | { state: 'ready'; value: T };

async function loadInto<T>(set: (l: Load<T>) => void, get: () => Promise<T>): Promise<void> {
  try {
    set({ state: 'ready', value: await get() });
  } catch (e) {
    set(isForbidden(e) ? { state: 'forbidden' } : { state: 'error', message: reason(e) });
  }
}

function Problem({ load }: { load: Load<unknown> }) {
  if (load.state === 'error')
    return (
      <p class="error" role="alert">
        {t('common.error', { reason: load.message })}
      </p>
    );
  if (load.state === 'loading')
    return (
      <p class="muted" role="status">
        {t('admin.loading')}
      </p>
    );
  return null;
}

/** People and access: roles and their privileges, groups, security templates with their group × permission grid. */
export default function People({ user }: SectionProps) {
  const [groups, setGroups] = useState<Load<Group[]>>({ state: 'loading' });
  const reloadGroups = () => loadInto(setGroups, () => api<Group[]>('GET', '/v1/security/groups'));
  useEffect(() => void reloadGroups(), []);
  return (
    <>
      <h1>{t('admin.section.people')}</h1>
      <Users me={user} groups={groups.state === 'ready' ? groups.value : []} />
      <Roles />
      <Groups groups={groups} reload={reloadGroups} />
      <Templates groups={groups.state === 'ready' ? groups.value : []} />
    </>
  );
}

/** The caller's own privileges: from the privilege list when they may read it, else from their role. */
async function ownPrivileges(roles: Role[]): Promise<{ all: Privilege[] | null; held: Set<string> }> {
  try {
    const list = (await api<{ privileges: Privilege[] }>('GET', '/v1/roles/privileges')).privileges;
    return { all: list, held: new Set(list.filter((p) => p.enabled).map((p) => p.id)) };
  } catch {
    const me = await api<{ roleId: string }>('GET', '/v1/user');
    return { all: null, held: new Set(roles.find((r) => r.id === me.roleId)?.privileges ?? []) };
  }
}

function Roles() {
  const [roles, setRoles] = useState<Load<Role[]>>({ state: 'loading' });
  const [mine, setMine] = useState<{ all: Privilege[] | null; held: Set<string> } | null>(null);
  const [editing, setEditing] = useState<Role | 'new' | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const load = () =>
    loadInto(setRoles, async () => {
      const list = await api<Role[]>('GET', '/v1/roles');
      setMine(await ownPrivileges(list));
      return list;
    });
  useEffect(() => void load(), []);
  const names = new Map((mine?.all ?? []).map((p) => [p.id, p.name]));
  const label = (id: string) => names.get(id) ?? id;
  const tooHigh = (r: Role) => mine !== null && r.privileges.some((p) => !mine.held.has(p));
  return (
    <section class="card" aria-labelledby="roles-title">
      <h2 id="roles-title">{t('people.roles')}</h2>
      <p class="hint">{t('people.rolesLead')}</p>
      {roles.state === 'forbidden' && <Ceiling what="people.rolesWhat" privilege="privilege.role_management" />}
      <Problem load={roles} />
      {notice && (
        <p class="notice" role="status" id="roles-notice">
          {notice}
        </p>
      )}
      {roles.state === 'ready' && (
        <>
          <ul class="plain-list" id="roles">
            {roles.value.map((r) => (
              <li key={r.id}>
                <strong>{r.name}</strong>{' '}
                <span class="small muted">{r.privileges.map(label).join(', ') || t('admin.none')}</span>{' '}
                {tooHigh(r) ? (
                  <span class="small muted">{t('people.roleAbove')}</span>
                ) : (
                  <button
                    type="button"
                    aria-label={t('people.editRole', { name: r.name })}
                    onClick={() => setEditing(r)}
                  >
                    {t('people.edit')}
                  </button>
                )}
              </li>
            ))}
          </ul>
          {editing === null ? (
            <button type="button" class="primary" id="role-new" onClick={() => setEditing('new')}>
              {t('people.newRole')}
            </button>
          ) : (
            mine && (
              <RoleForm
                key={editing === 'new' ? 'new' : editing.id}
                role={editing === 'new' ? null : editing}
                privileges={mine.all ?? [...mine.held].map((id) => ({ id, name: id, description: '', enabled: true }))}
                held={mine.held}
                onDone={(message) => {
                  setEditing(null);
                  setNotice(message);
                  void load();
                }}
                onCancel={() => setEditing(null)}
              />
            )
          )}
        </>
      )}
    </section>
  );
}

function RoleForm({
  role,
  privileges,
  held,
  onDone,
  onCancel,
}: {
  role: Role | null;
  privileges: Privilege[];
  held: Set<string>;
  onDone: (message: string) => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState(role?.name ?? '');
  const [chosen, setChosen] = useState<Set<string>>(new Set(role?.privileges ?? []));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const fail = (e: unknown) => {
    const f = fieldErrors(e);
    setErrors(Object.keys(f).length > 0 ? f : { form: reason(e) });
  };
  return (
    <form
      class="stack"
      id="role-form"
      onSubmit={async (e) => {
        e.preventDefault();
        setErrors({});
        try {
          const body = { name, privileges: [...chosen] };
          if (role) await api('PATCH', `/v1/roles/${role.id}`, body);
          else await api('POST', '/v1/roles', body);
          onDone(t('people.roleSaved', { name }));
        } catch (err) {
          fail(err);
        }
      }}
    >
      <h3>{role ? t('people.editRole', { name: role.name }) : t('people.newRole')}</h3>
      <TextField
        id="role-name"
        label={t('people.name')}
        maxLength={100}
        value={name}
        onInput={setName}
        error={errors.name}
      />
      <fieldset class="checks">
        <legend>{t('people.privileges')}</legend>
        {privileges.map((p) => (
          <label key={p.id} title={p.description}>
            <input
              type="checkbox"
              value={p.id}
              checked={chosen.has(p.id)}
              disabled={!held.has(p.id)}
              onChange={(e) => {
                const copy = new Set(chosen);
                if ((e.target as HTMLInputElement).checked) copy.add(p.id);
                else copy.delete(p.id);
                setChosen(copy);
              }}
            />
            {held.has(p.id) ? p.name : t('people.notHeld', { name: p.name })}
          </label>
        ))}
      </fieldset>
      <FormError message={errors.form} />
      <EditorActions
        id="role"
        onCancel={onCancel}
        deletes={
          role
            ? {
                name: role.name,
                run: async () => {
                  try {
                    await api('DELETE', `/v1/roles/${role.id}`);
                    onDone(t('people.roleDeleted', { name: role.name }));
                  } catch (err) {
                    fail(err);
                  }
                },
              }
            : undefined
        }
      />
    </form>
  );
}

function Groups({ groups, reload }: { groups: Load<Group[]>; reload: () => Promise<void> }) {
  const [name, setName] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [notice, setNotice] = useState<string | null>(null);
  const [renaming, setRenaming] = useState<{ id: string; name: string } | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const run = async (what: () => Promise<unknown>, done: string) => {
    setErrors({});
    try {
      await what();
      setNotice(done);
      await reload();
      return true;
    } catch (e) {
      const f = fieldErrors(e);
      setErrors(Object.keys(f).length > 0 ? f : { form: reason(e) });
      return false;
    }
  };
  return (
    <section class="card" aria-labelledby="groups-title">
      <h2 id="groups-title">{t('people.groups')}</h2>
      <p class="hint">{t('people.groupsLead')}</p>
      {groups.state === 'forbidden' && <Ceiling what="people.groupsWhat" privilege="privilege.user_management" />}
      <Problem load={groups} />
      {notice && (
        <p class="notice" role="status" id="groups-notice">
          {notice}
        </p>
      )}
      <FormError message={errors.form} />
      {groups.state === 'ready' && (
        <>
          <ul class="plain-list" id="groups">
            {groups.value.map((g) => (
              <li key={g.groupId}>
                {renaming?.id === g.groupId ? (
                  <form
                    class="row"
                    onSubmit={async (e) => {
                      e.preventDefault();
                      if (
                        await run(
                          () => api('PATCH', `/v1/security/groups/${g.groupId}`, { groupName: renaming.name }),
                          t('people.groupSaved', { name: renaming.name }),
                        )
                      )
                        setRenaming(null);
                    }}
                  >
                    <label for="group-rename">{t('people.rename', { name: g.groupName })}</label>
                    <input
                      id="group-rename"
                      required
                      value={renaming.name}
                      onInput={(e) => setRenaming({ id: g.groupId, name: (e.target as HTMLInputElement).value })}
                    />
                    <button type="submit" id="group-rename-save">
                      {t('admin.save')}
                    </button>
                    <button type="button" onClick={() => setRenaming(null)}>
                      {t('admin.cancel')}
                    </button>
                  </form>
                ) : (
                  <>
                    <strong>{g.groupName}</strong>{' '}
                    <button
                      type="button"
                      aria-label={t('people.rename', { name: g.groupName })}
                      onClick={() => setRenaming({ id: g.groupId, name: g.groupName })}
                    >
                      {t('people.renameShort')}
                    </button>{' '}
                    {deleting === g.groupId ? (
                      <button
                        type="button"
                        class="danger"
                        id="group-delete-yes"
                        onClick={() =>
                          void run(
                            () => api('DELETE', `/v1/security/groups/${g.groupId}`),
                            t('people.groupDeleted', { name: g.groupName }),
                          )
                        }
                      >
                        {t('admin.confirmDelete', { name: g.groupName })}
                      </button>
                    ) : (
                      <button
                        type="button"
                        class="danger"
                        aria-label={t('people.deleteNamed', { name: g.groupName })}
                        onClick={() => setDeleting(g.groupId)}
                      >
                        {t('admin.delete')}
                      </button>
                    )}
                  </>
                )}
              </li>
            ))}
          </ul>
          <form
            class="row"
            id="group-form"
            onSubmit={async (e) => {
              e.preventDefault();
              if (
                await run(
                  () => api('POST', '/v1/security/groups', { groupName: name }),
                  t('people.groupSaved', { name }),
                )
              )
                setName('');
            }}
          >
            <label for="group-name">{t('people.newGroup')}</label>
            <input
              id="group-name"
              required
              maxLength={100}
              value={name}
              aria-invalid={errors.groupName ? 'true' : undefined}
              aria-describedby={errors.groupName ? 'group-name-error' : undefined}
              onInput={(e) => setName((e.target as HTMLInputElement).value)}
            />
            <button type="submit" class="primary" id="group-create">
              {t('people.create')}
            </button>
            <FieldError id="group-name-error" message={errors.groupName} />
          </form>
        </>
      )}
    </section>
  );
}

function Templates({ groups }: { groups: Group[] }) {
  const [templates, setTemplates] = useState<Load<Template[]>>({ state: 'loading' });
  const [permissions, setPermissions] = useState<Permission[]>([]);
  const [editing, setEditing] = useState<Template | 'new' | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const load = () =>
    loadInto(setTemplates, async () => {
      const list = await api<Template[]>('GET', '/v1/security/template');
      setPermissions((await api<{ permissions: Permission[] }>('GET', '/v1/security/permissions')).permissions);
      return list;
    });
  useEffect(() => void load(), []);
  return (
    <section class="card" aria-labelledby="templates-title">
      <h2 id="templates-title">{t('people.templates')}</h2>
      <p class="hint">{t('people.templatesLead')}</p>
      {templates.state === 'forbidden' && (
        <Ceiling what="people.templatesWhat" privilege="privilege.security_template_management" />
      )}
      <Problem load={templates} />
      {notice && (
        <p class="notice" role="status" id="templates-notice">
          {notice}
        </p>
      )}
      {templates.state === 'ready' && (
        <>
          <ul class="plain-list" id="templates">
            {templates.value.map((tpl) => (
              <li key={tpl.templateId}>
                <strong>{tpl.templateName}</strong>{' '}
                <span class="small muted">
                  {t('people.templateGroups', {
                    count: tpl.securityDenormalized.filter((g) => g.permissions.length).length,
                  })}
                </span>{' '}
                <button
                  type="button"
                  aria-label={t('people.editTemplate', { name: tpl.templateName })}
                  onClick={() => setEditing(tpl)}
                >
                  {t('people.edit')}
                </button>
              </li>
            ))}
          </ul>
          {editing === null ? (
            <button type="button" class="primary" id="template-new" onClick={() => setEditing('new')}>
              {t('people.newTemplate')}
            </button>
          ) : (
            <TemplateForm
              key={editing === 'new' ? 'new' : editing.templateId}
              template={editing === 'new' ? null : editing}
              groups={groups}
              permissions={permissions}
              onDone={(message) => {
                setEditing(null);
                setNotice(message);
                void load();
              }}
              onCancel={() => setEditing(null)}
            />
          )}
        </>
      )}
    </section>
  );
}

function TemplateForm({
  template,
  groups,
  permissions,
  onDone,
  onCancel,
}: {
  template: Template | null;
  groups: Group[];
  permissions: Permission[];
  onDone: (message: string) => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState(template?.templateName ?? '');
  const [grid, setGrid] = useState<Map<string, Set<string>>>(
    () => new Map((template?.securityDenormalized ?? []).map((g) => [g.groupId, new Set(g.permissions)])),
  );
  const [errors, setErrors] = useState<Record<string, string>>({});
  const fail = (e: unknown) => {
    const f = fieldErrors(e);
    setErrors(Object.keys(f).length > 0 ? f : { form: reason(e) });
  };
  const toggle = (groupId: string, permissionId: string, on: boolean) => {
    const copy = new Map(grid);
    const set = new Set(copy.get(groupId) ?? []);
    if (on) set.add(permissionId);
    else set.delete(permissionId);
    copy.set(groupId, set);
    setGrid(copy);
  };
  return (
    <form
      class="stack wide"
      id="template-form"
      onSubmit={async (e) => {
        e.preventDefault();
        setErrors({});
        const securityDenormalized = groups.map((g) => ({
          groupId: g.groupId,
          permissions: [...(grid.get(g.groupId) ?? [])],
        }));
        try {
          if (template)
            await api('PATCH', `/v1/security/template/${template.templateId}`, {
              templateName: name,
              securityDenormalized,
            });
          else
            await api('POST', '/v1/security/template', {
              templateName: name,
              securityDenormalized: securityDenormalized.filter((g) => g.permissions.length > 0),
            });
          onDone(t('people.templateSaved', { name }));
        } catch (err) {
          fail(err);
        }
      }}
    >
      <h3>{template ? t('people.editTemplate', { name: template.templateName }) : t('people.newTemplate')}</h3>
      <TextField
        id="template-name"
        label={t('people.name')}
        maxLength={100}
        value={name}
        onInput={setName}
        error={errors.templateName}
      />
      <p class="hint">{t('people.gridCeiling')}</p>
      <div class="table-scroll">
        <table id="template-grid" class="grid">
          <caption>{t('people.grid')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('people.group')}</th>
              {permissions.map((p) => (
                <th scope="col" key={p.permissionId}>
                  {p.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {groups.map((g) => (
              <tr key={g.groupId}>
                <th scope="row">{g.groupName}</th>
                {permissions.map((p) => (
                  <td key={p.permissionId}>
                    <input
                      type="checkbox"
                      aria-label={t('people.cell', { group: g.groupName, permission: p.name })}
                      checked={grid.get(g.groupId)?.has(p.permissionId) ?? false}
                      onChange={(e) => toggle(g.groupId, p.permissionId, (e.target as HTMLInputElement).checked)}
                    />
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <FormError message={errors.form} />
      <EditorActions
        id="template"
        onCancel={onCancel}
        deletes={
          template
            ? {
                name: template.templateName,
                run: async () => {
                  try {
                    await api('DELETE', `/v1/security/template/${template.templateId}`);
                    onDone(t('people.templateDeleted', { name: template.templateName }));
                  } catch (err) {
                    fail(err);
                  }
                },
              }
            : undefined
        }
      />
    </form>
  );
}

interface User {
  userId: string;
  userName: string | null;
  emailId: string;
  firstName: string;
  lastName: string;
  friendlyName: string;
  roleId: string;
  status: 'enabled' | 'disabled' | 'pending';
  accountType: string;
  groups: string[];
}

/**
 * Users: search (everyone by default), create, and per person their role, groups, enabled state
 * and password. Every change to someone else takes the caller's own sign-in (docs/auth.md), so
 * each asks for the caller's password (withOwnSignIn).
 */
function Users({ me, groups }: { me: SectionProps['user']; groups: Group[] }) {
  const [text, setText] = useState('');
  const [users, setUsers] = useState<Load<User[]>>({ state: 'loading' });
  const [roles, setRoles] = useState<Role[]>([]);
  const [held, setHeld] = useState<Set<string>>(new Set());
  const [open, setOpen] = useState<User | 'new' | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [invitation, setInvitation] = useState<Invitation | null>(null);
  const [actAs, setActAs] = useState<User | null>(null);
  const load = (query = text) =>
    loadInto(setUsers, async () => {
      const answer = await api<{ data: User[] }>(
        'GET',
        `/v1/user/search/${encodeURIComponent(query.trim() || '*')}?limit=100`,
      );
      return answer.data;
    });
  useEffect(() => {
    void load('*');
    api<Role[]>('GET', '/v1/roles').then(
      async (list) => {
        setRoles(list);
        setHeld((await ownPrivileges(list)).held);
      },
      () => undefined,
    );
  }, []);
  const roleName = (id: string) => roles.find((r) => r.id === id)?.name ?? '';
  // Someone whose role holds privileges the caller lacks is not theirs to change (the API says the same).
  const roleWithin = (id: string) => (roles.find((r) => r.id === id)?.privileges ?? []).every((p) => held.has(p));
  const groupName = (id: string) => groups.find((g) => g.groupId === id)?.groupName ?? '';
  // Acting as someone: the privilege, and nobody holding more than the caller (the API decides the
  // same, also on group permissions): a control that may not be used is disabled, with its reason.
  const canImpersonate = held.has('impersonate');
  const impersonateBlock = (u: User): string | null =>
    !canImpersonate
      ? 'impersonate-ceiling'
      : !roleWithin(u.roleId)
        ? `above-${u.userId}`
        : u.status !== 'enabled'
          ? `inactive-${u.userId}`
          : null;
  return (
    <section class="card" aria-labelledby="users-title">
      <h2 id="users-title">{t('people.users')}</h2>
      <p class="hint">{t('people.usersLead')}</p>
      {users.state === 'forbidden' && <Ceiling what="people.usersWhat" privilege="privilege.user_management" />}
      {notice && (
        <p class="notice" role="status" id="users-notice">
          {notice}
        </p>
      )}
      {invitation && (
        <div class="stack" id="invitation">
          <p class="hint">{t('people.invitationLead', { name: invitation.name, date: invitation.expires })}</p>
          <SecretBox
            id="invitation-link"
            label={t('people.invitationLink', { name: invitation.name })}
            value={invitation.url}
            onDone={() => setInvitation(null)}
          />
        </div>
      )}
      {users.state === 'ready' && roles.length > 0 && !canImpersonate && (
        <Ceiling id="impersonate-ceiling" what="people.impersonateWhat" privilege="privilege.impersonate" />
      )}
      {users.state !== 'forbidden' && (
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            void load();
          }}
        >
          <label for="user-search">{t('people.searchUsers')}</label>
          <input
            id="user-search"
            type="search"
            value={text}
            onInput={(e) => setText((e.target as HTMLInputElement).value)}
          />
          <button type="submit">{t('people.search')}</button>
        </form>
      )}
      <Problem load={users} />
      {users.state === 'ready' && (
        <>
          <div class="table-scroll">
            <table id="users">
              <thead>
                <tr>
                  <th scope="col">{t('people.person')}</th>
                  <th scope="col" class="col-optional">
                    {t('people.email')}
                  </th>
                  <th scope="col">{t('people.role')}</th>
                  <th scope="col" class="col-optional">
                    {t('people.groups')}
                  </th>
                  <th scope="col">{t('people.status')}</th>
                  <td />
                </tr>
              </thead>
              <tbody>
                {users.value.map((u) => (
                  <tr key={u.userId}>
                    <th scope="row">
                      {u.friendlyName} <span class="small muted">({u.userName})</span>
                    </th>
                    <td class="col-optional">{u.emailId}</td>
                    <td>{roleName(u.roleId)}</td>
                    <td class="col-optional">{u.groups.map(groupName).join(', ')}</td>
                    <td>
                      <span class={`state ${u.status === 'enabled' ? 'ok' : 'bad'}`}>
                        {t(`people.status.${u.status}`)}
                      </span>
                    </td>
                    <td class="row-actions">
                      {u.userId !== me.userId && !roleWithin(u.roleId) && (
                        <span class="small muted" id={`above-${u.userId}`}>
                          {t('people.userAbove')}
                        </span>
                      )}
                      {u.userId !== me.userId && u.status !== 'enabled' && (
                        <span class="visually-hidden" id={`inactive-${u.userId}`}>
                          {t('people.impersonateStatus')}
                        </span>
                      )}
                      {u.userId !== me.userId && roleWithin(u.roleId) && (
                        <button
                          type="button"
                          aria-label={t('people.manage', { name: u.userName ?? u.friendlyName })}
                          onClick={() => {
                            setActAs(null);
                            setOpen(u);
                          }}
                        >
                          {t('people.manageShort')}
                        </button>
                      )}
                      {u.userId !== me.userId && (
                        <button
                          type="button"
                          class="impersonate"
                          aria-label={t('people.impersonateNamed', { name: u.userName ?? u.friendlyName })}
                          disabled={impersonateBlock(u) !== null}
                          aria-describedby={impersonateBlock(u) ?? undefined}
                          onClick={() => {
                            setOpen(null);
                            setActAs(u);
                          }}
                        >
                          {t('people.impersonate')}
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {actAs && <ImpersonateForm key={actAs.userId} me={me} user={actAs} onCancel={() => setActAs(null)} />}
          {open === null ? (
            <button
              type="button"
              class="primary"
              id="user-new"
              onClick={() => {
                setActAs(null);
                setOpen('new');
              }}
            >
              {t('people.newUser')}
            </button>
          ) : (
            <UserForm
              key={open === 'new' ? 'new' : open.userId}
              me={me}
              user={open === 'new' ? null : open}
              roles={roles}
              held={held}
              groups={groups}
              onDone={(message, invited) => {
                setNotice(message);
                setInvitation(invited ?? null);
                setOpen(null);
                void load();
              }}
              onCancel={() => setOpen(null)}
            />
          )}
          {open !== null && open !== 'new' && (
            <SessionList key={open.userId} userId={open.userId} name={open.userName ?? open.friendlyName} />
          )}
        </>
      )}
    </section>
  );
}

function UserForm({
  me,
  user,
  roles,
  held,
  groups,
  onDone,
  onCancel,
}: {
  me: SectionProps['user'];
  user: User | null;
  roles: Role[];
  held: Set<string>;
  groups: Group[];
  onDone: (message: string, invitation?: Invitation) => void;
  onCancel: () => void;
}) {
  const allowed = (r: Role) => r.privileges.every((p) => held.has(p));
  const [first, setFirst] = useState(user?.firstName ?? '');
  const [last, setLast] = useState(user?.lastName ?? '');
  const [friendly, setFriendly] = useState(user?.friendlyName ?? '');
  const [email, setEmail] = useState(user?.emailId ?? '');
  const [username, setUsername] = useState(user?.userName ?? '');
  const [roleId, setRoleId] = useState(user?.roleId ?? roles.find(allowed)?.id ?? '');
  const [memberOf, setMemberOf] = useState<Set<string>>(
    new Set(user?.groups ?? groups.filter((g) => g.groupName === 'Everyone').map((g) => g.groupId)),
  );
  const [newPassword, setNewPassword] = useState('');
  const [password, setPassword] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const name = user?.userName ?? username;
  const send = async (method: 'POST' | 'PUT' | 'PATCH', path: string, body: unknown, done: string) => {
    setErrors({});
    try {
      type Answer = { userId?: string; url?: string; expiresAt?: string };
      let answer = await withOwnSignIn<Answer>(me.userName, password, method, path, body);
      // A local user created without a password gets an invitation at once, with the same confirmation.
      if (!user && !newPassword && answer.userId)
        answer = await withOwnSignIn<Answer>(me.userName, password, 'POST', `/v1/user/${answer.userId}/invitation`, {});
      onDone(
        done,
        answer.url && answer.expiresAt
          ? { name, url: answer.url, expires: new Date(answer.expiresAt).toLocaleDateString() }
          : undefined,
      );
    } catch (e) {
      // A wrong password of the caller's own (the step-up sign-in) belongs on that field.
      if (e instanceof ApiError && e.status === 401) setErrors({ ownPassword: e.message });
      else {
        const f = fieldErrors(e);
        setErrors(Object.keys(f).length > 0 ? f : { form: reason(e) });
      }
    } finally {
      setPassword('');
    }
  };
  const text = (
    id: string,
    label: string,
    value: string,
    set: (v: string) => void,
    field: string,
    type: 'text' | 'email' | 'password' = 'text',
    required = true,
  ) => (
    <TextField
      id={id}
      label={label}
      value={value}
      onInput={set}
      error={errors[field]}
      type={type}
      required={required}
    />
  );
  return (
    <form
      class="stack"
      id="user-form"
      onSubmit={(e) => {
        e.preventDefault();
        const common = {
          firstName: first,
          lastName: last,
          friendlyName: friendly,
          email,
          userRoleId: roleId,
          groups: [...memberOf],
        };
        if (user) void send('PATCH', `/v1/user/${user.userId}`, common, t('people.userSaved', { name }));
        else
          void send(
            'POST',
            '/v1/user',
            { ...common, username, accountType: 'local', ...(newPassword ? { password: newPassword } : {}) },
            t('people.userCreated', { name: username }),
          );
      }}
    >
      <h3>{user ? t('people.manage', { name }) : t('people.newUser')}</h3>
      <div class="row">
        {text('user-first', t('people.firstName'), first, setFirst, 'firstName')}
        {text('user-last', t('people.lastName'), last, setLast, 'lastName')}
        {text('user-friendly', t('people.friendlyName'), friendly, setFriendly, 'friendlyName')}
      </div>
      <div class="row">
        {text('user-email', t('people.email'), email, setEmail, 'email', 'email')}
        {!user && text('user-username', t('people.username'), username, setUsername, 'username')}
      </div>
      <div class="field">
        <label for="user-role">{t('people.role')}</label>
        <select id="user-role" value={roleId} onChange={(e) => setRoleId((e.target as HTMLSelectElement).value)}>
          {roles.map((r) => (
            <option key={r.id} value={r.id} disabled={!allowed(r)}>
              {allowed(r) ? r.name : t('keys.roleTooHigh', { name: r.name })}
            </option>
          ))}
        </select>
      </div>
      <fieldset class="checks">
        <legend>{t('people.memberships')}</legend>
        {groups.map((g) => (
          <label key={g.groupId}>
            <input
              type="checkbox"
              checked={memberOf.has(g.groupId)}
              onChange={(e) => {
                const copy = new Set(memberOf);
                if ((e.target as HTMLInputElement).checked) copy.add(g.groupId);
                else copy.delete(g.groupId);
                setMemberOf(copy);
              }}
            />
            {g.groupName}
          </label>
        ))}
      </fieldset>
      {!user &&
        text(
          'user-new-password',
          t('people.initialPassword'),
          newPassword,
          setNewPassword,
          'password',
          'password',
          false,
        )}
      <div class="field">
        <label for="user-own-password">{t('admin.password')}</label>
        <span class="hint" id="user-own-password-hint">
          {t('people.ownSignIn')}
        </span>
        <input
          id="user-own-password"
          type="password"
          required
          autocomplete="current-password"
          value={password}
          aria-invalid={errors.ownPassword ? 'true' : undefined}
          aria-describedby={
            errors.ownPassword ? 'user-own-password-hint user-own-password-error' : 'user-own-password-hint'
          }
          onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
        />
        <FieldError id="user-own-password-error" message={errors.ownPassword} />
      </div>
      <FormError message={errors.form} />
      <div class="row">
        <button type="submit" class="primary" id="user-save">
          {user ? t('admin.save') : t('people.create')}
        </button>
        <button type="button" onClick={onCancel}>
          {t('admin.cancel')}
        </button>
        {user && (
          <button
            type="button"
            class={user.status === 'enabled' ? 'danger' : ''}
            id="user-status"
            onClick={() =>
              void send(
                'PATCH',
                `/v1/user/${user.userId}`,
                { status: user.status === 'enabled' ? 'disabled' : 'enabled' },
                t(user.status === 'enabled' ? 'people.userDisabled' : 'people.userEnabled', { name }),
              )
            }
          >
            {user.status === 'enabled' ? t('people.disable') : t('people.enable')}
          </button>
        )}
      </div>
      {user && user.accountType === 'local' && (
        <div class="row">
          <div class="field">
            <label for="user-reset-password">{t('people.resetPassword')}</label>
            <input
              id="user-reset-password"
              type="password"
              autocomplete="new-password"
              value={newPassword}
              aria-invalid={errors.newPassword ? 'true' : undefined}
              aria-describedby={errors.newPassword ? 'user-reset-password-error' : undefined}
              onInput={(e) => setNewPassword((e.target as HTMLInputElement).value)}
            />
            <FieldError id="user-reset-password-error" message={errors.newPassword} />
          </div>
          <button
            type="button"
            id="user-reset"
            disabled={!newPassword}
            onClick={() =>
              void send('PUT', `/v1/user/${user.userId}/password`, { newPassword }, t('people.passwordSet', { name }))
            }
          >
            {t('people.setPassword')}
          </button>
          <button
            type="button"
            id="user-invite"
            onClick={() => void send('POST', `/v1/user/${user.userId}/invitation`, {}, t('people.invited', { name }))}
          >
            {t('people.invite')}
          </button>
        </div>
      )}
    </form>
  );
}

/**
 * Acting as someone (POST /v1/auth/impersonate): it takes the caller's own sign-in, so their
 * password confirms it; the app then runs on the impersonation token with a banner to stop.
 */
function ImpersonateForm({ me, user, onCancel }: { me: SectionProps['user']; user: User; onCancel: () => void }) {
  const name = user.userName ?? user.friendlyName;
  const [password, setPassword] = useState('');
  const [why, setWhy] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  return (
    <form
      class="stack"
      id="impersonate-form"
      onSubmit={async (e) => {
        e.preventDefault();
        setErrors({});
        try {
          const answer = await withOwnSignIn<{ session: { accessToken: string; expireEpoch: number } }>(
            me.userName,
            password,
            'POST',
            '/v1/auth/impersonate',
            { username: user.userName, ...(why.trim() ? { reason: why.trim() } : {}) },
          );
          startActing({
            accessToken: answer.session.accessToken,
            expiresAt: answer.session.expireEpoch,
            username: name,
          });
        } catch (err) {
          if (err instanceof ApiError && err.status === 401) setErrors({ ownPassword: err.message });
          else {
            const f = fieldErrors(err);
            setErrors(Object.keys(f).length > 0 ? f : { form: reason(err) });
          }
        } finally {
          setPassword('');
        }
      }}
    >
      <h3>{t('people.impersonateNamed', { name })}</h3>
      <p class="hint">{t('people.impersonateLead', { name })}</p>
      <TextField
        id="impersonate-reason"
        label={t('people.impersonateReason')}
        maxLength={500}
        required={false}
        value={why}
        onInput={setWhy}
        error={errors.reason}
      />
      <div class="field">
        <label for="impersonate-own-password">{t('admin.password')}</label>
        <input
          id="impersonate-own-password"
          type="password"
          required
          autocomplete="current-password"
          value={password}
          aria-invalid={errors.ownPassword ? 'true' : undefined}
          aria-describedby={errors.ownPassword ? 'impersonate-own-password-error' : undefined}
          onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
        />
        <FieldError id="impersonate-own-password-error" message={errors.ownPassword} />
      </div>
      <FormError message={errors.form} />
      <div class="row">
        <button type="submit" class="primary" id="impersonate-start">
          {t('people.impersonateStart', { name })}
        </button>
        <button type="button" onClick={onCancel}>
          {t('admin.cancel')}
        </button>
      </div>
    </form>
  );
}
