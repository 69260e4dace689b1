// The server side of the upload benchmark, in its own process (bench/assets-upload.bench.ts starts
// it with the node flags of `npm start`): a fresh server with assets awaiting ASSETS_BENCH_UPLOAD_MB
// of content each (ASSETS_BENCH_UPLOADS of them). Prints one JSON line with their upload URLs; closes and exits when stdin ends (a normal
// exit, so `--cpu-prof` writes its profile).
import { createAsset } from '../src/features/assets/index.ts';
import { benchOrg } from './assets-fixture.ts';
import { startBenchServer } from './lib.ts';

const MB = Number(process.env.ASSETS_BENCH_UPLOAD_MB ?? 1024);
const server = await startBenchServer({ TESSERA_UPLOAD_PART_SIZE: String(5 * 1024 * 1024 * 1024) });
const { principal, templateId, org } = await benchOrg(server);
// ASSETS_BENCH_UPLOADS assets awaiting the content (one per timed upload).
const urls: string[] = [];
for (let i = 0; i < Number(process.env.ASSETS_BENCH_UPLOADS ?? 1); i++) {
  const created = await createAsset(
    server.deps,
    principal,
    {
      filename: `big-${i}.bin`,
      metadataTemplateId: templateId,
      securityTemplateIds: [org.defaultTemplateId],
      filesize: MB * 1048576,
    },
    'legacy',
  );
  urls.push((created.upload as { url: string }).url.replace(server.deps.config.publicUrl, server.url));
}
process.stdout.write(`${JSON.stringify({ urls })}\n`);
process.stdin.resume();
process.stdin.once('end', async () => {
  await server.close();
  process.exit(0);
});
