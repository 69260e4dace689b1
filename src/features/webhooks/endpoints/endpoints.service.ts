import type { Deps } from '../../../deps.ts';
import { sql } from 'kysely';
import { audit } from '../../../core/audit.ts';
import { requirePrivileges } from '../../../core/authz/authorize.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { fromJson, toJson } from '../../../core/db/json.ts';
import type { WebhookEndpointsTable } from '../../../core/db/schema.ts';
import { eventsPublished } from '../../../core/events/index.ts';
import { AppError, invalidField, notFound } from '../../../core/http/errors.ts';
import { newId } from '../../../core/ids.ts';
import { generateSecret, isValidSecret } from '../delivery/credentials/signing.ts';
import { assertAllowedTarget, isTargetNotAllowed } from '../../../core/net/ssrf.ts';
import { checkEventTypes } from '../event-types.ts';
import { parseTargetAuth, refuseAuthorizationClash, usesAuthorization, type TargetAuth } from './target-auth.ts';
import { findEndpoint, listEndpointRows, toEndpoint, type OAuthConfig } from './endpoints.repo.ts';
import type { Endpoint, EndpointCreateItem, EndpointUpdate, OAuthInput } from '../webhooks.schemas.ts';

/** The receiver deadline the reference documents: 200 within 30 seconds. */
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_ROTATION_OVERLAP_SECONDS = 86_400;

/** Refuses URLs that are malformed or (unless the operator allows it) point at internal addresses. */
export async function checkTarget(deps: Deps, url: string, field: string): Promise<string> {
  try {
    return (await assertAllowedTarget(url, { allowPrivate: deps.config.allowPrivateTargets })).toString();
  } catch (error) {
    if (isTargetNotAllowed(error)) throw invalidField(field, targetMessage(error));
    throw error;
  }
}

/**
 * What a caller learns about a refused target. Shape problems are explained; a host that does not
 * resolve and one that resolves to an internal address get the same answer, without the address,
 * so the check is no oracle for the server's internal DNS.
 */
function targetMessage(error: { reason: string; message: string }): string {
  if (error.reason === 'invalid_url' || error.reason === 'scheme' || error.reason === 'credentials')
    return error.message;
  return (
    'must be a public internet address (a host that does not resolve, or resolves to a loopback, private or other internal address, is refused). ' +
    'For a receiver on this machine or a private network, the operator sets TESSERA_ALLOW_PRIVATE_TARGETS=true'
  );
}

async function visibleEndpoint(deps: Deps, principal: Principal, id: string) {
  requirePrivileges(principal, 'webhooks_administration');
  const row = await findEndpoint(deps.db, principal.orgId, id);
  if (!row) throw notFound('Webhook endpoint');
  return row;
}

export async function createEndpoints(
  deps: Deps,
  principal: Principal,
  items: EndpointCreateItem[],
  ip: string,
): Promise<{ id: string; secret: string }[]> {
  requirePrivileges(principal, 'webhooks_administration');
  const now = deps.clock.now();
  const rows: WebhookEndpointsTable[] = [];
  const created: { id: string; secret: string }[] = [];
  for (const [i, item] of items.entries()) {
    const eventTypes = checkEventTypes(item.eventTypes, `body.${i}.eventTypes`);
    const url = await checkTarget(deps, item.url, `body.${i}.url`);
    const targetAuth = item.authentication ? parseTargetAuth(item.authentication, `body.${i}.authentication`) : null;
    const secret = generateSecret();
    const id = newId(now);
    created.push({ id, secret });
    rows.push({
      id,
      org_id: principal.orgId,
      description: item.description,
      url,
      event_types: toJson(eventTypes),
      rate_limit: item.rateLimit ?? null,
      timeout_ms: (item.timeoutSeconds ?? DEFAULT_TIMEOUT_MS / 1000) * 1000,
      disabled: item.disabled ? 1 : 0,
      disabled_reason: item.disabled ? 'disabled by a user' : null,
      secret: deps.keys.encrypt(secret),
      previous_secret: null,
      previous_secret_until: null,
      oauth: null,
      oauth_client_secret: null,
      target_auth: targetAuth ? toJson(targetAuth.auth) : null,
      target_auth_secret: targetAuth ? deps.keys.encrypt(targetAuth.secret) : null,
      payload_format: item.payloadFormat ?? 'standard',
      failing_since: null,
      created_by: principal.userId,
      created_at: now,
      updated_at: now,
    });
  }
  await deps.db.transaction().execute(async (trx) => {
    await trx.insertInto('webhook_endpoints').values(rows).execute();
    for (const row of rows) {
      await audit(trx, {
        orgId: principal.orgId,
        at: now,
        actorId: principal.userId,
        action: 'webhook_endpoint.created',
        targetType: 'webhook_endpoint',
        targetId: row.id,
        ip,
        data: { url: row.url },
      });
    }
  });
  return created;
}

