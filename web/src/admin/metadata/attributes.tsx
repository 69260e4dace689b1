import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { t, type MessageKey } from '../../messages.ts';
import { EditorActions, FieldError, FormError, TextField } from '../common.tsx';
import { Check, leftOver, NumberField, problems, SelectField, Reorder } from './controls.tsx';
import type { TabProps } from './metadata-model.tsx';
import { DATE_FORMATS, FLAGS, TYPES, type Attribute, type Flag } from './model.ts';

const TYPE_LABEL: Record<string, MessageKey> = {
  text: 'meta.type.text',
  date: 'meta.type.date',
  controlledVocabulary: 'meta.type.controlledVocabulary',
  cascade: 'meta.type.cascade',
  table: 'meta.type.table',
};
const FLAG_LABEL: Record<Flag, MessageKey> = {
  required: 'meta.flag.required',
  readonly: 'meta.flag.readonly',
  visible: 'meta.flag.visible',
  facetable: 'meta.flag.facetable',
  sortable: 'meta.flag.sortable',
  isRestricted: 'meta.flag.isRestricted',
};
export const typeLabel = (type: string) => (TYPE_LABEL[type] ? t(TYPE_LABEL[type]) : type);

/** Every attribute with its type and settings; create, edit and delete any of them. */
export function AttributesTab({ model, changed }: TabProps) {
  const [editing, setEditing] = useState<Attribute | 'new' | null>(null);
  const vocabName = (id: string | null) =>
    model.vocabularies.find((v) => v.metadataDefinitionId === id)?.metadataDefinitionName ?? '—';
  const settings = (a: Attribute): string => {
    if (a.type === 'text')
      return [a.length ? t('meta.maxLength', { n: a.length }) : '', a.isMultiLine ? t('meta.multiLine') : '']
        .filter(Boolean)
        .join(', ');
    if (a.type === 'date') return a.dateFormat;
    if (a.type === 'controlledVocabulary')
      return `${vocabName(a.controlledVocabularyId)}${a.isMultipleSelect ? `, ${t('meta.multiple')}` : ''}`;
    if (a.type === 'cascade') return (a.cascadeFieldsDenormalized ?? []).map((l) => l.name).join(' › ');
    if (a.type === 'table')
      return (
        (a.tableFieldsDenormalized ?? []).map((c) => c.name).join(', ') +
        (a.isSingleRow ? ` (${t('meta.singleRow')})` : '')
      );
    return '';
  };
  return (
    <section class="card" aria-labelledby="attributes-title">
      <h2 id="attributes-title">{t('meta.tab.attributes')}</h2>
      <div class="table-scroll">
        <table id="attributes" class="grid">
          <thead>
            <tr>
              <th scope="col">{t('meta.col.name')}</th>
              <th scope="col">{t('meta.col.type')}</th>
              <th scope="col">{t('meta.col.settings')}</th>
              <th scope="col" class="col-optional">
                {t('meta.col.searchField')}
              </th>
              <th scope="col">
                <span class="visually-hidden">{t('meta.col.actions')}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {model.attributes.map((a) => (
              <tr key={a.id} data-name={a.name}>
                <th scope="row">
                  {a.name} {a.system && <span class="state">{t('meta.system')}</span>}
                </th>
                <td>{typeLabel(a.type)}</td>
                <td class="small">{settings(a)}</td>
                <td class="mono small col-optional">{a.searchField}</td>
                <td>
                  <button type="button" aria-label={t('meta.edit', { name: a.name })} onClick={() => setEditing(a)}>
                    {t('meta.editShort')}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {editing === null ? (
        <button type="button" class="primary" id="attribute-new" onClick={() => setEditing('new')}>
          {t('meta.newAttribute')}
        </button>
      ) : (
        <AttributeForm
          key={editing === 'new' ? 'new' : editing.id}
          attribute={editing === 'new' ? null : editing}
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

interface LevelDraft {
  key: string;
  id?: string;
  name: string;
  controlledVocabularyId: string;
}

function AttributeForm({
  attribute,
  model,
  onCancel,
  onDone,
}: {
  attribute: Attribute | null;
  model: TabProps['model'];
  onCancel: () => void;
  onDone: (message: string) => Promise<void>;
}) {
  const a = attribute;
  const [name, setName] = useState(a?.name ?? '');
  const [type, setType] = useState<string>(a?.type ?? 'text');
  const [length, setLength] = useState(a?.length ? String(a.length) : '');
  const [multiLine, setMultiLine] = useState(a?.isMultiLine ?? false);
  const [dateFormat, setDateFormat] = useState(a && a.dateFormat !== 'N/A' ? a.dateFormat : DATE_FORMATS[0]!);
  const firstVocab = model.vocabularies[0]?.metadataDefinitionId ?? '';
  const [vocab, setVocab] = useState(a?.controlledVocabularyId ?? firstVocab);
  const [multiple, setMultiple] = useState(a?.isMultipleSelect ?? false);
  const [levels, setLevels] = useState<LevelDraft[]>(
    a?.cascadeFieldsDenormalized?.map((l) => ({
      key: l.id,
      id: l.id,
      name: l.name,
      controlledVocabularyId: l.controlledVocabularyId,
    })) ?? [
      { key: 'l1', name: '', controlledVocabularyId: firstVocab },
      { key: 'l2', name: '', controlledVocabularyId: firstVocab },
    ],
  );
  const [columns, setColumns] = useState<string[]>(a?.tableFieldsDenormalized?.map((c) => c.id) ?? []);
  const [singleRow, setSingleRow] = useState(a?.isSingleRow ?? false);
  const [flags, setFlags] = useState<Record<Flag, boolean>>(
    Object.fromEntries(FLAGS.map((f) => [f, a ? a[f] : f === 'visible'])) as Record<Flag, boolean>,
  );
  const [errors, setErrors] = useState<Record<string, string>>({});
  const columnChoices = model.attributes.filter((x) => x.type !== 'table' && x.id !== a?.id && !columns.includes(x.id));
  const attributeName = (id: string) => model.attributes.find((x) => x.id === id)?.name ?? id;
  const vocabOptions = model.vocabularies.map((v) => ({
    value: v.metadataDefinitionId,
    label: v.metadataDefinitionName,
  }));
  const shown = ['name', 'type', 'length', 'dateFormat', 'controlledVocabularyId', 'tableFieldIds', 'levels'];
  for (let i = 0; i < levels.length; i++) shown.push(`levels[${i}].name`, `levels[${i}].controlledVocabularyId`);

  const body = (): Record<string, unknown> => {
    const out: Record<string, unknown> = { name, ...flags };
    if (!a) out.type = type;
    if (type === 'text') {
      if (length) out.length = Number(length);
      out.isMultiLine = multiLine;
    }
    if (type === 'date') out.dateFormat = dateFormat;
    if (type === 'controlledVocabulary') {
      out.controlledVocabularyId = vocab;
      out.isMultipleSelect = multiple;
    }
    if (type === 'cascade')
      out.levels = levels.map((l) => ({
        ...(l.id ? { id: l.id } : {}),
        name: l.name,
        controlledVocabularyId: l.controlledVocabularyId,
      }));
    if (type === 'table') {
      out.tableFieldIds = columns;
      out.isSingleRow = singleRow;
    }
    return out;
  };
  return (
    <form
      class="stack wide"
      id="attribute-form"
      onSubmit={async (e) => {
        e.preventDefault();
        setErrors({});
        try {
          if (a) await api('PATCH', `/v1/metadata/attributes/${a.id}`, body());
          else await api('POST', '/v1/metadata/attributes', body());
          await onDone(t('meta.attributeSaved', { name }));
        } catch (err) {
          setErrors(problems(err));
        }
      }}
    >
      <h3>{a ? t('meta.edit', { name: a.name }) : t('meta.newAttribute')}</h3>
      {a?.system && <p class="hint">{t('meta.systemAttribute')}</p>}
      <TextField
        id="attribute-name"
        label={t('meta.col.name')}
        maxLength={200}
        value={name}
        onInput={setName}
        error={errors.name}
      />
      <SelectField
        id="attribute-type"
        label={t('meta.col.type')}
        value={type}
        disabled={!!a}
        options={TYPES.map((x) => ({ value: x, label: typeLabel(x) }))}
        onChange={setType}
        error={errors.type}
      />
      {a && <p class="hint small">{t('meta.typeFixed', { searchField: a.searchField })}</p>}
      {type === 'text' && (
        <>
          <NumberField
            id="attribute-length"
            label={t('meta.length')}
            value={length}
            onInput={setLength}
            error={errors.length}
          />
          <Check id="attribute-multiline" label={t('meta.multiLine')} checked={multiLine} onChange={setMultiLine} />
        </>
      )}
      {type === 'date' && (
        <SelectField
          id="attribute-date-format"
          label={t('meta.dateFormat')}
          value={dateFormat}
          options={DATE_FORMATS.map((f) => ({ value: f, label: f }))}
          onChange={setDateFormat}
          error={errors.dateFormat}
        />
      )}
      {type === 'controlledVocabulary' && (
        <>
          <SelectField
            id="attribute-vocabulary"
            label={t('meta.vocabulary')}
            value={vocab}
            options={vocabOptions}
            onChange={setVocab}
            error={errors.controlledVocabularyId}
          />
          <Check id="attribute-multiple" label={t('meta.multiple')} checked={multiple} onChange={setMultiple} />
        </>
      )}
      {type === 'cascade' && (
        <fieldset class="levels" aria-describedby={errors.levels ? 'attribute-levels-error' : undefined}>
          <legend>{t('meta.levels')}</legend>
          <p class="hint small">{t('meta.levelsHint')}</p>
          {levels.map((l, i) => (
            <div class="row level" key={l.key}>
              <TextField
                id={`level-${i}-name`}
                label={t('meta.levelName', { n: i + 1 })}
                maxLength={200}
                value={l.name}
                onInput={(v) => setLevels(levels.map((x, j) => (j === i ? { ...x, name: v } : x)))}
                error={errors[`levels[${i}].name`]}
              />
              <SelectField
                id={`level-${i}-vocabulary`}
                label={t('meta.levelVocabulary', { n: i + 1 })}
                value={l.controlledVocabularyId}
                options={vocabOptions}
                onChange={(v) => setLevels(levels.map((x, j) => (j === i ? { ...x, controlledVocabularyId: v } : x)))}
                error={errors[`levels[${i}].controlledVocabularyId`]}
              />
              {levels.length > 2 && (
                <button
                  type="button"
                  aria-label={t('meta.removeLevel', { n: i + 1 })}
                  onClick={() => setLevels(levels.filter((_, j) => j !== i))}
                >
                  ×
                </button>
              )}
            </div>
          ))}
          <button
            type="button"
            id="level-add"
            onClick={() =>
              setLevels([...levels, { key: `l${Date.now()}`, name: '', controlledVocabularyId: firstVocab }])
            }
          >
            {t('meta.addLevel')}
          </button>
          <FieldError id="attribute-levels-error" message={errors.levels} />
        </fieldset>
      )}
      {type === 'table' && (
        <fieldset class="columns">
          <legend>{t('meta.columns')}</legend>
          <Reorder
            id="table-columns"
            label={t('meta.columns')}
            items={columns}
            keyOf={(c) => c}
            nameOf={attributeName}
            onChange={setColumns}
            onRemove={(i) => setColumns(columns.filter((_, j) => j !== i))}
          />
          <SelectField
            id="column-add"
            label={t('meta.addColumn')}
            value=""
            options={[
              { value: '', label: t('meta.choose') },
              ...columnChoices.map((x) => ({ value: x.id, label: `${x.name} (${typeLabel(x.type)})` })),
            ]}
            onChange={(v) => v && setColumns([...columns, v])}
            error={errors.tableFieldIds}
          />
          <Check id="attribute-single-row" label={t('meta.singleRow')} checked={singleRow} onChange={setSingleRow} />
        </fieldset>
      )}
      <fieldset class="checks">
        <legend>{t('meta.flags')}</legend>
        {FLAGS.map((f) => (
          <Check
            key={f}
            id={`attribute-flag-${f}`}
            label={t(FLAG_LABEL[f])}
            checked={flags[f]}
            onChange={(v) => setFlags({ ...flags, [f]: v })}
          />
        ))}
      </fieldset>
      <FormError message={leftOver(errors, shown)} />
      <EditorActions
        id="attribute"
        onCancel={onCancel}
        deletes={
          a && !a.system
            ? {
                name: a.name,
                run: async () => {
                  try {
                    await api('DELETE', `/v1/metadata/attributes/${a.id}`);
                    await onDone(t('meta.attributeDeleted', { name: a.name }));
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
