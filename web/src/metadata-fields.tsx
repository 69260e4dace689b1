import { useState } from 'preact/hooks';
import type { FieldProblem } from './api.ts';
import { t } from './messages.ts';
import type { Attribute, Vocabulary } from './templates.ts';

/**
 * The editors of a metadata form, one per attribute type, working on the API's name-based
 * (simplified) values: text and dates as strings, a vocabulary as a value name (or names), a cascade
 * as `[{name: level, value}, …]`, a table as rows of cells `[[{name: column, value}, …], …]`.
 */

export type Problems = Record<string, string>;

interface Cell {
  name: string;
  value: unknown;
}

/** Where the API's problems belong: `body.metadata[i]…` is the i-th attribute sent; a cascade's `value[l]` its l-th level; a table's `value[r][c]` a cell. */
export function problemsByField(details: FieldProblem[], sent: Attribute[]): Problems {
  const out: Problems = {};
  const add = (key: string, message: string) => {
    out[key] = out[key] ? `${out[key]}; ${message}` : message;
  };
  for (const d of details) {
    const path = d.field.replace(/\[(\d+)\]/g, '.$1');
    const m = /metadata\.(\d+)(?:\.value\.(\d+)(?:\.(\d+))?)?/.exec(path);
    const attribute = m ? sent[Number(m[1])] : undefined;
    const name = attribute?.name ?? '';
    add(name, d.message);
    if (attribute && m?.[2] !== undefined) {
      if (attribute.type === 'cascade') add(`${name}/${m[2]}`, d.message);
      else if (attribute.type === 'table' && m[3] !== undefined) add(`${name}/${m[2]}/${m[3]}`, d.message);
    }
  }
  return out;
}

interface FieldProps {
  attribute: Attribute;
  value: unknown;
  vocabs: Map<string, Vocabulary>;
  problems: Problems;
  onChange: (value: unknown) => void;
}

/** One attribute: its label, editor and the API's message for it. */
export function Field({ attribute: a, value, vocabs, problems, onChange }: FieldProps) {
  const id = `field-${a.id}`;
  const problem = problems[a.name];
  const errorId = `${id}-error`;
  const grouped =
    a.type === 'cascade' || a.type === 'table' || (a.type === 'controlledVocabulary' && a.isMultipleSelect);
  const label = (
    <>
      {a.name}
      {a.required ? <span class="muted"> ({t('common.required')})</span> : null}
    </>
  );
  return (
    <div class={`field field-${a.type}`} data-field={a.name}>
      {grouped ? (
        <span class="label" id={`${id}-label`}>
          {label}
        </span>
      ) : (
        <label for={id}>{label}</label>
      )}
      <Editor
        attribute={a}
        id={id}
        value={value}
        vocabs={vocabs}
        problems={problems}
        problemKey={a.name}
        describedBy={problem ? errorId : undefined}
        onChange={onChange}
      />
      {problem && (
        <span class="field-error" id={errorId}>
          {problem}
        </span>
      )}
    </div>
  );
}

interface EditorProps extends FieldProps {
  id: string;
  problemKey: string;
  describedBy?: string;
  /** A cell of a table names its column for screen readers. */
  ariaLabel?: string;
}

function Editor(props: EditorProps) {
  const { attribute: a, id, value, vocabs, problems, problemKey, describedBy, ariaLabel, onChange } = props;
  const common = {
    id,
    'aria-label': ariaLabel,
    'aria-invalid': problems[problemKey] ? ('true' as const) : undefined,
    'aria-describedby': describedBy,
    readOnly: a.readonly,
    required: a.required,
    class: a.readonly ? 'readonly' : undefined,
  };
  switch (a.type) {
    case 'date':
      return (
        <input
          type="text"
          inputMode="numeric"
          autocomplete="off"
          placeholder={a.dateFormat && a.dateFormat !== 'N/A' ? a.dateFormat : 'yyyy-MM-dd'}
          {...common}
          value={typeof value === 'string' ? value : ''}
          onInput={(e) => onChange((e.target as HTMLInputElement).value)}
        />
      );
    case 'controlledVocabulary': {
      const vocab = a.controlledVocabularyId ? vocabs.get(a.controlledVocabularyId) : undefined;
      if (vocab) return <VocabularyEditor {...props} vocab={vocab} common={common} />;
      break;
    }
    case 'cascade':
      return <CascadeEditor {...props} />;
    case 'table':
      return <TableEditor {...props} />;
  }
  const text = value === null || value === undefined ? '' : Array.isArray(value) ? value.join(', ') : String(value);
  return a.isMultiLine || a.subType === 'textArea' ? (
    <textarea
      {...common}
      value={text}
      maxLength={a.length ?? undefined}
      onInput={(e) => onChange((e.target as HTMLTextAreaElement).value)}
    />
  ) : (
    <input
      type="text"
      {...common}
      value={text}
      maxLength={a.length ?? undefined}
      onInput={(e) => onChange((e.target as HTMLInputElement).value)}
    />
  );
}

