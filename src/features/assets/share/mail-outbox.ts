import type { Deps } from '../../../deps.ts';
import type { DbOrTrx } from '../../../core/db/connect.ts';
import { enqueueJob, FatalJobError } from '../../../core/jobs/queue.ts';
import type { Job } from '../../../core/jobs/catalog.ts';
import { newId } from '../../../core/ids.ts';
import { tooManyRequests } from '../../../core/http/errors.ts';
import type { Config } from '../../../config.ts';
import { recordedError } from '../../../core/recorded-error.ts';
import { orgLimits } from '../../quotas/index.ts';

export const MAIL_JOB = 'mail.send';
/** With the workers' backoff (1 s, 2 s, 4 s … capped at 10 min) this keeps trying for about an hour and a half. */
export const MAIL_MAX_ATTEMPTS = 14;

export interface OutgoingMail {
  /** The organization the mail is sent for (null for system mail). */
  orgId: string | null;
  /** The user who had it sent (share mail counts against their hourly limit); absent for system mail. */
  senderId?: string | null;
  to: string | { name: string; address: string };
  subject: string;
  text: string;
  html?: string;
}

function formatAddress(to: OutgoingMail['to']): string {
  if (typeof to === 'string') return to;
  // A display name goes in quotes with quotes and backslashes escaped (RFC 5322 quoted-string).
  return `"${to.name.replace(/[\\"]/g, (c) => `\\${c}`).replace(/[\r\n]/g, ' ')}" <${to.address}>`;
}

/**
 * Puts a mail into the durable outbox, in the caller's transaction: it exists exactly when the
 * change that wants it sent commits. The `mail.send` job delivers it from the workers, retrying
 * temporary failures (connection refused, timeouts, SMTP 4xx) with backoff. Call `deps.jobs.wake()`
 * after the transaction commits so an in-process worker sends it at once. Returns the outbox id.
 */
export async function queueMail(trx: DbOrTrx, now: number, mail: OutgoingMail): Promise<string> {
  const id = newId(now);
  await trx
    .insertInto('mail_outbox')
    .values({
      id,
      org_id: mail.orgId,
      sender_id: mail.senderId ?? null,
      to_address: formatAddress(mail.to),
      subject: mail.subject,
      text_body: mail.text,
      html_body: mail.html ?? null,
      message_id: `<${id}@tessera.outbox>`,
      status: 'queued',
      attempts: 0,
      last_error: null,
      created_at: now,
      updated_at: now,
      sent_at: null,
    })
    .execute();
  await enqueueJob(trx, now, {
    type: MAIL_JOB,
    orgId: mail.orgId,
    payload: { mailId: id },
    maxAttempts: MAIL_MAX_ATTEMPTS,
  });
  return id;
}

const HOUR_MS = 3_600_000;

/**
 * The share-mail rate limits: per sender TESSERA_SHARE_MAIL_PER_USER_PER_HOUR, per organization its
 * own shareMailPerHour quota (features/quotas, PATCH /v1/quotas) or else
 * TESSERA_SHARE_MAIL_PER_ORG_PER_HOUR. Throws 429 with Retry-After, naming the limit, when queueing
 * `count` more mails would take the sender or the organization past its mails of the last hour
 * (a sliding hour, counted in the outbox). A share is refused whole, never half sent.
 */
