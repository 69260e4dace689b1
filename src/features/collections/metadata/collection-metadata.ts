import type { Principal } from '../../../core/authz/principal.ts';
import type { DbOrTrx } from '../../../core/db/connect.ts';
import { invalidField } from '../../../core/http/errors.ts';
import { isUuid } from '../../../core/ids.ts';
import { canUseTemplate, loadTemplate, metadataInvalid, validateMetadata } from '../../metadata/index.ts';

/**
 * A collection's metadata goes through the same validation library as assets' when the
 * collection names a metadata template: the template must exist and be open to the caller, and
 * every value must fit it (types, lengths, dates, vocabularies, cascades, tables), in either
 * encoding, every problem listed with its path. Required attributes are not enforced on
 * collections, and the document is kept as the client wrote it. Without a template there is
 * nothing to check against: the document is free-form, as in the reference.
 */
export async function checkCollectionMetadata(
  db: DbOrTrx,
  principal: Principal,
  templateId: string | null | undefined,
  document: unknown[],
  path: string,
): Promise<void> {
  if (templateId === null || templateId === undefined || templateId === '') return;
  const unknown = () =>
    invalidField('body.metadataTemplateId', 'no metadata template of this organization you may use has this id');
  if (!isUuid(templateId)) throw unknown();
  const t = await loadTemplate(db, principal.orgId, templateId);
  if (!t || !(await canUseTemplate(db, principal, templateId))) throw unknown();
  const r = validateMetadata(t, document, { mode: 'patch', path });
  if (!r.ok) throw metadataInvalid(r.problems);
}
