import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of a real server (PostgreSQL, an S3-protocol server), to make
 * the network between Tessera and it fail the ways networks fail:
 * - `hang()`: connections stay open but nothing moves either way (no reset, no reply), new ones
 *   included; `resume()` lets what was held through, in order.
 * - `cut()`: every connection is reset and new ones are refused; `restore()` accepts again.
 */
export interface TcpProxy {
  readonly port: number;
  hang(): void;
  resume(): void;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket;
  held: { to: Socket; data: Buffer }[];
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let hung = false;
  let refusing = false;
  const pairs = new Set<Pair>();
  const forward = (pair: Pair, to: Socket) => (data: Buffer) => {
    if (hung) pair.held.push({ to, data });
    else to.write(data);
  };
  const server = createServer((client) => {
    if (refusing) {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    const pair: Pair = { client, upstream, held: [] };
    pairs.add(pair);
    client.on('data', forward(pair, upstream));
    upstream.on('data', forward(pair, client));
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on('error', end);
      socket.on('close', end);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    hang() {
      hung = true;
    },
    resume() {
      hung = false;
      for (const pair of pairs) {
        for (const { to, data } of pair.held.splice(0)) to.write(data);
      }
    },
    cut() {
      refusing = true;
      hung = false;
      for (const pair of pairs) {
        pair.client.resetAndDestroy();
        pair.upstream.destroy();
      }
      pairs.clear();
    },
    restore() {
      refusing = false;
    },
    async close() {
      refusing = true;
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