export async function checkShareMailLimits(
  db: DbOrTrx,
  config: Pick<Config, 'shareMailPerUserPerHour' | 'shareMailPerOrgPerHour' | 'quotas'>,
  who: { orgId: string; senderId: string | null },
  count: number,
  now: number,
): Promise<void> {
  const since = now - HOUR_MS;
  const orgLimit = (await orgLimits(db, config, who.orgId)).shareMailPerHour;
  const limits = [
    {
      limit: config.shareMailPerUserPerHour,
      column: 'sender_id' as const,
      value: who.senderId,
      what: 'per user',
      name: 'shareMailPerUserPerHour',
      setting: 'TESSERA_SHARE_MAIL_PER_USER_PER_HOUR',
    },
    {
      limit: orgLimit.limit ?? 0,
      column: 'org_id' as const,
      value: who.orgId,
      what: 'per organization',
      name: 'shareMailPerHour',
      setting:
        orgLimit.source === 'organization'
          ? "the organization's shareMailPerHour quota"
          : 'TESSERA_SHARE_MAIL_PER_ORG_PER_HOUR',
    },
  ];
  for (const l of limits) {
    if (l.limit === 0 || l.value === null) continue;
    const row = await db
      .selectFrom('mail_outbox')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest')])
      .where(l.column, '=', l.value)
      .where('created_at', '>', since)
      .executeTakeFirst();
    const sent = Number(row?.n ?? 0);
    if (sent + count <= l.limit) continue;
    const retry = count > l.limit ? HOUR_MS : Number(row?.oldest ?? now) + HOUR_MS - now;
    throw tooManyRequests(
      retry / 1000,
      `Share mail limit reached: at most ${l.limit} mails ${l.what} per hour (${l.setting}); ${sent} were queued in the last hour and this share has ${count}`,
      { name: l.name, limit: l.limit, used: sent, requested: count },
    );
  }
}

/** Share mails (mails someone had sent) an organization queued in the last hour: its shareMailPerHour use. */
export async function shareMailsLastHour(db: DbOrTrx, orgId: string, now: number): Promise<number> {
  const row = await db
    .selectFrom('mail_outbox')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .where('created_at', '>', now - HOUR_MS)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** SMTP answers that will never succeed on retry (5xx) and bad addresses; everything else is temporary. */
function isPermanent(error: unknown): boolean {
  const e = error as { responseCode?: number; code?: string };
  if (typeof e.responseCode === 'number') return e.responseCode >= 500;
  return e.code === 'EENVELOPE' || e.code === 'EMESSAGE';
}

/** The `mail.send` job: one delivery attempt of one outbox mail, recorded on its row. */
export async function sendQueuedMail(deps: Deps, job: Job<typeof MAIL_JOB>): Promise<void> {
  const { mailId } = job.payload;
  const mail = await deps.db.selectFrom('mail_outbox').selectAll().where('id', '=', mailId).executeTakeFirst();
  // Already sent (a worker died between sending and finishing the job) or gone with its organization.
  if (!mail || mail.status !== 'queued') return;
  const smtpUrl = deps.config.smtpUrl;
  const record = (set: { status?: 'sent' | 'failed'; last_error?: string | null; sent_at?: number }) =>
    deps.db
      .updateTable('mail_outbox')
      .set({ attempts: mail.attempts + 1, updated_at: deps.clock.now(), ...set })
      .where('id', '=', mailId)
      .execute();
  if (!smtpUrl) {
    await record({ status: 'failed', last_error: 'SMTP is not configured (TESSERA_SMTP_URL)' });
    throw new FatalJobError('SMTP is not configured');
  }
  // Loaded when mail is first sent, not at start (lean start).
  const { default: nodemailer } = await import('nodemailer');
  // Timeouts well inside the job lease, so a hung server never lets a second worker send the same mail.
  const transport = nodemailer.createTransport({
    url: smtpUrl,
    connectionTimeout: 15_000,
    greetingTimeout: 15_000,
    socketTimeout: 20_000,
  });
  try {
    await transport.sendMail({
      from: deps.config.mailFrom,
      to: mail.to_address,
      subject: mail.subject,
      text: mail.text_body,
      ...(mail.html_body ? { html: mail.html_body } : {}),
      messageId: mail.message_id,
    });
  } catch (error) {
    const message = recordedError(error);
    const last = isPermanent(error) || job.attempts >= job.maxAttempts;
    await record(last ? { status: 'failed', last_error: message } : { last_error: message });
    if (isPermanent(error)) throw new FatalJobError(message);
    throw error;
  } finally {
    transport.close();
  }
  await record({ status: 'sent', last_error: null, sent_at: deps.clock.now() });
}

/** Where an outbox mail stands (shares report it; tests and operators read it). */
export async function mailStatus(db: DbOrTrx, ids: readonly string[]) {
  if (ids.length === 0) return [];
  return db
    .selectFrom('mail_outbox')
    .select(['id', 'status', 'attempts', 'last_error', 'sent_at'])
    .where('id', 'in', [...ids])
    .execute();
}
