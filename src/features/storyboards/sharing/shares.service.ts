import { randomBytes } from 'node:crypto';
import type { Deps } from '../../../deps.ts';
import { audit } from '../../../core/audit.ts';
import { requireOwnSignIn } from '../../../core/authz/authorize.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { invalidField, notFound } from '../../../core/http/errors.ts';
import { publishEvent } from '../../../core/events/index.ts';
import { newId } from '../../../core/ids.ts';
import { linkPasswordSucceeded, reserveLinkPasswordAttempt } from '../../auth/index.ts';
import { groupNames, hashPassword, loadUserPrincipal, userNames, verifyPassword } from '../../identity/index.ts';
import { mayViewStoryboards, type BoardRow } from '../access.ts';
import { content, type RenditionContent } from '../view/content.ts';
import { findVisibleBoard } from '../storyboards.repo.ts';
import { loadBoard, requireFlag } from '../storyboards.service.ts';
import { resolveView, type StoryboardView } from '../view/view.ts';

export const DEFAULT_LINK_DAYS = 30;
const DAY = 86_400_000;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const eventBoard = (row: BoardRow) => ({ id: row.id, title: row.title, published: row.status === 'published' });

export async function listShares(deps: Deps, principal: Principal, id: string) {
  const loaded = await loadBoard(deps, principal, id);
  requireFlag(loaded, 'canShareInternal');
  const now = deps.clock.now();
  const [shares, links] = await Promise.all([
    deps.db
      .selectFrom('storyboard_shares')
      .select(['subject_id', 'created_at'])
      .where('storyboard_id', '=', id)
      .where('org_id', '=', principal.orgId)
      .orderBy('created_at')
      .execute(),
    loaded.access.flags.canShareExternal
      ? deps.db
          .selectFrom('storyboard_links')
          .selectAll()
          .where('storyboard_id', '=', id)
          .where('org_id', '=', principal.orgId)
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .execute()
      : Promise.resolve([]),
  ]);
  // A share names a user or a group of the organization (ids are unique across both); identity names them.
  const subjects = shares.map((s) => s.subject_id);
  const [users, groups] = await Promise.all([
    userNames(deps.db, principal.orgId, subjects),
    groupNames(deps.db, principal.orgId, subjects),
  ]);
  return {
    internal: [
      ...shares.flatMap((s) => {
        const u = users.get(s.subject_id);
        return u ? [{ type: 'user' as const, id: u.id, name: u.username, sharedAt: iso(s.created_at)! }] : [];
      }),
      ...shares.flatMap((s) => {
        const name = groups.get(s.subject_id);
        return name === undefined
          ? []
          : [{ type: 'group' as const, id: s.subject_id, name, sharedAt: iso(s.created_at)! }];
      }),
    ],
    links: links.map((l) => toLink(l, now)),
  };
}

type LinkRow = {
  id: string;
  token_hint: string;
  password_hash: string | null;
  expires_at: number | null;
  revoked_at: number | null;
  created_by: string;
  created_at: number;
  last_opened_at: number | null;
  open_count: number;
};

function toLink(l: LinkRow, now: number) {
  return {
    id: l.id,
    tokenHint: l.token_hint,
    passwordProtected: l.password_hash !== null,
    expiresAt: iso(l.expires_at),
    revokedAt: iso(l.revoked_at),
    createdBy: l.created_by,
    createdAt: iso(l.created_at)!,
    lastOpenedAt: iso(l.last_opened_at),
    openCount: Number(l.open_count),
    active: l.revoked_at === null && (l.expires_at === null || l.expires_at > now),
  };
}

