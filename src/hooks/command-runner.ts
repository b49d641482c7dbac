import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

/** How one hook command ended. */
export interface HookCommandOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The process could not be started (`spawn` failed). */
  spawnError?: string;
  /** It was still running when the signal fired (timeout or cancellation) and its group was killed. */
  killed: boolean;
}

/** Bytes kept of each stream; the rest is dropped (a hook's answer is small). */
export const hookOutputCap = 1024 * 1024;

/** Time between SIGTERM and SIGKILL to a hook's process group. */
export const hookKillGraceMs = 1_000;

const shell = existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';

const live = new Set<number>();
process.once('exit', () => {
  for (const pid of live) killGroup(pid, 'SIGKILL');
});

const killGroup = (pid: number | undefined, signal: NodeJS.Signals): void => {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
};

/**
 * Run a hook command the way a user configured it: `<shell> -c <command>` in its own process group, in `cwd`, with
 * the user's environment plus `extraEnv` (command hooks are user configuration and run outside the bash sandbox),
 * `stdin` written and closed. When `signal` fires (the hook's timeout or the call's cancellation) the whole group
 * gets SIGTERM, then SIGKILL after a grace; when the command exits, whatever it left in its group is killed, so no
 * hook process outlives its hook. Never rejects.
 */
export const runHookCommand = (options: { command: string; cwd: string; stdin: string; signal: AbortSignal; extraEnv?: Record<string, string> }): Promise<HookCommandOutcome> =>
  new Promise((resolve) => {
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let sizes = { stdout: 0, stderr: 0 };
    let killed = false;
    let grace: NodeJS.Timeout | undefined;
    let child;
    try {
      child = spawn(shell, ['-c', options.command], { cwd: options.cwd, env: { ...process.env, ...options.extraEnv }, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    } catch (error) {
      resolve({ exitCode: null, signal: null, stdout: '', stderr: '', spawnError: (error as Error).message, killed: false });
      return;
    }
    const pid = child.pid;
    if (pid !== undefined) live.add(pid);
    const keep = (stream: 'stdout' | 'stderr', chunks: Buffer[]) => (chunk: Buffer) => {
      const room = hookOutputCap - sizes[stream];
      if (room <= 0) return;
      chunks.push(room >= chunk.length ? chunk : chunk.subarray(0, room));
      sizes = { ...sizes, [stream]: sizes[stream] + Math.min(room, chunk.length) };
    };
    child.stdout.on('data', keep('stdout', stdout));
    child.stderr.on('data', keep('stderr', stderr));
    // A hook that exits without reading its input must not crash rein with EPIPE.
    child.stdin.on('error', () => {});
    child.stdin.end(options.stdin);
    const onAbort = () => {
      killed = true;
      killGroup(pid, 'SIGTERM');
      grace = setTimeout(() => killGroup(pid, 'SIGKILL'), hookKillGraceMs);
      grace.unref();
    };
    if (options.signal.aborted) onAbort();
    else options.signal.addEventListener('abort', onAbort, { once: true });
    let spawnError: string | undefined;
    child.on('error', (error) => {
      spawnError = error.message;
    });
    // Whatever the command started and left behind in its group goes with it (and releases the pipes it holds).
    child.on('exit', () => killGroup(pid, 'SIGKILL'));
    child.on('close', (exitCode, signal) => {
      options.signal.removeEventListener('abort', onAbort);
      if (grace) clearTimeout(grace);
      if (pid !== undefined) live.delete(pid);
      resolve({ exitCode, signal, stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8'), killed, ...(spawnError ? { spawnError } : {}) });
    });
  });
