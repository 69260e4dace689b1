import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingMessage['headers'];
  body: string;
  /** Date.now() when the request arrived. */
  at: number;
}

export type Responder = (req: Received, res: ServerResponse) => unknown;

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Replaces how the receiver answers (default: 200 "ok"). */
  respond(responder: Responder): void;
  close(): Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1 recording every request. */
export async function startReceiver(responder?: Responder): Promise<Receiver> {
  let answer: Responder =
    responder ??
    ((_req, res) => {
      res.end('ok');
    });
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(entry);
      void Promise.resolve(answer(entry, res)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    respond(next) {
      answer = next;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