/** Shares with users and groups of the organization; sharing again is harmless. */
export async function shareInternally(
  deps: Deps,
  principal: Principal,
  id: string,
  input: { userIds?: string[]; groupIds?: string[] },
  ip: string,
) {
  const loaded = await loadBoard(deps, principal, id);
  requireFlag(loaded, 'canShareInternal');
  const userIds = [...new Set(input.userIds ?? [])];
  const groupIds = [...new Set(input.groupIds ?? [])];
  if (userIds.length + groupIds.length === 0) throw invalidField('body.userIds', 'name at least one user or group');
  const [userMap, groupMap] = await Promise.all([
    userNames(deps.db, principal.orgId, userIds, { peopleOnly: true }),
    groupNames(deps.db, principal.orgId, groupIds),
  ]);
  const users = [...userMap.values()].map((u) => ({ id: u.id, email: u.email }));
  const groups = [...groupMap].map(([gid, name]) => ({ id: gid, name }));
  const missingUser = userIds.findIndex((u) => !userMap.has(u));
  if (missingUser >= 0) throw invalidField(`body.userIds.${missingUser}`, 'user not found');
  const missingGroup = groupIds.findIndex((g) => !groupMap.has(g));
  if (missingGroup >= 0) throw invalidField(`body.groupIds.${missingGroup}`, 'group not found');
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const existing = new Set(
      (await trx.selectFrom('storyboard_shares').select('subject_id').where('storyboard_id', '=', id).execute()).map(
        (r) => r.subject_id,
      ),
    );
    const rows = [
      ...userIds.map((s) => ({ subject_type: 'user' as const, subject_id: s })),
      ...groupIds.map((s) => ({ subject_type: 'group' as const, subject_id: s })),
    ]
      .filter((r) => !existing.has(r.subject_id))
      .map((r) => ({
        ...r,
        id: newId(now),
        org_id: principal.orgId,
        storyboard_id: id,
        created_by: principal.userId,
        created_at: now,
      }));
    if (rows.length > 0) await trx.insertInto('storyboard_shares').values(rows).execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'storyboard.shared',
      targetType: 'storyboard',
      targetId: id,
      ip,
      data: { userIds, groupIds },
    });
    await publishEvent(trx, now, {
      orgId: principal.orgId,
      type: 'storyboard.shared',
      actor: principal.userId,
      data: {
        storyboard: eventBoard(loaded.row),
        share: { type: 'Internal', recipients: [...users.map((u) => u.email), ...groups.map((g) => g.name)] },
      },
    });
  });
  return listShares(deps, principal, id);
}

export async function unshareInternally(
  deps: Deps,
  principal: Principal,
  id: string,
  subjectId: string,
  ip: string,
): Promise<void> {
  const loaded = await loadBoard(deps, principal, id);
  requireFlag(loaded, 'canShareInternal');
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const result = await trx
      .deleteFrom('storyboard_shares')
      .where('storyboard_id', '=', id)
      .where('org_id', '=', principal.orgId)
      .where('subject_id', '=', subjectId)
      .executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) throw notFound('Share');
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'storyboard.unshared',
      targetType: 'storyboard',
      targetId: id,
      ip,
      data: { subjectId },
    });
  });
}

const tokenHash = (deps: Deps, token: string) => deps.keys.hash('storyboard-link', token);

export async function createLink(
  deps: Deps,
  principal: Principal,
  id: string,
  input: { expiresAt?: string | null; password?: string },
  ip: string,
) {
  const loaded = await loadBoard(deps, principal, id);
  requireFlag(loaded, 'canShareExternal');
  // A link is a lasting bearer credential: only the person's own sign-in makes one.
  requireOwnSignIn(principal, 'Creating a share link');
  const now = deps.clock.now();
  let expiresAt: number | null = now + DEFAULT_LINK_DAYS * DAY;
  if (input.expiresAt === null) expiresAt = null;
  else if (input.expiresAt !== undefined) {
    expiresAt = Date.parse(input.expiresAt);
    if (!Number.isFinite(expiresAt)) throw invalidField('body.expiresAt', 'is not a date-time');
    if (expiresAt <= now) throw invalidField('body.expiresAt', 'must be in the future');
  }
  const token = randomBytes(24).toString('base64url');
  const row = {
    id: newId(now),
    org_id: principal.orgId,
    storyboard_id: id,
    token_hash: tokenHash(deps, token),
    hash_key_id: deps.keys.keyId,
    token_hint: token.slice(-4),
    password_hash: input.password ? await hashPassword(input.password) : null,
    expires_at: expiresAt,
    revoked_at: null,
    created_by: principal.userId,
    created_at: now,
    last_opened_at: null,
    open_count: 0,
  };
  await deps.db.transaction().execute(async (trx) => {
    await trx.insertInto('storyboard_links').values(row).execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'storyboard.link.created',
      targetType: 'storyboard',
      targetId: id,
      ip,
      data: { linkId: row.id, expiresAt },
    });
    await publishEvent(trx, now, {
      orgId: principal.orgId,
      type: 'storyboard.shared',
      actor: principal.userId,
      data: { storyboard: eventBoard(loaded.row), share: { type: 'External', recipients: [] } },
    });
  });
  return { ...toLink(row, now), token, url: `${deps.config.publicUrl.replace(/\/$/, '')}/shared/storyboards/${token}` };
}

export async function revokeLink(
  deps: Deps,
  principal: Principal,
  id: string,
  linkId: string,
  ip: string,
): Promise<void> {
  const loaded = await loadBoard(deps, principal, id);
  requireFlag(loaded, 'canShareExternal');
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const result = await trx
      .updateTable('storyboard_links')
      .set({ revoked_at: now })
      .where('id', '=', linkId)
      .where('storyboard_id', '=', id)
      .where('org_id', '=', principal.orgId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) throw notFound('Share link');
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'storyboard.link.revoked',
      targetType: 'storyboard',
      targetId: id,
      ip,
      data: { linkId },
    });
  });
}

