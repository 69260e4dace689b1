// Issue 28, item 1: process roles. `tessera serve --no-workers` answers the API and runs no job;
// `tessera worker --concurrency N` runs the jobs with no API listener (health and metrics on
// TESSERA_METRICS_PORT); both on one database. SIGTERM ends a worker with exit 0. Bad flags exit 2.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine } from './helpers/context.ts';
import { createTestOrg } from './helpers/factories.ts';
import { jpeg, uploadAsset } from './helpers/assets.ts';
import { freePort } from './helpers/net.ts';
import { login } from './helpers/auth.ts';
import { spawnTessera, tesseraEnv } from './helpers/tessera-process.ts';
import { waitForValue } from './helpers/wait.ts';

const TOKEN = 'roles-metrics-token-0123456789';

forEachEngine('process roles', (ctx) => {
  it('refuses unknown flags and a bad --concurrency with exit 2 and the usage', async () => {
    for (const args of [
      ['worker', '--concurrency', '0'],
      ['worker', '--concurrency', 'many'],
      ['worker', '--bogus'],
      ['serve', '--bogus'],
    ]) {
      const child = spawnTessera(args, tesseraEnv(ctx(), { PORT: '0' }));
      assert.equal(await child.exited, 2, `${args.join(' ')}:\n${child.output()}`);
      assert.match(child.output(), /Usage: tessera/);
      if (args[1] === '--concurrency')
        assert.match(child.output(), /--concurrency must be a whole number from 1 to 256/);
    }
  });

  it('serve --no-workers runs no job; a worker process runs them; the API process serves the result', {
    timeout: 240_000,
  }, async () => {
    const org = await createTestOrg(ctx());
    const asset = await uploadAsset(ctx(), org, await jpeg(640, 480));
    const pendingJobs = async () =>
      Number(
        (
          await ctx()
            .deps.db.selectFrom('jobs')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('org_id', '=', org.orgId)
            .where('status', 'in', ['pending', 'running'])
            // Due now (the upload's expiry check waits a day and is not this test's).
            .where('run_at', '<=', Date.now() + 60_000)
            .executeTakeFirstOrThrow()
        ).n,
      );
    assert.ok((await pendingJobs()) > 0, 'the upload queued its renditions');

    const apiPort = await freePort();
    const api = spawnTessera(['serve', '--no-workers'], tesseraEnv(ctx(), { PORT: String(apiPort) }));
    const metricsPort = await freePort();
    let worker: ReturnType<typeof spawnTessera> | undefined;
    try {
      await api.waitFor(/Server listening|"msg":"[^"]*listening/);
      const base = `http://127.0.0.1:${apiPort}`;
      const headers = { accesstoken: (await login(ctx(), org.admin)).session.accessToken };
      assert.equal((await fetch(`${base}/v1/user`, { headers })).status, 200, 'the API answers');
      // Three seconds of an API-only process: the jobs stay where they were.
      await new Promise((r) => setTimeout(r, 3000));
      assert.ok((await pendingJobs()) > 0, 'serve --no-workers ran a job');

      worker = spawnTessera(
        ['worker', '--concurrency', '2'],
        tesseraEnv(ctx(), { TESSERA_METRICS_PORT: String(metricsPort), TESSERA_METRICS_TOKEN: TOKEN }),
      );
      const started = await worker.waitFor(/"concurrency":(\d+)[^\n]*"msg":"worker started"/);
      assert.equal(started[1], '2');
      await waitForValue('the worker to finish the jobs', async () =>
        (await pendingJobs()) === 0 ? true : undefined,
      ).catch(async (error: Error) => {
        const jobs = await ctx()
          .deps.db.selectFrom('jobs')
          .select(['type', 'status', 'attempts', 'last_error', 'run_at'])
          .where('org_id', '=', org.orgId)
          .execute();
        throw new Error(`${error.message}\n${JSON.stringify(jobs)}\n${worker?.output().slice(-3000)}`);
      });

      // The API process serves what the worker made.
      const detail = (await (await fetch(`${base}/v1/asset/${asset.objectId}`, { headers })).json()) as Record<
        string,
        unknown
      >;
      assert.ok(
        JSON.stringify(detail).includes('thumbnail') || JSON.stringify(detail).includes('rendition'),
        JSON.stringify(detail).slice(0, 400),
      );

      // The worker has no API listener, only its health and metrics port.
      const wbase = `http://127.0.0.1:${metricsPort}`;
      assert.equal((await fetch(`${wbase}/healthz`)).status, 200);
      assert.equal((await fetch(`${wbase}/readyz`)).status, 200);
      assert.equal((await fetch(`${wbase}/v1/user`, { headers })).status, 404);
      assert.equal((await fetch(`${wbase}/metrics`)).status, 401);
      const scrape = await fetch(`${wbase}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(scrape.status, 200);
      const text = await scrape.text();
      assert.match(text, /tessera_process_resident_memory_bytes\{role="worker"\}/);
      assert.match(text, /tessera_db_pool_connections\{state="total",role="worker"\}/);

      // SIGTERM: stops claiming, finishes, exits 0.
      worker.child.kill('SIGTERM');
      assert.equal(await worker.exited, 0, worker.output());
      assert.match(worker.output(), /"msg":"worker stopped"/);
    } finally {
      await worker?.stop();
      await api.stop();
    }
  });
});
