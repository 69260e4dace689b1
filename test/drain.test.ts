// SIGTERM drain of a real `node src/main.ts serve`: unready at once, no new connections, the request
// in flight completes, exit code 0.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { it } from 'node:test';
import { forEachEngine } from './helpers/context.ts';
import { freePort } from './helpers/net.ts';
import { tesseraEnv } from './helpers/tessera-process.ts';
import { waitForValue } from './helpers/wait.ts';

const ADMIN = { username: 'drain-admin', password: 'Drain-Admin-Password-1' };

function get(agent: Agent, port: number, path: string): Promise<{ status: number; body: string; connection?: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body, connection: res.headers.connection }));
    });
    req.on('error', reject);
    req.end();
  });
}

forEachEngine('SIGTERM drain', (ctx) => {
  it('answers /readyz 503 draining at once, accepts no new connection, completes the request in flight, exits 0', {
    timeout: 120_000,
  }, async () => {
    const port = await freePort();
    const env = tesseraEnv(ctx(), {
      PORT: String(port),
      TESSERA_ADMIN_USERNAME: ADMIN.username,
      TESSERA_ADMIN_PASSWORD: ADMIN.password,
      // Long enough that only the request's own end finishes the drain here.
      TESSERA_DRAIN_TIMEOUT_MS: '120000',
    });
    let stdout = '';
    const child: ChildProcess = spawn(process.execPath, ['src/main.ts', 'serve'], {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout!.on('data', (d) => (stdout += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const probeAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    const slowAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      await waitForValue('the server to listen', async () => {
        if (child.exitCode !== null) throw new Error(`server exited:\n${stdout}`);
        return get(probeAgent, port, '/readyz').then(
          (r) => (r.status === 200 ? true : undefined),
          () => undefined,
        );
      });

      // A login whose body is still arriving: in flight until the client sends the rest.
      const body = JSON.stringify(ADMIN);
      const half = Math.floor(body.length / 2);
      const slow = request({
        host: '127.0.0.1',
        port,
        path: '/v1/auth/token',
        method: 'POST',
        agent: slowAgent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      });
      const answered = new Promise<IncomingMessage>((resolve, reject) => {
        slow.once('response', resolve);
        slow.once('error', reject);
      });
      slow.write(body.slice(0, half));
      slow.flushHeaders();
      // The server has the request (Fastify logs it as it arrives) before the signal.
      await waitForValue('the server to receive the slow request', async () =>
        /"msg":"incoming request"[^\n]*\/v1\/auth\/token|\/v1\/auth\/token[^\n]*"msg":"incoming request"/.test(stdout)
          ? true
          : undefined,
      );

      child.kill('SIGTERM');
      // Over the kept-alive connection a load balancer probes on: unready, and told to close.
      const unready = await waitForValue('/readyz to answer 503', async () => {
        const r = await get(probeAgent, port, '/readyz');
        return r.status === 503 ? r : undefined;
      });
      const parsed = JSON.parse(unready.body) as { code: string; message: string; details: { field: string }[] };
      assert.equal(parsed.code, 'service_unavailable');
      assert.match(parsed.message, /draining/);
      assert.deepEqual(
        parsed.details.map((d) => d.field),
        ['checks.draining'],
      );
      assert.equal(unready.connection, 'close');

      // No new connection is accepted.
      const refused = await new Promise<string>((resolve) => {
        const socket = connect(port, '127.0.0.1');
        socket.once('connect', () => {
          socket.destroy();
          resolve('connected');
        });
        socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
      });
      assert.equal(refused, 'ECONNREFUSED');
      assert.equal(child.exitCode, null, 'still running while the request is in flight');

      // The request in flight completes.
      slow.end(body.slice(half));
      const res = await answered;
      let text = '';
      res.setEncoding('utf8');
      for await (const chunk of res) text += chunk;
      assert.equal(res.statusCode, 200, text);
      assert.ok((JSON.parse(text) as { session: { accessToken: string } }).session.accessToken);

      assert.equal(await exited, 0, stdout);
      assert.match(stdout, /"msg":"drained"/);
    } finally {
      probeAgent.destroy();
      slowAgent.destroy();
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    }
  });
  it('cuts a request still in flight when TESSERA_DRAIN_TIMEOUT_MS is over, and still exits 0', {
    timeout: 120_000,
  }, async () => {
    const port = await freePort();
    let stdout = '';
    const child: ChildProcess = spawn(process.execPath, ['src/main.ts', 'serve'], {
      env: tesseraEnv(ctx(), { PORT: String(port), TESSERA_DRAIN_TIMEOUT_MS: '200' }),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout!.on('data', (d) => (stdout += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      await waitForValue('the server to listen', async () => {
        if (child.exitCode !== null) throw new Error(`server exited:\n${stdout}`);
        return get(agent, port, '/healthz').then(
          (r) => (r.status === 200 ? true : undefined),
          () => undefined,
        );
      });
      // A body that never completes.
      const stuck = request({
        host: '127.0.0.1',
        port,
        path: '/v1/auth/token',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': 1000 },
      });
      const outcome = new Promise<string>((resolve) => {
        stuck.once('response', (res) => resolve(`answered ${res.statusCode}`));
        stuck.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
      });
      stuck.write('{"username":');
      stuck.flushHeaders();
      await waitForValue('the server to receive the stuck request', async () =>
        /"msg":"incoming request"[^\n]*\/v1\/auth\/token|\/v1\/auth\/token[^\n]*"msg":"incoming request"/.test(stdout)
          ? true
          : undefined,
      );
      child.kill('SIGTERM');
      assert.equal(await exited, 0, stdout);
      assert.match(await outcome, /ECONNRESET|socket hang up/);
      assert.match(stdout, /drain timeout: cutting the requests still in flight/);
    } finally {
      agent.destroy();
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    }
  });
});
