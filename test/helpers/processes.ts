import type { ChildProcess } from 'node:child_process';

/**
 * Stops a child process and returns once it is gone, whatever state it is in: already exited,
 * deaf to `ask` (by default SIGTERM), or slow to stop (killed after `graceMs`).
 */
export async function stopProcess(
  child: ChildProcess,
  ask: () => void = () => child.kill('SIGTERM'),
  graceMs = 10_000,
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  ask();
  const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(kill);
}