const SEARCH_AFTER = 12;

/** One value: a list, or, for long vocabularies, a text box with the values as suggestions. Several values: checkboxes with a search. */
function VocabularyEditor({
  attribute: a,
  vocab,
  value,
  common,
  onChange,
  id,
  describedBy,
  ariaLabel,
  parent,
}: EditorProps & { vocab: Vocabulary; common: Record<string, unknown>; parent?: string | null }) {
  const [filter, setFilter] = useState('');
  // A cascade's level lists only the values that sit under the value chosen above it (or under none).
  const values = vocab.values.filter(
    (v) => parent === undefined || v.parentValueId === null || v.parentValueId === parent,
  );
  const names = values.map((v) => v.valueName);
  if (!a.isMultipleSelect) {
    const current = typeof value === 'string' ? value : '';
    if (names.length > SEARCH_AFTER) {
      return (
        <>
          <input
            type="text"
            autocomplete="off"
            list={`${id}-values`}
            {...common}
            value={current}
            onInput={(e) => onChange((e.target as HTMLInputElement).value || null)}
          />
          <datalist id={`${id}-values`}>
            {names.map((n) => (
              <option key={n} value={n} />
            ))}
          </datalist>
        </>
      );
    }
    return (
      <select
        {...common}
        disabled={Boolean(common.readOnly)}
        value={current}
        onChange={(e) => onChange((e.target as HTMLSelectElement).value || null)}
      >
        <option value="">—</option>
        {current && !names.includes(current) && <option value={current}>{current}</option>}
        {names.map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
    );
  }
  const chosen = new Set(Array.isArray(value) ? value.map(String) : value ? [String(value)] : []);
  const shown = names.filter((n) => n.toLowerCase().includes(filter.toLowerCase()));
  return (
    // biome-ignore lint/a11y/useSemanticElements: a labelled group inside the field's own label and error wiring
    <div
      class="vocab"
      id={id}
      role="group"
      aria-labelledby={ariaLabel ? undefined : `${id}-label`}
      aria-label={ariaLabel}
      aria-describedby={describedBy}
      aria-invalid={common['aria-invalid'] as 'true' | undefined}
    >
      {names.length > SEARCH_AFTER / 2 && (
        <input
          type="search"
          aria-label={t('asset.searchValues', { name: ariaLabel ?? a.name })}
          value={filter}
          onInput={(e) => setFilter((e.target as HTMLInputElement).value)}
        />
      )}
      <ul>
        {shown.map((n) => (
          <li key={n}>
            <label>
              <input
                type="checkbox"
                checked={chosen.has(n)}
                disabled={Boolean(common.readOnly)}
                onChange={() => {
                  const next = new Set(chosen);
                  if (next.has(n)) next.delete(n);
                  else next.add(n);
                  onChange([...next]);
                }}
              />{' '}
              {n}
            </label>
          </li>
        ))}
        {shown.length === 0 && <li class="muted">{t('asset.noValues')}</li>}
      </ul>
    </div>
  );
}

/** The levels of a cascade as the API reads and writes them: `[{name: level, value}, …]` (a path `["Red", ["Crimson"]]` is read too). */
export function cascadeCells(levels: Attribute[], value: unknown): Cell[] {
  if (!Array.isArray(value)) return [];
  if (value.every((v) => v && typeof v === 'object' && !Array.isArray(v) && 'name' in v)) return value as Cell[];
  return value.map((v, i) => ({ name: levels[i]?.name ?? String(i), value: v }));
}

function CascadeEditor({ attribute: a, id, value, vocabs, problems, problemKey, describedBy, onChange }: EditorProps) {
  const levels = a.cascadeFieldsDenormalized ?? [];
  const cells = cascadeCells(levels, value);
  const valueOf = (level: Attribute) => cells.find((c) => c.name === level.name)?.value;
  const set = (index: number, next: unknown) => {
    // A level changed: the levels below it no longer fit and are cleared.
    const out: Cell[] = [];
    for (let i = 0; i < levels.length; i++) {
      const level = levels[i]!;
      const v = i === index ? next : i < index ? valueOf(level) : undefined;
      if (v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0))
        out.push({ name: level.name, value: v });
    }
    onChange(out.length > 0 ? out : null);
  };
  return (
    // biome-ignore lint/a11y/useSemanticElements: a labelled group inside the field's own label and error wiring
    <div class="cascade" id={id} role="group" aria-labelledby={`${id}-label`} aria-describedby={describedBy}>
      {levels.map((level, i) => {
        const above = i > 0 ? valueOf(levels[i - 1]!) : undefined;
        const aboveVocab =
          i > 0 && levels[i - 1]!.controlledVocabularyId
            ? vocabs.get(levels[i - 1]!.controlledVocabularyId!)
            : undefined;
        const aboveName = Array.isArray(above) ? above[0] : above;
        const parent =
          i === 0 ? undefined : (aboveVocab?.values.find((v) => v.valueName === aboveName)?.valueId ?? null);
        const vocab = level.controlledVocabularyId ? vocabs.get(level.controlledVocabularyId) : undefined;
        const levelId = `${id}-${i}`;
        const key = `${problemKey}/${i}`;
        const disabled = i > 0 && (aboveName === undefined || aboveName === null || aboveName === '');
        const common = {
          id: levelId,
          'aria-invalid': problems[key] ? ('true' as const) : undefined,
          readOnly: a.readonly || disabled,
          class: a.readonly ? 'readonly' : undefined,
        };
        return (
          <div class="cascade-level" key={level.id}>
            {level.isMultipleSelect ? (
              <span class="sublabel" id={`${levelId}-label`}>
                {level.name}
              </span>
            ) : (
              <label class="sublabel" for={levelId}>
                {level.name}
              </label>
            )}
            {vocab ? (
              <VocabularyEditor
                attribute={{ ...level, readonly: a.readonly || disabled }}
                vocab={vocab}
                value={valueOf(level)}
                common={common}
                vocabs={vocabs}
                problems={problems}
                problemKey={key}
                id={levelId}
                parent={i === 0 ? undefined : parent}
                onChange={(v) => set(i, v)}
              />
            ) : (
              <input
                type="text"
                {...common}
                value={String(valueOf(level) ?? '')}
                onInput={(e) => set(i, (e.target as HTMLInputElement).value)}
              />
            )}
          </div>
        );
      })}
    </div>
  );
}

