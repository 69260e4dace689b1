import { templatesGranting } from '../../../core/authz/authorize.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import type { DbOrTrx } from '../../../core/db/connect.ts';
import { templatesHiddenFrom } from '../../metadata/index.ts';

/**
 * The security templates through which the caller holds View: the one input visibility needs.
 * Searches put these ids inside the index query (never a filter over a page of results).
 */
export async function viewableTemplateIds(db: DbOrTrx, principal: Principal): Promise<string[]> {
  if (principal.groupIds.length === 0) return [];
  const rows = await templatesGranting(db, principal, 'view').execute();
  return [...new Set(rows.map((r) => r.template_id))].sort();
}

/** What the caller may see of the index: assets through these security templates, minus assets of hidden metadata templates. */
export interface Visibility {
  viewableTemplateIds: string[];
  /** Metadata templates whose access templates grant the caller no View (their assets are hidden). */
  hiddenMetadataTemplateIds: string[];
}

export async function searchVisibility(db: DbOrTrx, principal: Principal): Promise<Visibility> {
  const [viewable, hidden] = await Promise.all([
    viewableTemplateIds(db, principal),
    templatesHiddenFrom(db, principal),
  ]);
  return { viewableTemplateIds: viewable, hiddenMetadataTemplateIds: hidden };
}
