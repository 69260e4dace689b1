import cluster from 'node:cluster';
import type { Deps } from '../deps.ts';
import { deliveringAssetOrigin } from '../features/cdn/index.ts';
import { pinThisWorker } from './affinity.ts';
import { Edge } from './edge.ts';

/**
 * `tessera edge`: one edge process, or with EDGE_WORKERS=n a primary that keeps n edge workers
 * (each with its own cache and control port) sharing EDGE_PORT; with EDGE_CPU_AFFINITY=auto each
 * worker pins itself to one CPU before it listens.
 */
export async function runEdge(deps: Deps): Promise<void> {
  const workers = deps.config.edge.workers;
  if (workers > 1 && cluster.isPrimary) {
    // Each worker keeps its index across restarts (its control port is EDGE_CONTROL_PORT + index).
    const indexOf = new Map<number, number>();
    const fork = (index: number) => indexOf.set(cluster.fork({ EDGE_WORKER_INDEX: String(index) }).id, index);
    for (let i = 0; i < workers; i++) fork(i);
    // Whoever started us (tests, supervisors) hears when each worker listens.
    cluster.on('message', (_worker, message: { type?: string }) => {
      if (message?.type === 'edge-ready' && process.send) process.send(message);
    });
    cluster.on('exit', (worker, code, signal) => {
      if (stopping) return;
      deps.log.warn({ pid: worker.process.pid, code, signal }, 'edge worker exited; starting another');
      fork(indexOf.get(worker.id) ?? 0);
      indexOf.delete(worker.id);
    });
    let stopping = false;
    const stop = () => {
      stopping = true;
      for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGTERM');
      setTimeout(() => process.exit(0), 5000).unref();
      cluster.on('exit', () => {
        if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      });
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return;
  }
  if (deps.config.edge.cpuAffinity === 'auto' && cluster.isWorker) {
    const index = Number(process.env.EDGE_WORKER_INDEX ?? 0);
    const pinned = pinThisWorker(index);
    if ('cpu' in pinned) deps.log.info({ worker: index, cpu: pinned.cpu }, 'edge worker pinned to a CPU');
    else deps.log.warn({ worker: index, reason: pinned.error }, 'EDGE_CPU_AFFINITY=auto: worker left unpinned');
  }
  const edge = new Edge({
    config: deps.config.edge,
    db: deps.db,
    keys: deps.keys,
    log: deps.log,
    allowPrivateTargets: deps.config.allowPrivateTargets,
    assetOrigin: deliveringAssetOrigin(deps),
    metrics:
      deps.metrics && deps.config.metricsToken !== undefined
        ? { metrics: deps.metrics, token: deps.config.metricsToken }
        : undefined,
  });
  const { port, controlUrl } = await edge.start();
  deps.log.info({ port, controlUrl, edgeId: edge.id, region: deps.config.edge.region }, 'edge listening');
  if (process.send) process.send({ type: 'edge-ready', port, controlUrl, id: edge.id });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(1), 10_000).unref();
    await edge.stop();
    await deps.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}
