import { invalidValue } from './errors.ts';

/** Lenient readers of what identity providers send (Entra ID sends booleans as "True"/"False"). */

export function toBoolean(value: unknown, field: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') {
    const lower = value.trim().toLowerCase();
    if (lower === 'true') return true;
    if (lower === 'false') return false;
  }
  throw invalidValue(`${field} must be a boolean (true or false)`);
}

export function toText(value: unknown, field: string, max: number, options: { nullable?: boolean } = {}): string {
  if (value === null && options.nullable) return '';
  if (typeof value !== 'string') throw invalidValue(`${field} must be a string`);
  if (value.length > max) throw invalidValue(`${field} must be at most ${max} characters`);
  if (/[\u0000-\u001f\u007f]/.test(value)) throw invalidValue(`${field} must not contain control characters`);
  return value;
}

const USERNAME = /^[^\s\u0000-\u001f\u007f]{1,254}$/;

export function toUserName(value: unknown, field = 'userName'): string {
  if (typeof value !== 'string' || !USERNAME.test(value))
    throw invalidValue(`${field} must be 1–254 characters without spaces or control characters`);
  return value;
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;

export function toEmail(value: unknown, field: string): string {
  const email = toText(value, field, 254, { nullable: true }).trim();
  if (email !== '' && !EMAIL.test(email)) throw invalidValue(`${field} must be an e-mail address`);
  return email;
}

/** The primary e-mail of a SCIM `emails` value (else the first; '' for none). */
export function primaryEmail(value: unknown, field = 'emails'): string {
  if (value === null) return '';
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0) return '';
  for (const item of list)
    if (item === null || typeof item !== 'object') throw invalidValue(`${field} must be a list of {value, primary}`);
  const items = list as Record<string, unknown>[];
  const primary = items.find((e) => e.primary !== undefined && toBoolean(e.primary, `${field}.primary`)) ?? items[0]!;
  return toEmail(primary.value, `${field}.value`);
}

export function toExternalId(value: unknown, field = 'externalId'): string | null {
  if (value === null) return null;
  const text = toText(value, field, 255);
  return text === '' ? null : text;
}
