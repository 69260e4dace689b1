// A second Tessera instance in its own process, built exactly as `tessera serve` builds one
// (config from the environment, real deps, real app on a loopback port, no test resolver). It
// reports its port over IPC and answers 'generation' with its identity generation, so tests can
// see when a change made by another process reached this one.
import { buildApp } from '../../src/app.ts';
import { parseConfig } from '../../src/config.ts';
import { createDeps } from '../../src/deps.ts';
import { revisionFeed } from '../../src/core/db/revision.ts';

const deps = createDeps(parseConfig());
const app = await buildApp(deps);
await app.listen({ port: 0, host: '127.0.0.1' });
const feed = revisionFeed(deps.db);
process.on('message', (message) => {
  if (message === 'generation') process.send!({ generation: feed.generation });
  if (message === 'close')
    void app
      .close()
      .then(() => deps.close())
      .finally(() => process.exit(0));
});
process.send!({ port: (app.server.address() as { port: number }).port, generation: feed.generation });
