import nodemailer from 'nodemailer';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../core/http/errors.ts';

export interface MailMessage {
  to: { email: string; name?: string };
  subject: string;
  text: string;
  html: string;
}

/** Whether mail can be sent at all (TESSERA_SMTP_URL is set). */
export function mailConfigured(deps: Deps): boolean {
  return Boolean(deps.config.smtpUrl);
}

/**
 * Sends messages through the configured SMTP server, one transport for the batch. Throws 503 when
 * the server refuses; returns false (nothing sent) when SMTP is not configured. Other features
 * (collection share) send through here, so a mail outbox can later replace this one function.
 */
export async function sendMail(deps: Deps, messages: readonly MailMessage[]): Promise<boolean> {
  if (!deps.config.smtpUrl) return false;
  const transport = nodemailer.createTransport(deps.config.smtpUrl);
  try {
    for (const m of messages) {
      await transport.sendMail({ from: deps.config.mailFrom, to: m.to.name ? { name: m.to.name, address: m.to.email } : m.to.email, subject: m.subject, text: m.text, html: m.html });
    }
    return true;
  } catch (error) {
    throw new AppError('service_unavailable', `The mail server refused the message: ${(error as Error).message}`);
  } finally {
    transport.close();
  }
}
