import type { Deps } from '../../../deps.ts';

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
