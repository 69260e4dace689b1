import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { forEachEngine } from '../../test/helpers/context.ts';
import { spawnEdge } from '../../test/helpers/cdn.ts';
import { cpuForWorker, parseCpuList } from './affinity.ts';

describe('EDGE_CPU_AFFINITY CPU lists', () => {
  it('reads Linux CPU lists and refuses anything else', () => {
    assert.deepEqual(parseCpuList('0-3,8,10-11\n'), [0, 1, 2, 3, 8, 10, 11]);
    assert.deepEqual(parseCpuList('1'), [1]);
    assert.deepEqual(parseCpuList('3-1'), []);
    assert.deepEqual(parseCpuList('a,b'), []);
    assert.deepEqual(parseCpuList(''), []);
  });
  it('gives worker i the i-th allowed CPU, wrapping around', () => {
    assert.equal(cpuForWorker([2, 3], 0), 2);
    assert.equal(cpuForWorker([2, 3], 1), 3);
    assert.equal(cpuForWorker([2, 3], 2), 2);
    assert.equal(cpuForWorker([], 0), undefined);
  });
});

const linuxWithTaskset =
  process.platform === 'linux' && spawnSync('sh', ['-c', 'command -v taskset']).status === 0
    ? true
    : 'needs Linux and taskset (util-linux)';

/** The CPUs a process may run on (its main thread), from /proc. */
function allowedCpus(pid: number): number[] {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return parseCpuList(/^Cpus_allowed_list:\s*(\S+)/m.exec(status)![1]!);
}

/** Pids whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      if (ppid === pid) out.push(Number(name));
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

forEachEngine('EDGE_CPU_AFFINITY with EDGE_WORKERS=2', (ctx) => {
  const started: { child: import('node:child_process').ChildProcess }[] = [];
  after(async () => {
    for (const { child } of started) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('auto pins each worker (every thread) to its own CPU before it listens', {
    skip: linuxWithTaskset === true ? false : linuxWithTaskset,
  }, async () => {
    const edge = await spawnEdge(ctx(), 'pinned', { EDGE_WORKERS: '2', EDGE_CPU_AFFINITY: 'auto' }, 2);
    started.push(edge);
    const allowed = allowedCpus(edge.child.pid!);
    const workers = childrenOf(edge.child.pid!);
    assert.equal(workers.length, 2);
    const pinned = workers.map((pid) => {
      const threads = readdirSync(`/proc/${pid}/task`).map((tid) => allowedCpus(Number(tid)));
      for (const cpus of threads) assert.deepEqual(cpus, threads[0], `every thread of worker ${pid} on the same CPUs`);
      assert.equal(threads[0]!.length, 1, `worker ${pid} runs on one CPU, not ${threads[0]}`);
      return threads[0]![0]!;
    });
    assert.deepEqual(pinned.sort(), [cpuForWorker(allowed, 0)!, cpuForWorker(allowed, 1)!].sort());
  });

  it('off (the default) leaves the workers on every CPU the edge may use', {
    skip: linuxWithTaskset === true ? false : linuxWithTaskset,
  }, async () => {
    const edge = await spawnEdge(ctx(), 'free', { EDGE_WORKERS: '2' }, 2);
    started.push(edge);
    const allowed = allowedCpus(edge.child.pid!);
    const workers = childrenOf(edge.child.pid!);
    assert.equal(workers.length, 2);
    for (const pid of workers) assert.deepEqual(allowedCpus(pid), allowed);
  });
});
