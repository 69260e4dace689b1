import type { ExpressionBuilder, Selectable } from 'kysely';
import { templatesGranting } from '../../core/authz/authorize.ts';
import { allows, mayPerform, type Action } from '../../core/authz/permissions.ts';
import { ALL_PERMISSIONS, type Permission } from '../../core/authz/catalog.ts';
import type { Principal } from '../../core/authz/principal.ts';
import type { DbOrTrx } from '../../core/db/connect.ts';
import type { Database, StoryboardsTable } from '../../core/db/schema.ts';

export type BoardRow = Selectable<StoryboardsTable>;

/**
 * Who may see and do what with a story board; the one place these rules live.
 * - Nothing without the viewStoryboards or Story Board Management privilege (lists are then empty).
 * - The creator always sees it. Drafts are seen only by Story Board managers.
 * - Otherwise it is visible when shared with the viewer or one of their groups, when it has no
 *   security templates, or when one of its templates grants the viewer's groups View.
 * - Permissions: the creator holds all; on a secured board the union of what its templates grant
 *   the viewer's groups; on an open board managers hold all and others View.
 * - Flags: editing, publishing, deleting, applying templates and external links also need the
 *   Story Board Management privilege.
 */
export function mayViewStoryboards(principal: Principal): boolean {
  return mayPerform(principal, 'storyboard.view');
}

/** A Story Board manager: the privilege that creating, editing and external links need (permission table). */
export function isManager(principal: Principal): boolean {
  return mayPerform(principal, 'storyboard.create');
}

/** SQL filter: the story boards of `principal`'s organization that `principal` may view. */
export function visibleBoards(db: DbOrTrx, principal: Principal) {
  const subjects = [principal.userId, ...principal.groupIds];
  return (eb: ExpressionBuilder<Database, 'storyboards'>) => {
    const open = eb.or([
      eb(
        'storyboards.id',
        'in',
        db
          .selectFrom('storyboard_shares')
          .select('storyboard_id')
          .where('org_id', '=', principal.orgId)
          .where('subject_id', 'in', subjects),
      ),
      eb('storyboards.secured', '=', 0),
      eb(
        'storyboards.id',
        'in',
        db
          .selectFrom('storyboard_security_templates')
          .select('storyboard_id')
          .where('org_id', '=', principal.orgId)
          .where('template_id', 'in', templatesGranting(db, principal, 'view')),
      ),
    ]);
    return eb.and([
      eb('storyboards.org_id', '=', principal.orgId),
      eb.or([
        eb('storyboards.created_by', '=', principal.userId),
        isManager(principal) ? open : eb.and([eb('storyboards.status', '=', 'published'), open]),
      ]),
    ]);
  };
}

export interface Access {
  permissions: Set<Permission>;
  flags: {
    canEdit: boolean;
    canDelete: boolean;
    canApplySecurityTemplates: boolean;
    canShareInternal: boolean;
    canShareExternal: boolean;
    canPublish: boolean;
  };
}

/** Access of a board the caller can already see (the visibility filter ran first). */
export function accessTo(
  principal: Principal,
  row: BoardRow,
  templateIds: readonly string[],
  grants: Map<string, Set<Permission>>,
): Access {
  let permissions: Set<Permission>;
  if (row.created_by === principal.userId) {
    permissions = new Set(ALL_PERMISSIONS);
  } else if (templateIds.length > 0) {
    permissions = new Set<Permission>(['view']);
    for (const t of templateIds) for (const p of grants.get(t) ?? []) permissions.add(p);
  } else {
    permissions = isManager(principal) ? new Set(ALL_PERMISSIONS) : new Set<Permission>(['view']);
  }
  // Each flag is one row of the permission table (core/authz/permissions.ts): its privileges and its permissions.
  const may = (action: Action) => allows(principal, permissions, action);
  return {
    permissions,
    flags: {
      canEdit: may('storyboard.edit'),
      canDelete: may('storyboard.delete'),
      canApplySecurityTemplates: may('storyboard.apply_security_template'),
      canShareInternal: may('storyboard.share_internal'),
      canShareExternal: may('storyboard.share_external'),
      canPublish: may('storyboard.edit'),
    },
  };
}
