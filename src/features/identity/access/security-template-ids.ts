import type { DbOrTrx } from '../../../core/db/connect.ts';
import { invalidField } from '../../../core/http/errors.ts';
import { isUuid } from '../../../core/ids.ts';
import { securityTemplateNames } from '../directory.ts';

/**
 * How a list of security template ids that a caller sends is checked. The rules and the messages are
 * each API's own (assets keep the reference's wording); the check itself is this one function.
 */
export interface SecurityTemplateIdRules {
  /** The list's field, e.g. `body.securityTemplateIds`. */
  field: string;
  /** Refuse an empty list with this message (an asset needs at least one template). */
  required?: string;
  /** At most this many ids. */
  max?: number;
  /**
   * The acceptable ids (saved searches: those through which the caller may view). Without it, the
   * organization's security templates, and the answer carries their names.
   */
  among?: readonly string[];
  /** Ids match ignoring case (assets); otherwise exactly as stored (lower case). */
  ignoreCase?: boolean;
  /**
   * `each`: the first unacceptable entry is the error, naming `<field>.<index>`.
   * `all`: one error naming the list, this message followed by every unacceptable id.
   */
  report: { each: string } | { all: string };
}

export interface CheckedSecurityTemplateIds {
  /** The ids, each once, in the order first named (lower case with `ignoreCase`). */
  ids: string[];
  /** Their names (what events carry); empty when `among` decided. */
  named: { id: string; name: string }[];
}

/** Checks caller-sent security template ids against the organization's templates (or `among`). */
export async function checkSecurityTemplateIds(
  db: DbOrTrx,
  orgId: string,
  ids: readonly string[],
  rules: SecurityTemplateIdRules,
): Promise<CheckedSecurityTemplateIds> {
  const { field } = rules;
  if (rules.required !== undefined && ids.length === 0) throw invalidField(field, rules.required);
  if (rules.max !== undefined && ids.length > rules.max)
    throw invalidField(field, `may name at most ${rules.max} security templates`);
  const names = rules.among
    ? undefined
    : await securityTemplateNames(
        db,
        orgId,
        ids.filter(isUuid).map((id) => id.toLowerCase()),
      );
  const acceptable = names ? new Set(names.keys()) : new Set(rules.among);
  const key = (id: string) => (rules.ignoreCase ? id.toLowerCase() : id);
  if ('each' in rules.report) {
    const i = ids.findIndex((id) => !acceptable.has(key(id)));
    if (i >= 0) throw invalidField(`${field}.${i}`, rules.report.each);
  } else {
    const missing = ids.filter((id) => !acceptable.has(key(id)));
    if (missing.length > 0) throw invalidField(field, `${rules.report.all}${missing.join(', ')}`);
  }
  const unique = [...new Set(ids.map(key))];
  return { ids: unique, named: names ? unique.map((id) => ({ id, name: names.get(id)! })) : [] };
}
