import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { t } from '../../messages.ts';
import { EditorActions, FormError, TextField } from '../common.tsx';
import { toCsv, valuesFromCsv } from './csv.ts';
import { leftOver, problems, SelectField } from './controls.tsx';
import type { TabProps } from './metadata-model.tsx';
import type { Vocabulary } from './model.ts';

/** Controlled vocabularies: their values (rename, re-parent, delete, add), CSV import and export, and parent links for cascades. */
export function VocabulariesTab({ model, changed }: TabProps) {
  const [editing, setEditing] = useState<Vocabulary | 'new' | null>(null);
  return (
    <section class="card" aria-labelledby="vocabularies-title">
      <h2 id="vocabularies-title">{t('meta.tab.vocabularies')}</h2>
      <p class="hint">{t('meta.vocabLead')}</p>
      <ul class="plain-list" id="vocabularies">
        {model.vocabularies.map((v) => (
          <li key={v.metadataDefinitionId} data-name={v.metadataDefinitionName}>
            <strong>{v.metadataDefinitionName}</strong>{' '}
            <span class="small muted">
              {t('meta.valueCount', { count: v.metadata.values.length })}
              {v.usedBy.length > 0 && ` · ${t('meta.usedBy', { names: v.usedBy.map((u) => u.name).join(', ') })}`}
            </span>{' '}
            <button
              type="button"
              aria-label={t('meta.edit', { name: v.metadataDefinitionName })}
              onClick={() => setEditing(v)}
            >
              {t('meta.editShort')}
            </button>
          </li>
        ))}
      </ul>
      {editing === null ? (
        <button type="button" class="primary" id="vocabulary-new" onClick={() => setEditing('new')}>
          {t('meta.newVocabulary')}
        </button>
      ) : (
        <VocabularyForm
          key={editing === 'new' ? 'new' : editing.metadataDefinitionId}
          vocabulary={editing === 'new' ? null : editing}
          all={model.vocabularies}
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

interface Row {
  key: string;
  valueId?: string;
  valueName: string;
  parentValueId: string | null;
  deleted?: boolean;
}

let counter = 0;

function VocabularyForm({
  vocabulary: v,
  all,
  onCancel,
  onDone,
}: {
  vocabulary: Vocabulary | null;
  all: Vocabulary[];
  onCancel: () => void;
  onDone: (message: string) => Promise<void>;
}) {
  const [name, setName] = useState(v?.metadataDefinitionName ?? '');
  const [rows, setRows] = useState<Row[]>((v?.metadata.values ?? []).map((x) => ({ key: x.valueId, ...x })));
  const others = all.filter((x) => x.metadataDefinitionId !== v?.metadataDefinitionId);
  // The previous level's vocabulary: the one holding the parents of the values, when they have any.
  const guessed = others.find((o) =>
    (v?.metadata.values ?? []).some(
      (x) => x.parentValueId && o.metadata.values.some((p) => p.valueId === x.parentValueId),
    ),
  );
  const [parentVocab, setParentVocab] = useState(guessed?.metadataDefinitionId ?? '');
  const parents = others.find((o) => o.metadataDefinitionId === parentVocab)?.metadata.values ?? [];
  const [added, setAdded] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [imported, setImported] = useState<string | null>(null);
  const set = (i: number, patch: Partial<Row>) => setRows(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const parentName = (id: string | null) =>
    id ? (others.flatMap((o) => o.metadata.values).find((p) => p.valueId === id)?.valueName ?? '') : '';

  const importCsv = async (file: File) => {
    const list = valuesFromCsv(await file.text());
    const unknown: string[] = [];
    const copy = rows.slice();
    let adds = 0;
    let updates = 0;
    for (const { name: valueName, parent } of list) {
      let parentValueId: string | null = null;
      if (parent) {
        parentValueId = parents.find((p) => p.valueName.toLowerCase() === parent.toLowerCase())?.valueId ?? null;
        if (!parentValueId) unknown.push(parent);
      }
      const existing = copy.findIndex((r) => r.valueName.toLowerCase() === valueName.toLowerCase());
      if (existing >= 0) {
        if (copy[existing]!.parentValueId !== parentValueId || copy[existing]!.deleted) {
          copy[existing] = { ...copy[existing]!, parentValueId, deleted: false };
          updates++;
        }
      } else {
        copy.push({ key: `new-${counter++}`, valueName, parentValueId });
        adds++;
      }
    }
    setRows(copy);
    setImported(
      t('meta.imported', { adds, updates }) +
        (unknown.length > 0 ? ` ${t('meta.unknownParents', { names: [...new Set(unknown)].join(', ') })}` : ''),
    );
  };
  const exportCsv = () => {
    const csv = toCsv([
      ['value', 'parent'],
      ...rows.filter((r) => !r.deleted).map((r) => [r.valueName, parentName(r.parentValueId)]),
    ]);
    const link = document.createElement('a');
    link.href = URL.createObjectURL(new Blob([csv], { type: 'text/csv' }));
    link.download = `${name || 'vocabulary'}.csv`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  };
  const newValues = () =>
    added
      .split('\n')
      .map((x) => x.trim())
      .filter(Boolean)
      .map((valueName) => ({ valueName, parentValueId: null }));

  return (
    <form
      class="stack wide"
      id="vocabulary-form"
      onSubmit={async (e) => {
        e.preventDefault();
        setErrors({});
        const fresh = [
          ...rows
            .filter((r) => !r.valueId && !r.deleted)
            .map((r) => ({ valueName: r.valueName, parentValueId: r.parentValueId })),
          ...newValues(),
        ];
        try {
          if (!v) await api('POST', '/v1/metadata/vocabulary', { name, values: fresh });
          else {
            const before = new Map(v.metadata.values.map((x) => [x.valueId, x]));
            const update = rows
              .filter((r) => r.valueId && !r.deleted)
              .filter((r) => {
                const b = before.get(r.valueId!)!;
                return b.valueName !== r.valueName || b.parentValueId !== r.parentValueId;
              })
              .map((r) => ({ valueId: r.valueId!, valueName: r.valueName, parentValueId: r.parentValueId }));
            const body: Record<string, unknown> = {};
            if (name !== v.metadataDefinitionName) body.name = name;
            if (fresh.length > 0) body.add = fresh;
            if (update.length > 0) body.update = update;
            const gone = rows.filter((r) => r.valueId && r.deleted).map((r) => r.valueId!);
            if (gone.length > 0) body.delete = gone;
            await api('PATCH', `/v1/metadata/vocabulary/${v.metadataDefinitionId}`, body);
          }
          await onDone(t('meta.vocabularySaved', { name }));
        } catch (err) {
          setErrors(problems(err));
        }
      }}
    >
      <h3>{v ? t('meta.edit', { name: v.metadataDefinitionName }) : t('meta.newVocabulary')}</h3>
      <TextField
        id="vocabulary-name"
        label={t('meta.col.name')}
        maxLength={200}
        value={name}
        onInput={setName}
        error={errors.name}
      />
      <SelectField
        id="vocabulary-parent"
        label={t('meta.parentVocabulary')}
        value={parentVocab}
        options={[
          { value: '', label: t('meta.noParent') },
          ...others.map((o) => ({ value: o.metadataDefinitionId, label: o.metadataDefinitionName })),
        ]}
        onChange={setParentVocab}
      />
      <div class="table-scroll">
        <table class="grid" id="vocabulary-values">
          <caption class="visually-hidden">{t('meta.values')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('meta.value')}</th>
              {parentVocab && <th scope="col">{t('meta.parent')}</th>}
              <th scope="col">{t('meta.deleteValue')}</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r, i) => (
              <tr key={r.key} class={r.deleted ? 'deleted' : ''}>
                <td>
                  <input
                    aria-label={t('meta.valueName', { n: i + 1 })}
                    value={r.valueName}
                    disabled={r.deleted}
                    aria-invalid={errors[`update[${i}].valueName`] ? 'true' : undefined}
                    onInput={(e) => set(i, { valueName: (e.target as HTMLInputElement).value })}
                  />
                </td>
                {parentVocab && (
                  <td>
                    <select
                      aria-label={t('meta.parentOf', { name: r.valueName })}
                      value={r.parentValueId ?? ''}
                      disabled={r.deleted}
                      onChange={(e) => set(i, { parentValueId: (e.target as HTMLSelectElement).value || null })}
                    >
                      <option value="">{t('meta.anyParent')}</option>
                      {parents.map((p) => (
                        <option key={p.valueId} value={p.valueId}>
                          {p.valueName}
                        </option>
                      ))}
                    </select>
                  </td>
                )}
                <td>
                  <input
                    type="checkbox"
                    aria-label={t('meta.deleteValueNamed', { name: r.valueName })}
                    checked={!!r.deleted}
                    onChange={(e) => set(i, { deleted: (e.target as HTMLInputElement).checked })}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div class="field">
        <label for="vocabulary-add">{t('meta.addValues')}</label>
        <textarea
          id="vocabulary-add"
          rows={3}
          value={added}
          onInput={(e) => setAdded((e.target as HTMLTextAreaElement).value)}
        />
      </div>
      <div class="row">
        <label for="vocabulary-import">{t('meta.importCsv')}</label>
        <input
          id="vocabulary-import"
          type="file"
          accept=".csv,text/csv"
          onChange={(e) => {
            const file = (e.target as HTMLInputElement).files?.[0];
            if (file) void importCsv(file);
          }}
        />
        <button type="button" id="vocabulary-export" onClick={exportCsv}>
          {t('meta.exportCsv')}
        </button>
      </div>
      <p class="hint small">{t('meta.csvHint')}</p>
      {imported && (
        <p class="notice" role="status" id="vocabulary-imported">
          {imported}
        </p>
      )}
      <FormError message={leftOver(errors, ['name'])} />
      <EditorActions
        id="vocabulary"
        onCancel={onCancel}
        deletes={
          v
            ? {
                name: v.metadataDefinitionName,
                run: async () => {
                  try {
                    await api('DELETE', `/v1/metadata/vocabulary/${v.metadataDefinitionId}`);
                    await onDone(t('meta.vocabularyDeleted', { name: v.metadataDefinitionName }));
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
