import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { forEachEngine, TEST_SECRET, type TestContext } from '../../../../test/helpers/context.ts';
import { startReceiver } from '../../../../test/helpers/receiver.ts';
import { freePort } from '../../../../test/helpers/net.ts';
import { waitFor } from '../../../../test/helpers/wait.ts';
import { messageIdFor } from './message-store.ts';

const ADMIN = { username: 'crash-admin', password: 'Crash-Test-Password-1' };
const KILLS = 5;
const MAIN = fileURLToPath(new URL('../../../main.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Runs the real server (`node src/main.ts serve`) as a child process and SIGKILLs it repeatedly
// while users are created over HTTP. Every committed user.created event must reach the receiver
// at least once with one stable webhook-id; no event of an uncommitted change may arrive.
/** `tessera serve` on the test's database in its own process, started (bounded wait) and SIGKILLed on demand. */
async function killableServer(c: TestContext) {
  const database = c.database;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: database.kind === 'postgres' ? database.url : `sqlite:${database.file}`,
    TESSERA_DATA_DIR: c.dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    TESSERA_SECRET_KEY: TEST_SECRET,
    TESSERA_ALLOW_PRIVATE_TARGETS: 'true',
    TESSERA_LOG_LEVEL: 'error',
    TESSERA_ADMIN_USERNAME: ADMIN.username,
    TESSERA_ADMIN_PASSWORD: ADMIN.password,
    TESSERA_WEBHOOK_LEASE_MS: '2000',
  };
  let running: ChildProcess | undefined;
  const start = async () => {
    running = spawn(process.execPath, [MAIN, 'serve'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
    // Generous: a loaded CI machine can take many seconds to start a process (no timing is asserted).
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
      try {
        if ((await fetch(`${base}/healthz`)).ok) return;
      } catch {
        /* not up yet */
      }
      await sleep(25);
    }
    throw new Error('server did not start');
  };
  const kill = async () => {
    const exited = new Promise((r) => running!.once('exit', r));
    running!.kill('SIGKILL');
    await exited;
  };
  return { base, start, kill, child: () => running };
}

forEachEngine('webhook delivery survives SIGKILL', (ctx) => {
  it('a SIGKILL between a send and its outcome commit: the re-send carries the same webhook-id, and the message has one row (decision 0035)', {
    timeout: 180_000,
  }, async () => {
    const { base, start, kill, child } = await killableServer(ctx());
    // The first delivery of the user.created event is received, and the server is killed before it is
    // answered: the send happened, its outcome was never committed.
    let killed: Promise<void> | undefined;
    const rx = await startReceiver(async (req, res) => {
      if (JSON.parse(req.body).eventType !== 'user.created') return res.end();
      if (!killed) {
        killed = kill();
        await killed;
      }
      res.end();
    });
    try {
      await start();
      const login = await fetch(`${base}/v1/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(ADMIN),
      });
      assert.equal(login.status, 200, await login.clone().text());
      const token = ((await login.json()) as { session: { accessToken: string } }).session.accessToken;
      const headers = { 'content-type': 'application/json', accesstoken: token };
      const me = (await (await fetch(`${base}/v1/user`, { headers })).json()) as { roleId: string; groups: string[] };
      const created = await fetch(`${base}/webhooks/endpoint`, {
        method: 'POST',
        headers,
        body: JSON.stringify([{ description: 'Kill receiver', url: rx.url, eventTypes: ['user.created'] }]),
      });
      assert.equal(created.status, 200, await created.clone().text());
      const endpointId = ((await created.json()) as { id: string }).id;
      const username = `killed-${Date.now().toString(36)}`;
      const user = await fetch(`${base}/v1/user`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          firstName: 'Kill',
          lastName: 'Test',
          friendlyName: username,
          email: `${username}@example.test`,
          username,
          password: 'long enough password',
          accountType: 'local',
          userRoleId: me.roleId,
          groups: me.groups,
        }),
      });
      assert.equal(user.status, 200, await user.clone().text());
      await waitFor(() => killed !== undefined, 'the first delivery');
      await killed;
      await start();
      const db = ctx().deps.db;
      const message = () =>
        db.selectFrom('webhook_messages').selectAll().where('endpoint_id', '=', endpointId).execute();
      // Re-sent once the dead process's lease ran out, and recorded.
      await waitFor(
        async () => (await message()).some((m) => m.status === 'succeeded'),
        'the re-send to be recorded',
        120_000,
      );
      const ids = rx.received
        .filter((r) => JSON.parse(r.body).eventType === 'user.created')
        .map((r) => String(r.headers['webhook-id']));
      assert.ok(ids.length >= 2, `deliveries: ${ids.length}`);
      assert.equal(new Set(ids).size, 1, 'one webhook-id');
      const rows = await message();
      assert.equal(rows.length, 1, 'one message row');
      assert.equal(rows[0]!.id, ids[0]);
      const event = await db
        .selectFrom('events')
        .select(['id', 'created_at'])
        .where('id', '=', rows[0]!.event_id)
        .executeTakeFirstOrThrow();
      assert.equal(ids[0], messageIdFor(event.id, Number(event.created_at), endpointId));
    } finally {
      const running = child();
      if (running && running.exitCode === null && running.signalCode === null) await kill();
      await rx.close();
    }
  });

  it('delivers every committed event at least once, with a stable webhook-id, and nothing uncommitted', {
    timeout: 240_000,
  }, async (t) => {
    const { base, start, kill, child } = await killableServer(ctx());

    const deliveries: { webhookId: string; eventId: string; userId: string }[] = [];
    const rx = await startReceiver((req, res) => {
      const body = JSON.parse(req.body);
      if (body.eventType === 'user.created')
        deliveries.push({ webhookId: String(req.headers['webhook-id']), eventId: body.event.id, userId: body.user.id });
      res.end();
    });
    try {
      await start();
      const login = await fetch(`${base}/v1/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(ADMIN),
      });
      assert.equal(login.status, 200, await login.clone().text());
      const token = ((await login.json()) as { session: { accessToken: string } }).session.accessToken;
      const headers = { 'content-type': 'application/json', accesstoken: token };
      const me = (await (await fetch(`${base}/v1/user`, { headers })).json()) as {
        userId: string;
        roleId: string;
        groups: string[];
      };
      const created = await fetch(`${base}/webhooks/endpoint`, {
        method: 'POST',
        headers,
        body: JSON.stringify([{ description: 'Crash receiver', url: rx.url, eventTypes: ['user.created'] }]),
      });
      assert.equal(created.status, 200, await created.clone().text());
      const groups = me.groups as string[];

      let producing = true;
      let sent = 0;
      let acknowledged = 0;
      const producer = async (lane: number) => {
        for (let i = 0; producing; i++) {
          const username = `crash-${lane}-${i}-${Date.now().toString(36)}`;
          sent += 1;
          try {
            const res = await fetch(`${base}/v1/user`, {
              method: 'POST',
              headers,
              body: JSON.stringify({
                firstName: 'Crash',
                lastName: 'Test',
                friendlyName: username,
                email: `${username}@example.test`,
                username,
                password: 'long enough password',
                accountType: 'local',
                userRoleId: me.roleId,
                groups,
              }),
            });
            if (res.status === 200) acknowledged += 1;
            await res.body?.cancel();
          } catch {
            await sleep(20); // server down: the outcome of that request is unknown, which is the point
          }
        }
      };
      const lanes = Array.from({ length: 4 }, (_, lane) => producer(lane));
      for (let k = 0; k < KILLS; k++) {
        await sleep(1200 + Math.floor(Math.random() * 800));
        await kill();
        await start();
      }
      // Keep producing after the last restart until enough writes were acknowledged to mean something
      // (a loaded machine restarts slowly, and few requests land between kills), within 30 s.
      const enough = Date.now() + 30_000;
      do await sleep(1000);
      while (acknowledged <= 20 && Date.now() < enough);
      producing = false;
      await Promise.all(lanes);

      const committed = new Set(
        (
          await ctx()
            .deps.db.selectFrom('users')
            .select('id')
            .where('username', 'like', 'crash-%')
            .where('id', '!=', me.userId)
            .execute()
        ).map((u) => u.id),
      );
      assert.ok(
        committed.size >= acknowledged && acknowledged > 20,
        `acknowledged ${acknowledged}, committed ${committed.size}, sent ${sent}`,
      );
      const deadline = Date.now() + 15_000;
      while ([...committed].some((id) => !deliveries.some((d) => d.userId === id)) && Date.now() < deadline)
        await sleep(100);

      const deliveredUsers = new Set(deliveries.map((d) => d.userId));
      const missing = [...committed].filter((id) => !deliveredUsers.has(id));
      if (missing.length > 0) {
        const events = await ctx()
          .deps.db.selectFrom('events')
          .selectAll()
          .where('body', 'like', `%"id":"${missing[0]}","username%`)
          .execute();
        const messages = events.length
          ? await ctx()
              .deps.db.selectFrom('webhook_messages')
              .selectAll()
              .where(
                'event_id',
                'in',
                events.map((e) => e.id),
              )
              .execute()
          : [];
        const attempts = messages.length
          ? await ctx()
              .deps.db.selectFrom('webhook_attempts')
              .selectAll()
              .where(
                'message_id',
                'in',
                messages.map((m) => m.id),
              )
              .execute()
          : [];
        console.log(
          JSON.stringify(
            { now: Date.now(), events: events.map((e) => ({ ...e, body: e.body.slice(0, 80) })), messages, attempts },
            null,
            1,
          ),
        );
      }
      assert.deepEqual(missing, [], 'every committed event was delivered');
      assert.deepEqual(
        [...deliveredUsers].filter((id) => !committed.has(id)),
        [],
        'no event of an uncommitted change was delivered',
      );
      const idsByEvent = new Map<string, Set<string>>();
      for (const d of deliveries) idsByEvent.set(d.eventId, (idsByEvent.get(d.eventId) ?? new Set()).add(d.webhookId));
      assert.equal(idsByEvent.size, committed.size, 'one event per committed user');
      assert.ok(
        [...idsByEvent.values()].every((ids) => ids.size === 1),
        'retries and redeliveries keep the webhook-id',
      );
      t.diagnostic(
        `${KILLS} SIGKILLs; requests ${sent}, acknowledged ${acknowledged}, committed ${committed.size}, deliveries ${deliveries.length} (duplicates ${deliveries.length - idsByEvent.size})`,
      );
    } finally {
      if (child()?.exitCode === null) await kill();
      await rx.close();
    }
  });
});
