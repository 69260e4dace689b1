import { useState } from 'preact/hooks';
import { ApiError, reason } from '../../api.ts';
import { t } from '../../messages.ts';
import { FieldError } from '../common.tsx';

/** The API's problems by their path without `body.` (`levels[1].name`, `name`); the rest under `form`. */
export function problems(error: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (error instanceof ApiError && error.details.length > 0)
    for (const d of error.details)
      out[d.field.replace(/^body\.?/, '').replace(/\.(\d+)/g, '[$1]') || 'form'] ??= d.message;
  else out.form = reason(error);
  return out;
}

/** Problems not shown on a field of the form: shown with the form's own message. */
export function leftOver(errors: Record<string, string>, shown: string[]): string | undefined {
  const rest = Object.entries(errors).filter(([k]) => !shown.includes(k));
  return rest.length > 0 ? rest.map(([k, m]) => (k === 'form' ? m : `${k}: ${m}`)).join('; ') : undefined;
}

export function NumberField({
  id,
  label,
  value,
  onInput,
  error,
}: {
  id: string;
  label: string;
  value: string;
  onInput: (v: string) => void;
  error?: string;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        type="number"
        min={1}
        value={value}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        onInput={(e) => onInput((e.target as HTMLInputElement).value)}
      />
      <FieldError id={`${id}-error`} message={error} />
    </div>
  );
}

export function SelectField({
  id,
  label,
  value,
  options,
  onChange,
  error,
  disabled,
}: {
  id: string;
  label: string;
  value: string;
  options: { value: string; label: string }[];
  onChange: (v: string) => void;
  error?: string;
  disabled?: boolean;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select
        id={id}
        value={value}
        disabled={disabled}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        onChange={(e) => onChange((e.target as HTMLSelectElement).value)}
      >
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      <FieldError id={`${id}-error`} message={error} />
    </div>
  );
}

export function Check({
  id,
  label,
  checked,
  onChange,
}: {
  id: string;
  label: string;
  checked: boolean;
  onChange: (v: boolean) => void;
}) {
  return (
    <label class="row small" for={id}>
      <input
        id={id}
        type="checkbox"
        checked={checked}
        onChange={(e) => onChange((e.target as HTMLInputElement).checked)}
      />
      {label}
    </label>
  );
}

export function moved<T>(items: T[], from: number, to: number): T[] {
  const copy = items.slice();
  const [item] = copy.splice(from, 1);
  copy.splice(to, 0, item!);
  return copy;
}

/**
 * An ordered list: drag an item onto another to move it there, or use its "Move up" / "Move down"
 * buttons (keyboard and screen readers); each move is announced. Remove is offered when `onRemove` is given.
 */
export function Reorder<T>({
  id,
  label,
  items,
  keyOf,
  nameOf,
  onChange,
  onRemove,
}: {
  id: string;
  label: string;
  items: T[];
  keyOf: (item: T) => string;
  nameOf: (item: T) => string;
  onChange: (items: T[]) => void;
  onRemove?: (index: number) => void;
}) {
  const [dragging, setDragging] = useState<number | null>(null);
  const [over, setOver] = useState<number | null>(null);
  const [said, setSaid] = useState('');
  const move = (from: number, to: number) => {
    if (to < 0 || to >= items.length || from === to) return;
    onChange(moved(items, from, to));
    setSaid(t('meta.moved', { name: nameOf(items[from]!), pos: to + 1, count: items.length }));
  };
  return (
    <div class="reorder">
      <ol id={id} aria-label={label}>
        {items.map((item, i) => (
          <li
            key={keyOf(item)}
            data-key={keyOf(item)}
            draggable
            class={`${dragging === i ? 'dragging' : ''} ${over === i && dragging !== i ? 'drop-here' : ''}`}
            onDragStart={(e) => {
              setDragging(i);
              e.dataTransfer?.setData('text/plain', String(i));
              if (e.dataTransfer) e.dataTransfer.effectAllowed = 'move';
            }}
            onDragOver={(e) => {
              e.preventDefault();
              setOver(i);
            }}
            onDragLeave={() => setOver((o) => (o === i ? null : o))}
            onDrop={(e) => {
              e.preventDefault();
              const from = dragging ?? Number(e.dataTransfer?.getData('text/plain'));
              setDragging(null);
              setOver(null);
              if (Number.isInteger(from)) move(from, i);
            }}
            onDragEnd={() => {
              setDragging(null);
              setOver(null);
            }}
          >
            <span class="grip" aria-hidden="true">
              ⠿
            </span>
            <span class="name">{nameOf(item)}</span>
            <button
              type="button"
              class="move-up"
              aria-label={t('meta.moveUp', { name: nameOf(item) })}
              disabled={i === 0}
              onClick={() => move(i, i - 1)}
            >
              ↑
            </button>
            <button
              type="button"
              class="move-down"
              aria-label={t('meta.moveDown', { name: nameOf(item) })}
              disabled={i === items.length - 1}
              onClick={() => move(i, i + 1)}
            >
              ↓
            </button>
            {onRemove && (
              <button
                type="button"
                class="remove"
                aria-label={t('meta.remove', { name: nameOf(item) })}
                onClick={() => {
                  onRemove(i);
                  setSaid(t('meta.removed', { name: nameOf(item) }));
                }}
              >
                ×
              </button>
            )}
          </li>
        ))}
      </ol>
      <p class="visually-hidden" role="status" aria-live="polite">
        {said}
      </p>
    </div>
  );
}