export async function listEndpoints(
  deps: Deps,
  principal: Principal,
  query: { before?: string; after?: string; limit?: number },
): Promise<Endpoint[]> {
  requirePrivileges(principal, 'webhooks_administration');
  if (query.before !== undefined && query.after !== undefined)
    throw invalidField('query.before', 'send before or after, not both');
  for (const field of ['before', 'after'] as const) {
    const value = query[field];
    if (value !== undefined && !/^[0-9a-f-]{12,36}$/i.test(value))
      throw invalidField(`query.${field}`, 'is not a cursor (an endpoint id)');
  }
  const rows = await listEndpointRows(deps.db, principal.orgId, {
    before: query.before,
    after: query.after,
    limit: query.limit ?? 50,
  });
  return rows.map(toEndpoint);
}

export async function getEndpoint(deps: Deps, principal: Principal, id: string): Promise<Endpoint> {
  return toEndpoint(await visibleEndpoint(deps, principal, id));
}

export async function updateEndpoint(
  deps: Deps,
  principal: Principal,
  id: string,
  input: EndpointUpdate,
  ip: string,
): Promise<void> {
  const row = await visibleEndpoint(deps, principal, id);
  const now = deps.clock.now();
  const patch: Partial<WebhookEndpointsTable> = { updated_at: now };
  if (input.description !== undefined) patch.description = input.description;
  if (input.eventTypes !== undefined) patch.event_types = toJson(checkEventTypes(input.eventTypes, 'body.eventTypes'));
  if (input.url !== undefined) patch.url = await checkTarget(deps, input.url, 'body.url');
  if (input.rateLimit !== undefined) patch.rate_limit = input.rateLimit;
  if (input.timeoutSeconds !== undefined) patch.timeout_ms = input.timeoutSeconds * 1000;
  if (input.payloadFormat !== undefined) patch.payload_format = input.payloadFormat;
  if (input.authentication !== undefined) {
    const parsed = parseTargetAuth(input.authentication, 'body.authentication');
    if (parsed && row.oauth && usesAuthorization(parsed.auth)) refuseAuthorizationClash();
    patch.target_auth = parsed ? toJson(parsed.auth) : null;
    patch.target_auth_secret = parsed ? deps.keys.encrypt(parsed.secret) : null;
  }
  if (input.disabled !== undefined && input.disabled !== (row.disabled === 1)) {
    patch.disabled = input.disabled ? 1 : 0;
    patch.disabled_reason = input.disabled ? 'disabled by a user' : null;
    // Re-enabling starts a fresh health record; the 5-day auto-disable clock restarts.
    if (!input.disabled) patch.failing_since = null;
  }
  await deps.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('webhook_endpoints')
      .set(patch)
      .where('org_id', '=', principal.orgId)
      .where('id', '=', id)
      .execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'webhook_endpoint.updated',
      targetType: 'webhook_endpoint',
      targetId: id,
      ip,
      data: { fields: Object.keys(input) },
    });
  });
  if (patch.disabled === 0) eventsPublished.wake();
}

