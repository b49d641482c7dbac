import { spawn } from 'node:child_process';
import { detectIsolation, sandboxPrefix, type Enforcement, type SandboxPolicy } from '../policy/sandbox-policy.js';

/** One command to run under the sandbox policy. */
export interface CommandRun {
  command: string;
  cwd: string;
  timeoutMs: number;
  policy: SandboxPolicy;
  signal: AbortSignal;
  /** Called with each chunk of output as it arrives (for live progress). */
  onOutput?: (stream: 'stdout' | 'stderr', text: string) => void;
  /** Return as soon as the command has run this long, leaving it running in the background (its group is still killed by the hard timeout). */
  detachAfterMs?: number;
}

/** Captured output of one stream: the bytes kept and how many were dropped past the capture cap. */
export interface CapturedStream {
  bytes: Buffer;
  dropped: number;
}

/** How a command ended and what the sandbox enforced. */
export interface CommandOutcome {
  shell: string;
  pid: number | undefined;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: CapturedStream;
  stderr: CapturedStream;
  /** `soft`: it stopped after SIGTERM; `hard`: it needed SIGKILL. */
  timedOut: 'soft' | 'hard' | null;
  cancelled: boolean;
  background: boolean;
  durationMs: number;
  enforcement: { network: Enforcement; processes: Enforcement; memory: Enforcement };
}

const killGroup = (pid: number | undefined, signal: NodeJS.Signals): void => {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
};

const background = new Set<number>();
process.once('exit', () => {
  for (const pid of background) killGroup(pid, 'SIGKILL');
});

const capture = (limit: number) => {
  const chunks: Buffer[] = [];
  let kept = 0;
  let dropped = 0;
  return {
    add(chunk: Buffer) {
      const room = limit - kept;
      if (room <= 0) dropped += chunk.length;
      else if (chunk.length <= room) {
        chunks.push(chunk);
        kept += chunk.length;
      } else {
        chunks.push(chunk.subarray(0, room));
        kept += room;
        dropped += chunk.length - room;
      }
    },
    result: (): CapturedStream => ({ bytes: Buffer.concat(chunks), dropped }),
  };
};

/**
 * Run `command` with `<shell> -lc` (or `-c` when the policy turns login shells off) in its own process group under the sandbox policy: the environment cleared to
 * the allow-list, prlimit process and memory limits and network isolation where this machine supports them, a soft
 * timeout (SIGTERM to the group) and then a hard one (SIGKILL to the group), and each stream captured up to the
 * policy's cap. When the command exits, whatever it left running in its group is killed. Never rejects.
 */
export const runCommand = (run: CommandRun): Promise<CommandOutcome> =>
  new Promise((resolve) => {
    const support = detectIsolation();
    const { prefix, ...enforcement } = sandboxPrefix(run.policy, support);
    const env: NodeJS.ProcessEnv = {};
    for (const name of run.policy.envAllowList) if (process.env[name] !== undefined) env[name] = process.env[name];
    const argv = [...prefix, support.shell, run.policy.loginShell ? '-lc' : '-c', run.command];
    const started = Date.now();
    const stdout = capture(run.policy.maxCaptureBytes);
    const stderr = capture(run.policy.maxCaptureBytes);
    let timedOut: CommandOutcome['timedOut'] = null;
    let cancelled = false;
    let settled = false;
    const child = spawn(argv[0]!, argv.slice(1), { cwd: run.cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const pid = child.pid;
    const finish = (exitCode: number | null, signal: NodeJS.Signals | null, detached = false) => {
      if (settled) return;
      settled = true;
      if (!detached) {
        clearTimeout(soft);
        clearTimeout(hard);
        run.signal.removeEventListener('abort', onAbort);
      }
      resolve({ shell: support.shell, pid, exitCode, signal, stdout: stdout.result(), stderr: stderr.result(), timedOut, cancelled, background: detached, durationMs: Date.now() - started, enforcement });
    };
    const soft = setTimeout(() => {
      timedOut = 'soft';
      killGroup(pid, 'SIGTERM');
    }, run.timeoutMs);
    const hard = setTimeout(() => {
      timedOut = 'hard';
      killGroup(pid, 'SIGKILL');
    }, run.timeoutMs + run.policy.killGraceMs);
    const onAbort = () => {
      cancelled = true;
      killGroup(pid, 'SIGKILL');
    };
    run.signal.addEventListener('abort', onAbort, { once: true });
    if (run.signal.aborted) onAbort();
    child.stdout.on('data', (chunk: Buffer) => {
      stdout.add(chunk);
      run.onOutput?.('stdout', chunk.toString('utf8'));
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr.add(chunk);
      run.onOutput?.('stderr', chunk.toString('utf8'));
    });
    child.on('error', (error) => {
      stderr.add(Buffer.from(`failed to start ${argv[0]}: ${error.message}\n`));
      finish(127, null);
    });
    // The leader exited: kill what it left behind in its group so the pipes close and nothing outlives the call.
    child.on('exit', () => killGroup(pid, 'SIGKILL'));
    child.on('close', (code, signal) => {
      if (pid !== undefined) background.delete(pid);
      finish(code, signal);
    });
    if (run.detachAfterMs !== undefined && pid !== undefined) {
      background.add(pid);
      setTimeout(() => {
        // Left running: nothing of it may keep this process alive; the 'exit' hook kills the group.
        soft.unref();
        hard.unref();
        child.unref();
        (child.stdout as unknown as { unref?: () => void }).unref?.();
        (child.stderr as unknown as { unref?: () => void }).unref?.();
        finish(null, null, true);
      }, run.detachAfterMs).unref();
    }
  });
