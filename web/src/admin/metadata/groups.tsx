import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { t } from '../../messages.ts';
import { EditorActions, FormError, TextField } from '../common.tsx';
import { typeLabel } from './attributes.tsx';
import { Check, leftOver, problems, SelectField, Reorder } from './controls.tsx';
import type { TabProps } from './metadata-model.tsx';
import type { Group } from './model.ts';

/** Attribute groups: each an ordered list of attributes shown as one section of a form. */
export function GroupsTab({ model, changed }: TabProps) {
  const [editing, setEditing] = useState<Group | 'new' | null>(null);
  const name = (id: string) => model.attributes.find((a) => a.id === id)?.name ?? id;
  return (
    <section class="card" aria-labelledby="groups-title">
      <h2 id="groups-title">{t('meta.tab.groups')}</h2>
      <p class="hint">{t('meta.groupsLead')}</p>
      <ul class="plain-list" id="groups">
        {model.groups.map((g) => (
          <li key={g.id} data-name={g.name}>
            <strong>{g.name}</strong> {g.system && <span class="state">{t('meta.system')}</span>}{' '}
            <span class="small muted">
              {g.attributeIds.map(name).join(', ') || t('admin.none')}
              {g.templates.length > 0 &&
                ` · ${t('meta.inTemplates', { names: g.templates.map((x) => x.name).join(', ') })}`}
            </span>{' '}
            <button type="button" aria-label={t('meta.edit', { name: g.name })} onClick={() => setEditing(g)}>
              {t('meta.editShort')}
            </button>
          </li>
        ))}
      </ul>
      {editing === null ? (
        <button type="button" class="primary" id="group-new" onClick={() => setEditing('new')}>
          {t('meta.newGroup')}
        </button>
      ) : (
        <GroupForm
          key={editing === 'new' ? 'new' : editing.id}
          group={editing === 'new' ? null : editing}
          model={model}
          onCancel={() => setEditing(null)}
          onDone={async (message) => {
            setEditing(null);
            await changed(message);
          }}
        />
      )}
    </section>
  );
}

function GroupForm({
  group: g,
  model,
  onCancel,
  onDone,
}: {
  group: Group | null;
  model: TabProps['model'];
  onCancel: () => void;
  onDone: (message: string) => Promise<void>;
}) {
  const [name, setName] = useState(g?.name ?? '');
  const [description, setDescription] = useState(g?.description ?? '');
  const [visible, setVisible] = useState(g?.isGroupNameVisible ?? true);
  const [attributeIds, setAttributeIds] = useState<string[]>(g?.attributeIds ?? []);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const attrName = (id: string) => model.attributes.find((a) => a.id === id)?.name ?? id;
  const choices = model.attributes.filter((a) => !attributeIds.includes(a.id));
  return (
    <form
      class="stack wide"
      id="group-form"
      onSubmit={async (e) => {
        e.preventDefault();
        setErrors({});
        const body = { name, description, isGroupNameVisible: visible, attributeIds };
        try {
          if (g) await api('PATCH', `/v1/metadata/groups/${g.id}`, body);
          else await api('POST', '/v1/metadata/groups', body);
          await onDone(t('meta.groupSaved', { name }));
        } catch (err) {
          setErrors(problems(err));
        }
      }}
    >
      <h3>{g ? t('meta.edit', { name: g.name }) : t('meta.newGroup')}</h3>
      <TextField
        id="group-name"
        label={t('meta.col.name')}
        maxLength={200}
        value={name}
        onInput={setName}
        error={errors.name}
      />
      <div class="field">
        <label for="group-description">{t('meta.description')}</label>
        <input
          id="group-description"
          maxLength={2000}
          value={description}
          onInput={(e) => setDescription((e.target as HTMLInputElement).value)}
        />
      </div>
      <Check id="group-name-visible" label={t('meta.groupNameVisible')} checked={visible} onChange={setVisible} />
      <fieldset class="columns">
        <legend>{t('meta.groupAttributes')}</legend>
        <p class="hint small">{t('meta.reorderHint')}</p>
        <Reorder
          id="group-attributes"
          label={t('meta.groupAttributes')}
          items={attributeIds}
          keyOf={(x) => x}
          nameOf={attrName}
          onChange={setAttributeIds}
          onRemove={(i) => setAttributeIds(attributeIds.filter((_, j) => j !== i))}
        />
        <SelectField
          id="group-attribute-add"
          label={t('meta.addAttribute')}
          value=""
          options={[
            { value: '', label: t('meta.choose') },
            ...choices.map((a) => ({ value: a.id, label: `${a.name} (${typeLabel(a.type)})` })),
          ]}
          onChange={(v) => v && setAttributeIds([...attributeIds, v])}
          error={errors.attributeIds}
        />
      </fieldset>
      <FormError message={leftOver(errors, ['name', 'attributeIds'])} />
      <EditorActions
        id="group"
        onCancel={onCancel}
        deletes={
          g && !g.system
            ? {
                name: g.name,
                run: async () => {
                  try {
                    await api('DELETE', `/v1/metadata/groups/${g.id}`);
                    await onDone(t('meta.groupDeleted', { name: g.name }));
                  } catch (err) {
                    setErrors(problems(err));
                  }
                },
              }
            : undefined
        }
      />
    </form>
  );
}