export async function deleteEndpoint(deps: Deps, principal: Principal, id: string, ip: string): Promise<void> {
  await visibleEndpoint(deps, principal, id);
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    // The endpoint first: it waits for a delivery batch that is writing for it (the worker holds the
    // row `for key share`), so the log deleted next includes what that batch wrote.
    const deleted = await trx
      .deleteFrom('webhook_endpoints')
      .where('org_id', '=', principal.orgId)
      .where('id', '=', id)
      .executeTakeFirst();
    // Two deletes at once both found it: only the one that removed it answers success and is audited.
    if (Number(deleted.numDeletedRows) === 0) throw notFound('Webhook endpoint');
    await trx
      .deleteFrom('webhook_attempts')
      .where('org_id', '=', principal.orgId)
      .where('endpoint_id', '=', id)
      .execute();
    await trx
      .deleteFrom('webhook_messages')
      .where('org_id', '=', principal.orgId)
      .where('endpoint_id', '=', id)
      .execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'webhook_endpoint.deleted',
      targetType: 'webhook_endpoint',
      targetId: id,
      ip,
    });
  });
}

export async function setOAuthClient(
  deps: Deps,
  principal: Principal,
  id: string,
  input: OAuthInput,
  ip: string,
): Promise<void> {
  const row = await visibleEndpoint(deps, principal, id);
  if (usesAuthorization(row.target_auth ? fromJson<TargetAuth>(row.target_auth, null as never) : null)) {
    throw new AppError(
      'conflict',
      'The endpoint authenticates to its receiver in Authorization already (authentication): set authentication to none first, or use a custom header',
    );
  }
  const tokenUrl = await checkTarget(deps, input.tokenUrl, 'body.tokenUrl');
  const config: OAuthConfig = {
    clientId: input.clientId,
    tokenUrl,
    scope: (input.scope ?? []).map((s) => s.trim()).filter((s) => s !== ''),
    extraParams: input.extraParams ?? {},
    authMethod: input.authMethod ?? 'client_secret_basic',
  };
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('webhook_endpoints')
      .set({ oauth: toJson(config), oauth_client_secret: deps.keys.encrypt(input.clientSecret), updated_at: now })
      .where('org_id', '=', principal.orgId)
      .where('id', '=', id)
      .execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'webhook_endpoint.oauth_set',
      targetType: 'webhook_endpoint',
      targetId: id,
      ip,
      data: { clientId: input.clientId, tokenUrl },
    });
  });
}

export async function removeOAuthClient(deps: Deps, principal: Principal, id: string, ip: string): Promise<void> {
  const row = await visibleEndpoint(deps, principal, id);
  if (!row.oauth) throw notFound('OAuth client of this endpoint');
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('webhook_endpoints')
      .set({ oauth: null, oauth_client_secret: null, updated_at: now })
      .where('org_id', '=', principal.orgId)
      .where('id', '=', id)
      .execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'webhook_endpoint.oauth_removed',
      targetType: 'webhook_endpoint',
      targetId: id,
      ip,
    });
  });
}

export async function getSecret(deps: Deps, principal: Principal, id: string): Promise<{ key: string }> {
  const row = await visibleEndpoint(deps, principal, id);
  return { key: deps.keys.decrypt(row.secret) };
}

export async function rotateSecret(
  deps: Deps,
  principal: Principal,
  id: string,
  input: { key?: string; overlapSeconds?: number },
  ip: string,
): Promise<{ key: string }> {
  const row = await visibleEndpoint(deps, principal, id);
  if (input.key !== undefined && !isValidSecret(input.key))
    throw invalidField('body.key', 'must be whsec_ followed by the base64 of 24 to 64 random bytes');
  const key = input.key ?? generateSecret();
  const now = deps.clock.now();
  const overlapMs = (input.overlapSeconds ?? DEFAULT_ROTATION_OVERLAP_SECONDS) * 1000;
  await deps.db.transaction().execute(async (trx) => {
    // The secret being replaced is the one stored when this update runs, not the one read above: of
    // two rotations at once, the second keeps the first's new secret as its previous one.
    const updated = await trx
      .updateTable('webhook_endpoints')
      .set({
        secret: deps.keys.encrypt(key),
        previous_secret: overlapMs > 0 ? sql<string>`secret` : null,
        previous_secret_until: overlapMs > 0 ? now + overlapMs : null,
        updated_at: now,
      })
      .where('org_id', '=', principal.orgId)
      .where('id', '=', row.id)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) throw notFound('Webhook endpoint');
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'webhook_endpoint.secret_rotated',
      targetType: 'webhook_endpoint',
      targetId: id,
      ip,
      data: { overlapSeconds: overlapMs / 1000 },
    });
  });
  return { key };
}
