import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * EDGE_CPU_AFFINITY=auto: worker i of `EDGE_WORKERS=n` runs on one CPU, the i-th (mod their count) of
 * the CPUs this process may use — what nginx's `worker_cpu_affinity auto` does. Without it the kernel
 * sometimes kept both workers of a 2-core machine on one core while the other idled (decision 0034).
 * Linux only (util-linux `taskset`, every thread of the worker: pinning only the event-loop thread left
 * 13 % of the machine idle and served 0.63× nginx, decision 0040); elsewhere, or when it fails, the
 * worker runs unpinned and says so.
 */

/** CPU ids of a Linux CPU list such as `0-3,8,10-11`; [] for anything else. */
export function parseCpuList(list: string): number[] {
  const out: number[] = [];
  for (const part of list.trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) return [];
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from || to - from > 4096) return [];
    for (let c = from; c <= to; c++) out.push(c);
  }
  return out;
}

/** The CPU worker `index` is pinned to: the index-th of the allowed CPUs, wrapping around. */
export function cpuForWorker(allowed: readonly number[], index: number): number | undefined {
  return allowed.length === 0 ? undefined : allowed[index % allowed.length];
}

/** Pins this process (all its threads) to its worker's CPU; returns the CPU, or a reason it could not. */
export function pinThisWorker(index: number): { cpu: number } | { error: string } {
  let allowed: number[];
  try {
    const status = readFileSync('/proc/self/status', 'utf8');
    allowed = parseCpuList(/^Cpus_allowed_list:\s*(\S+)/m.exec(status)?.[1] ?? '');
  } catch {
    return { error: 'no /proc/self/status (not Linux)' };
  }
  const cpu = cpuForWorker(allowed, index);
  if (cpu === undefined) return { error: 'could not read the allowed CPUs' };
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(process.pid)], { stdio: 'ignore' });
  } catch (error) {
    return { error: `taskset failed: ${(error as Error).message}` };
  }
  return { cpu };
}
