import { useState } from 'preact/hooks';
import { ApiError } from '../api.ts';
import { t, type MessageKey } from '../messages.ts';
import './admin.css';

export { withOwnSignIn } from '../own-sign-in.ts';

/** A 403 from the API: the caller lacks a privilege (shown as the ceiling, before any click). */
export function isForbidden(error: unknown): boolean {
  return error instanceof ApiError && error.status === 403;
}

/** What the caller may not do here, and which privilege it takes: said up front, not after a failed click. */
export function Ceiling({ what, privilege, id }: { what: MessageKey; privilege: MessageKey; id?: string }) {
  return (
    <p class="ceiling" role="note" id={id}>
      {t('admin.mayNot', { what: t(what), privilege: t(privilege) })}
    </p>
  );
}

/** A secret shown once: selectable, copyable, and gone when dismissed. */
export function SecretBox({
  label,
  value,
  id,
  onDone,
}: {
  label: string;
  value: string;
  id: string;
  onDone?: () => void;
}) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="secret">
      <label for={id}>{label}</label>
      <div class="row">
        <input
          id={id}
          class="mono"
          readOnly
          value={value}
          size={Math.min(60, value.length)}
          onFocus={(e) => (e.target as HTMLInputElement).select()}
        />
        <button
          type="button"
          onClick={async () => {
            await navigator.clipboard?.writeText(value).catch(() => undefined);
            setCopied(true);
          }}
        >
          {t('admin.copy')}
        </button>
        {onDone && (
          <button type="button" onClick={onDone}>
            {t('keys.stored')}
          </button>
        )}
      </div>
      {copied && (
        <p class="small muted" role="status">
          {t('admin.copied')}
        </p>
      )}
    </div>
  );
}

/** The API's field problems, by the field name they end with (`body.0.url` → `url`). */
export function fieldErrors(error: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (error instanceof ApiError) for (const d of error.details) out[d.field.split('.').pop()!] ??= d.message;
  return out;
}

export function FieldError({ id, message }: { id: string; message?: string }) {
  return message ? (
    <span class="field-error" id={id}>
      {message}
    </span>
  ) : null;
}

/** A labelled input whose value is text, with the API's problem with its field beneath it. */
export function TextField({
  id,
  label,
  value,
  onInput,
  error,
  type = 'text',
  maxLength,
  required = true,
}: {
  id: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  error?: string;
  type?: 'text' | 'email' | 'password';
  maxLength?: number;
  required?: boolean;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        type={type as 'text'}
        required={required}
        maxLength={maxLength}
        value={value}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        onInput={(e) => onInput((e.target as HTMLInputElement).value)}
      />
      <FieldError id={`${id}-error`} message={error} />
    </div>
  );
}

/** A problem of the whole form (not of one field), announced when it appears. */
export function FormError({ message }: { message?: string }) {
  return message ? (
    <p class="error" role="alert">
      {message}
    </p>
  ) : null;
}

/**
 * An editor's buttons: save and cancel, and for a record that exists, Delete, which asks once more
 * ("Delete {name}?") before `onDelete` runs. Ids are `${id}-save`, `${id}-delete` and `${id}-delete-yes`.
 */
export function EditorActions({
  id,
  onCancel,
  deletes,
}: {
  id: string;
  onCancel: () => void;
  deletes?: { name: string; run: () => Promise<void> };
}) {
  const [confirming, setConfirming] = useState(false);
  return (
    <div class="row">
      <button type="submit" class="primary" id={`${id}-save`}>
        {t('admin.save')}
      </button>
      <button type="button" onClick={onCancel}>
        {t('admin.cancel')}
      </button>
      {deletes && !confirming && (
        <button type="button" class="danger" id={`${id}-delete`} onClick={() => setConfirming(true)}>
          {t('admin.delete')}
        </button>
      )}
      {deletes && confirming && (
        <button type="button" class="danger" id={`${id}-delete-yes`} onClick={deletes.run}>
          {t('admin.confirmDelete', { name: deletes.name })}
        </button>
      )}
    </div>
  );
}

export function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : t('admin.never');
}
