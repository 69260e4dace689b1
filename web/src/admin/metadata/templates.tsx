import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { t } from '../../messages.ts';
import { EditorActions, FormError, TextField } from '../common.tsx';
import { Check, leftOver, problems, SelectField, Reorder } from './controls.tsx';
import type { TabProps } from './metadata-model.tsx';
import type { Template } from './model.ts';
import { FormPreview } from './preview.tsx';

const TEMPLATE_TYPES = ['default', 'asset', 'action'] as const;

/** Metadata templates: their groups in order, the order of each group's attributes, and a live preview of the form. */
export function TemplatesTab({ model, changed }: TabProps) {
  const [editing, setEditing] = useState<Template | 'new' | null>(null);
  const groupName = (id: string) => model.groups.find((g) => g.id === id)?.name ?? id;
  return (
    <section class="card" aria-labelledby="templates-title">
      <h2 id="templates-title">{t('meta.tab.templates')}</h2>
      <p class="hint">{t('meta.templatesLead')}</p>
      <ul class="plain-list" id="templates">
        {model.templates.map((x) => (
          <li key={x.templateId} data-name={x.name}>
            <strong>{x.name}</strong> {x.isDefault && <span class="state">{t('meta.default')}</span>}{' '}
            {x.inUse && <span class="state">{t('meta.inUse')}</span>}{' '}
            <span class="small muted">
              {x.templateType.join(', ')} · {x.groupIds.map(groupName).join(' › ')}
            </span>{' '}
            <button type="button" aria-label={t('meta.edit', { name: x.name })} onClick={() => setEditing(x)}>
              {t('meta.editShort')}
            </button>
          </li>
        ))}
      </ul>
      {editing === null ? (
        <button type="button" class="primary" id="template-new" onClick={() => setEditing('new')}>
          {t('meta.newTemplate')}
        </button>
      ) : (
        <TemplateForm
          key={editing === 'new' ? 'new' : editing.templateId}
          template={editing === 'new' ? null : editing}
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

function TemplateForm({
  template: x,
  model,
  onCancel,
  onDone,
}: {
  template: Template | null;
  model: TabProps['model'];
  onCancel: () => void;
  onDone: (message: string) => Promise<void>;
}) {
  const system = model.groups.filter((g) => g.system);
  const isSystem = (id: string) => system.some((g) => g.id === id);
  const [name, setName] = useState(x?.name ?? '');
  const [types, setTypes] = useState<string[]>(x?.templateType ?? ['default']);
  const [groupIds, setGroupIds] = useState<string[]>((x?.groupIds ?? []).filter((id) => !isSystem(id)));
  // Each group's attribute order as edited here (saved to the group: every template using it follows).
  const [orders, setOrders] = useState<Record<string, string[]>>(
    Object.fromEntries(model.groups.map((g) => [g.id, g.attributeIds])),
  );
  const [errors, setErrors] = useState<Record<string, string>>({});
  const group = (id: string) => model.groups.find((g) => g.id === id);
  const attrName = (id: string) => model.attributes.find((a) => a.id === id)?.name ?? id;
  const choices = model.groups.filter((g) => !g.system && !groupIds.includes(g.id));
  const shown = [...groupIds, ...system.map((g) => g.id)].map((id) => ({
    id,
    name: group(id)?.name ?? id,
    visible: group(id)?.isGroupNameVisible ?? true,
    attributeIds: orders[id] ?? [],
  }));
  return (
    <div class="template-columns">
      <form
        class="stack wide template-form"
        id="template-form"
        onSubmit={async (e) => {
          e.preventDefault();
          setErrors({});
          try {
            for (const id of groupIds) {
              const before = group(id)?.attributeIds ?? [];
              const now = orders[id] ?? [];
              if (before.join() !== now.join()) await api('PATCH', `/v1/metadata/groups/${id}`, { attributeIds: now });
            }
            if (x) await api('PATCH', `/v1/metadata/template/${x.templateId}`, { name, groupIds });
            else await api('POST', '/v1/metadata/template', { name, groupIds, templateType: types });
            await onDone(t('meta.templateSaved', { name }));
          } catch (err) {
            setErrors(problems(err));
          }
        }}
      >
        <h3>{x ? t('meta.edit', { name: x.name }) : t('meta.newTemplate')}</h3>
        <TextField
          id="template-name"
          label={t('meta.col.name')}
          maxLength={200}
          value={name}
          onInput={setName}
          error={errors.name}
        />
        <fieldset class="checks">
          <legend>{t('meta.templateType')}</legend>
          {TEMPLATE_TYPES.map((ty) => (
            <Check
              key={ty}
              id={`template-type-${ty}`}
              label={t(`meta.templateType.${ty}`)}
              checked={types.includes(ty)}
              onChange={(on) => !x && setTypes(on ? [...types, ty] : types.filter((y) => y !== ty))}
            />
          ))}
          {x && <p class="hint small">{t('meta.typeImmutable')}</p>}
        </fieldset>
        <fieldset class="columns">
          <legend>{t('meta.templateGroups')}</legend>
          <p class="hint small">{t('meta.reorderHint')}</p>
          <Reorder
            id="template-groups"
            label={t('meta.templateGroups')}
            items={groupIds}
            keyOf={(id) => id}
            nameOf={(id) => group(id)?.name ?? id}
            onChange={setGroupIds}
            onRemove={(i) => setGroupIds(groupIds.filter((_, j) => j !== i))}
          />
          {system.map((g) => (
            <p key={g.id} class="small muted">
              {t('meta.systemLast', { name: g.name })}
            </p>
          ))}
          <SelectField
            id="template-group-add"
            label={t('meta.addGroup')}
            value=""
            options={[{ value: '', label: t('meta.choose') }, ...choices.map((g) => ({ value: g.id, label: g.name }))]}
            onChange={(v) => v && setGroupIds([...groupIds, v])}
            error={errors.groupIds}
          />
        </fieldset>
        {groupIds.map((id) => (
          <fieldset class="columns" key={id}>
            <legend>{t('meta.attributesOf', { name: group(id)?.name ?? id })}</legend>
            <Reorder
              id={`template-attributes-${id}`}
              label={t('meta.attributesOf', { name: group(id)?.name ?? id })}
              items={orders[id] ?? []}
              keyOf={(a) => a}
              nameOf={attrName}
              onChange={(ids) => setOrders({ ...orders, [id]: ids })}
            />
          </fieldset>
        ))}
        {groupIds.some((id) => (group(id)?.templates ?? []).some((u) => u.id !== x?.templateId)) && (
          <p class="hint small">{t('meta.sharedGroups')}</p>
        )}
        <FormError message={leftOver(errors, ['name', 'groupIds'])} />
        <EditorActions
          id="template"
          onCancel={onCancel}
          deletes={
            x && !x.isDefault
              ? {
                  name: x.name,
                  run: async () => {
                    try {
                      await api('DELETE', `/v1/metadata/template/${x.templateId}`);
                      await onDone(t('meta.templateDeleted', { name: x.name }));
                    } catch (err) {
                      setErrors(problems(err));
                    }
                  },
                }
              : undefined
          }
        />
      </form>
      <FormPreview model={model} groups={shown} />
    </div>
  );
}