// --- opening a link (no credentials: the token is the credential) ---

export interface OpenedLink {
  linkId: string;
  board: BoardRow;
  /** The link's creator: the view is resolved with their permissions, never more. */
  viewer: Principal;
  passwordHash: string | null;
}

const looksLikeToken = (token: string) => /^[A-Za-z0-9_-]{32}$/.test(token);

/**
 * The story board behind a link, or 404 when the token is unknown, revoked or expired, when the
 * creator can no longer view the board, or when the board is gone: all look the same.
 */
export async function openLink(deps: Deps, token: string): Promise<OpenedLink> {
  if (!looksLikeToken(token)) throw notFound('Share link');
  const now = deps.clock.now();
  const link = await deps.db
    .selectFrom('storyboard_links')
    .selectAll()
    .where('token_hash', 'in', deps.keys.hashes('storyboard-link', token))
    .executeTakeFirst();
  if (!link || link.revoked_at !== null || (link.expires_at !== null && link.expires_at <= now))
    throw notFound('Share link');
  // Found under a previous key (a secret rotation): re-keyed, so it outlives that key.
  const current = tokenHash(deps, token);
  if (link.token_hash !== current)
    await deps.db
      .updateTable('storyboard_links')
      .set({ token_hash: current, hash_key_id: deps.keys.keyId })
      .where('id', '=', link.id)
      .where('org_id', '=', link.org_id)
      .where('token_hash', '=', link.token_hash)
      .execute();
  const viewer = await loadUserPrincipal(deps.db, link.created_by);
  if (!viewer || viewer.orgId !== link.org_id || !mayViewStoryboards(viewer)) throw notFound('Share link');
  const board = await findVisibleBoard(deps.db, viewer, link.storyboard_id);
  if (!board) throw notFound('Share link');
  return { linkId: link.id, board, viewer, passwordHash: link.password_hash };
}

/** The cookie value that proves the password was given for this link (bound to the link and its hash). */
export function unlockProof(deps: Deps, opened: OpenedLink): string {
  return deps.keys.hash('storyboard-link-unlock', `${opened.linkId}:${opened.passwordHash ?? ''}`);
}

export function isUnlocked(deps: Deps, opened: OpenedLink, cookieValue: string | undefined): boolean {
  if (opened.passwordHash === null) return true;
  if (!cookieValue) return false;
  return deps.keys.verify('storyboard-link-unlock', `${opened.linkId}:${opened.passwordHash ?? ''}`, cookieValue);
}

/**
 * Checks a link's password, throttled like sign-in (per link and per client address, each attempt
 * reserved before hashing): past a few wrong guesses, 429 with Retry-After.
 */
export async function checkLinkPassword(
  deps: Deps,
  opened: OpenedLink,
  password: string,
  ip: string,
): Promise<boolean> {
  if (opened.passwordHash === null) return true;
  const reservation = await reserveLinkPasswordAttempt(deps, opened.linkId, ip);
  if (!(await verifyPassword(opened.passwordHash, password))) return false;
  await linkPasswordSucceeded(deps, reservation);
  return true;
}

export async function recordOpen(deps: Deps, opened: OpenedLink): Promise<void> {
  await deps.db
    .updateTable('storyboard_links')
    .set((eb) => ({ last_opened_at: deps.clock.now(), open_count: eb('open_count', '+', 1) }))
    .where('id', '=', opened.linkId)
    .execute();
}

export const sharedRenditionUrl = (token: string) => (assetId: string, rendition: string) =>
  `/shared/storyboards/${token}/assets/${assetId}/${rendition}`;

export async function linkView(deps: Deps, opened: OpenedLink, token: string): Promise<StoryboardView> {
  return resolveView(deps, opened.viewer, opened.board, sharedRenditionUrl(token));
}

/** A rendition through a link: only of an asset that the link's view shows. */
export async function linkRendition(
  deps: Deps,
  opened: OpenedLink,
  token: string,
  assetId: string,
  rendition: string,
): Promise<RenditionContent> {
  const view = await linkView(deps, opened, token);
  const shown = new Set<string>(view.cover ? [view.cover.id] : []);
  for (const b of view.blocks) {
    if (b.asset) shown.add(b.asset.id);
    for (const a of b.assets ?? []) shown.add(a.id);
  }
  if (!shown.has(assetId)) throw notFound('Rendition');
  const found = await content.rendition(deps, opened.viewer, assetId, rendition);
  if (!found) throw notFound('Rendition');
  return found;
}