/** A table's rows as the API reads and writes them: each row a list of `{name: column, value}` cells. */
export function tableRows(value: unknown): Cell[][] {
  if (!Array.isArray(value)) return [];
  if (value.length > 0 && value.every((c) => c && typeof c === 'object' && !Array.isArray(c) && 'name' in c))
    return [value as Cell[]];
  return value.filter(Array.isArray) as Cell[][];
}

function TableEditor({ attribute: a, id, value, vocabs, problems, problemKey, describedBy, onChange }: EditorProps) {
  const columns = (a.tableFieldsDenormalized ?? []).filter((c) => c.visible !== false);
  const rows = tableRows(value);
  const shown = a.isSingleRow && rows.length === 0 ? [[]] : rows;
  const emit = (next: Cell[][]) => onChange(next.length > 0 ? next : null);
  const setCell = (r: number, column: Attribute, v: unknown) => {
    const next = shown.map((row) => [...row]);
    const row = next[r]!.filter((c) => c.name !== column.name);
    const empty = v === null || v === undefined || v === '' || (Array.isArray(v) && v.length === 0);
    if (!empty) row.push({ name: column.name, value: v });
    // Cells keep the columns' order.
    next[r] = columns.flatMap((c) => row.filter((cell) => cell.name === c.name));
    emit(next.filter((cells, i) => cells.length > 0 || i !== r || !a.isSingleRow));
  };
  return (
    <div class="table-editor" id={id} aria-describedby={describedBy}>
      <table aria-labelledby={`${id}-label`}>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.id} scope="col">
                {c.name}
                {c.required ? <span class="muted"> *</span> : null}
              </th>
            ))}
            {!a.isSingleRow && (
              <th>
                <span class="visually-hidden">{t('asset.rowActions')}</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {shown.map((row, r) => (
            <tr key={r}>
              {columns.map((c, ci) => {
                const key = `${problemKey}/${r}/${ci}`;
                return (
                  <td key={c.id} data-cell={`${r}/${ci}`}>
                    <Editor
                      attribute={{ ...c, readonly: a.readonly || c.readonly }}
                      id={`${id}-${r}-${ci}`}
                      ariaLabel={t('asset.cell', { column: c.name, row: r + 1 })}
                      value={row.find((cell) => cell.name === c.name)?.value}
                      vocabs={vocabs}
                      problems={problems}
                      problemKey={key}
                      describedBy={problems[key] ? `${id}-${r}-${ci}-error` : undefined}
                      onChange={(v) => setCell(r, c, v)}
                    />
                    {problems[key] && (
                      <span class="field-error" id={`${id}-${r}-${ci}-error`}>
                        {problems[key]}
                      </span>
                    )}
                  </td>
                );
              })}
              {!a.isSingleRow && (
                <td>
                  <button
                    type="button"
                    class="ghost icon"
                    disabled={a.readonly}
                    aria-label={t('asset.removeValue', { n: r + 1 })}
                    onClick={() => emit(shown.filter((_, i) => i !== r))}
                  >
                    ×
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {!a.isSingleRow && !a.readonly && (
        <button type="button" class="add-row" onClick={() => emit([...shown, []])}>
          {t('asset.addValue')}
        </button>
      )}
    </div>
  );
}
