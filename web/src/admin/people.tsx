import { useEffect, useState } from 'preact/hooks';
import { api, reason } from '../api.ts';
import { t } from '../messages.ts';
import { Ceiling, FieldError, fieldErrors, isForbidden } from './common.tsx';
import type { SectionProps } from './loader.tsx';

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
export default function People(_: SectionProps) {
  const [groups, setGroups] = useState<Load<Group[]>>({ state: 'loading' });
  const reloadGroups = () => loadInto(setGroups, () => api<Group[]>('GET', '/v1/security/groups'));
  useEffect(() => void reloadGroups(), []);
  return (
    <>
      <h1>{t('admin.section.people')}</h1>
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
  const [confirmDelete, setConfirmDelete] = useState(false);
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
      <div class="field">
        <label for="role-name">{t('people.name')}</label>
        <input
          id="role-name"
          required
          maxLength={100}
          value={name}
          aria-invalid={errors.name ? 'true' : undefined}
          aria-describedby={errors.name ? 'role-name-error' : undefined}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
        <FieldError id="role-name-error" message={errors.name} />
      </div>
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
      {errors.form && (
        <p class="error" role="alert">
          {errors.form}
        </p>
      )}
      <div class="row">
        <button type="submit" class="primary" id="role-save">
          {t('admin.save')}
        </button>
        <button type="button" onClick={onCancel}>
          {t('admin.cancel')}
        </button>
        {role && !confirmDelete && (
          <button type="button" class="danger" id="role-delete" onClick={() => setConfirmDelete(true)}>
            {t('admin.delete')}
          </button>
        )}
        {role && confirmDelete && (
          <button
            type="button"
            class="danger"
            id="role-delete-yes"
            onClick={async () => {
              try {
                await api('DELETE', `/v1/roles/${role.id}`);
                onDone(t('people.roleDeleted', { name: role.name }));
              } catch (err) {
                fail(err);
              }
            }}
          >
            {t('admin.confirmDelete', { name: role.name })}
          </button>
        )}
      </div>
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
      {errors.form && (
        <p class="error" role="alert">
          {errors.form}
        </p>
      )}
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
  const [confirmDelete, setConfirmDelete] = useState(false);
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
      <div class="field">
        <label for="template-name">{t('people.name')}</label>
        <input
          id="template-name"
          required
          maxLength={100}
          value={name}
          aria-invalid={errors.templateName ? 'true' : undefined}
          aria-describedby={errors.templateName ? 'template-name-error' : undefined}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
        <FieldError id="template-name-error" message={errors.templateName} />
      </div>
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
      {errors.form && (
        <p class="error" role="alert">
          {errors.form}
        </p>
      )}
      <div class="row">
        <button type="submit" class="primary" id="template-save">
          {t('admin.save')}
        </button>
        <button type="button" onClick={onCancel}>
          {t('admin.cancel')}
        </button>
        {template && !confirmDelete && (
          <button type="button" class="danger" id="template-delete" onClick={() => setConfirmDelete(true)}>
            {t('admin.delete')}
          </button>
        )}
        {template && confirmDelete && (
          <button
            type="button"
            class="danger"
            id="template-delete-yes"
            onClick={async () => {
              try {
                await api('DELETE', `/v1/security/template/${template.templateId}`);
                onDone(t('people.templateDeleted', { name: template.templateName }));
              } catch (err) {
                fail(err);
              }
            }}
          >
            {t('admin.confirmDelete', { name: template.templateName })}
          </button>
        )}
      </div>
    </form>
  );
}
