// A real SMTP server on loopback for tests that send mail (shares, the mail outbox).
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string;
  body: string;
  messageId: string;
}

export interface TestSmtp {
  port: number;
  /** Every accepted mail, in order; tests may empty it (`mails.length = 0`). */
  mails: ReceivedMail[];
  /** How many MAIL FROM commands were refused so far. */
  readonly refusals: number;
  close(): Promise<void>;
}

/**
 * Starts an SMTP server on 127.0.0.1 (`port` 0: any free one). With `refuse`, the first `times`
 * MAIL FROM commands are answered with that code (451: try later; 550: never), then mail is accepted.
 */
export async function startSmtp(options: { port?: number; refuse?: number; times?: number } = {}): Promise<TestSmtp> {
  const mails: ReceivedMail[] = [];
  let refusals = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onMailFrom(_address, _session, callback) {
      if (options.refuse !== undefined && refusals < (options.times ?? 1)) {
        refusals++;
        return callback(Object.assign(new Error('Mailbox busy, try again later'), { responseCode: options.refuse }));
      }
      callback();
    },
    onData(stream, session, callback) {
      let body = '';
      stream.on('data', (c) => (body += c));
      stream.on('end', () => {
        mails.push({
          to: session.envelope.rcptTo.map((r) => r.address).join(','),
          body,
          messageId: /^Message-ID: (.*)$/im.exec(body)?.[1]?.trim() ?? '',
        });
        callback();
      });
    },
  });
  // SMTPServer re-emits each connection's socket errors (a client that resets, a transport closed
  // mid-session) as 'error' events of its own: unheard, one would crash the test process.
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  return {
    port: (server.server.address() as { port: number }).port,
    mails,
    get refusals() {
      return refusals;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
