import { connect, createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago (for child processes that need a fixed port). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A slow client: connects, sends `head`, then sends `drip` every `everyMs` until the server closes
 * the connection. Resolves with what the server sent and whether it closed the connection; gives
 * up (closed: false) after `giveUpMs`, so a server without timeouts fails the test instead of hanging it.
 */
export function slowClient(
  port: number,
  head: string,
  drip: string,
  options: { everyMs?: number; giveUpMs?: number } = {},
): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearInterval(dripping);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ text, closed });
    };
    let dripping: NodeJS.Timeout | undefined;
    const giveUp = setTimeout(() => finish(false), options.giveUpMs ?? 30_000);
    // The drip starts once the head is written: started before the connection was up (a loaded machine), its first
    // byte was queued ahead of the head ("xGET /healthz …"), and the server rightly answered 400, not 408.
    socket.on('connect', () => {
      socket.write(head);
      dripping = setInterval(() => {
        if (socket.writable) socket.write(drip);
      }, options.everyMs ?? 50);
    });
    socket.on('data', (d) => {
      text += d.toString('latin1');
    });
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
  });
}
