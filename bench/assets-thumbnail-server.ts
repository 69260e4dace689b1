// The server side of bench/assets-thumbnail.bench.ts, in its own process started with the node
// flags of `npm start`: a fresh server (SQLite, local disk) with its job workers on, as `tessera
// serve` runs by default. Prints one JSON line (URL, access token, templates); stops its workers,
// closes and exits when stdin ends.
import { startWorkers } from '../src/workers.ts';
import { benchOrg } from './assets-fixture.ts';
import { startBenchServer } from './lib.ts';

const server = await startBenchServer({ TESSERA_WORKERS: 'true' });
const worker = startWorkers(server.deps);
const { headers, templateId, org } = await benchOrg(server);
process.stdout.write(
  `${JSON.stringify({ url: server.url, token: headers.accesstoken, templateId, securityTemplateId: org.defaultTemplateId, pid: process.pid })}\n`,
);
process.stdin.resume();
process.stdin.once('end', async () => {
  await worker.stop(0);
  await server.close();
  process.exit(0);
});
