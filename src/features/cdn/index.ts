import type { Deps } from '../../deps.ts';

export { cdnRoutes } from './cdn.routes.ts';

/** `tessera edge`. The edge's modules (sharp, lightningcss, esbuild, GeoIP) load only here, not with the API. */
export async function runEdge(deps: Deps): Promise<void> {
  const { runEdge: run } = await import('./edge/run.ts');
  return run(deps);
}
