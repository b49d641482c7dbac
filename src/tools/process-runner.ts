import { spawn } from 'node:child_process';
import type { SandboxPolicy } from '../policy/sandbox-policy.js';
import type { Launch } from './command-launch.js';
import { callMarkerVariable, childrenOf, descendantsOf, processesMarked, processesOfSession, signalEach } from './process-tree.js';

/** One command to run under the sandbox policy, as `prepareLaunch` laid it out. */
export interface CommandRun {
  launch: Launch;
  cwd: string;
  timeoutMs: number;
  policy: SandboxPolicy;
  signal: AbortSignal;
  /** The session the command belongs to: its background commands are stopped when the session ends. */
  sessionId?: string;
  /** Written to the command's stdin, which is then closed (a hook's JSON); without it stdin is `/dev/null`. */
  stdin?: string;
  /** Called with each chunk of output as it arrives (for live progress). */
  onOutput?: (stream: 'stdout' | 'stderr', text: string) => void;
  /** Return as soon as the command has run this long, leaving it running in the background (its group is still killed by the hard timeout). */
  detachAfterMs?: number;
  /**
   * Called once when a command left running in the background ends after its call returned, with how: by itself,
   * at its timeout, or stopped by rein (`stoppedBy`: its session's end, an interruption, its call's cancellation,
   * rein's exit). A promise it returns (the end being recorded) is waited for by `endBackgroundCommands`.
   */
  onBackgroundEnd?: (outcome: CommandOutcome, how: 'exited' | 'timeout' | 'stopped', stoppedBy?: BackgroundStop) => void | Promise<unknown>;
}

/** What stopped a background command that was still running: its session's end, an interruption, its call's cancellation, rein's exit. */
export type BackgroundStop = 'session-end' | 'interrupted' | 'cancelled' | 'paused' | 'exit';

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
  enforcement: Launch['enforcement'];
}

const killGroup = (pid: number | undefined, signal: NodeJS.Signals): void => {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
};

/**
 * Signal everything a command started: its process group, every descendant (a `setsid` child leaves the group but
 * not the tree) and, outside bubblewrap, every process carrying the call's marker (an orphan that was re-parented
 * away). Under bubblewrap SIGTERM spares the sandbox's own processes (the command's exit then ends them, and with
 * them the pid namespace), and SIGKILL to them kills the whole namespace. Under the fallback's watchdog (`control`,
 * the socket to it) nothing is re-parented away from it, and SIGKILL closes that socket instead of killing it: it
 * then kills everything below it, including what forks while it does, and exits.
 */
const signalCommand = (pid: number | undefined, launch: Launch, marker: string | undefined, signal: NodeJS.Signals, leaderGone = false, control?: { destroy(): void }): void => {
  if (pid === undefined) return;
  const sandboxed = launch.sandbox.enforcement === 'bubblewrap';
  // Once the leader is gone its pid may be reused: its orphans are found by group and marker only.
  const tree = leaderGone ? [] : descendantsOf(pid);
  if (sandboxed && signal === 'SIGTERM') {
    const own = new Set(childrenOf(pid));
    signalEach(tree.filter((candidate) => !own.has(candidate)), signal);
    return;
  }
  if (control && signal === 'SIGKILL' && !leaderGone) control.destroy();
  else killGroup(pid, signal);
  signalEach(tree, signal);
  if (!sandboxed && marker) signalEach(processesMarked(marker), signal);
};

/** Background commands still running, by session; each entry stops its command and knows when it has exited. */
const background = new Map<number, { sessionId: string | undefined; stop: (reason: BackgroundStop) => void; closed: Promise<void> }>();
process.once('exit', () => {
  for (const entry of background.values()) entry.stop('exit');
});

/** Stop every background command of a session (its end or interruption), saying why. */
export const stopBackgroundCommands = (sessionId: string, reason: BackgroundStop): number => {
  let stopped = 0;
  for (const [pid, entry] of background) {
    if (entry.sessionId !== sessionId) continue;
    entry.stop(reason);
    background.delete(pid);
    stopped++;
  }
  return stopped;
};

/**
 * Stop every background command of a session and wait until each has exited (its pipes closed) and its end is
 * recorded, at most `waitMs`: what runs after this can trust that none of them still writes to the workspace.
 */
export const endBackgroundCommands = async (sessionId: string, reason: BackgroundStop = 'session-end', waitMs = 5_000): Promise<number> => {
  const closing = [...background.values()].filter((entry) => entry.sessionId === sessionId).map((entry) => entry.closed);
  const stopped = stopBackgroundCommands(sessionId, reason);
  if (closing.length > 0) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(closing), new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
  }
  return stopped;
};

/** The markers of the commands this process runs now (foreground and background), with how many runs carry each. */
const liveMarkers = new Map<string, number>();

/**
 * The markers of every command this process started, kept until its session's end sweep (`sweepAfterSession`). Past
 * `LAUNCHED_LIMIT` (sessions that never end here, e.g. parked ones) they are dropped and every sweep runs.
 */
const launchedMarkers = new Set<string>();
const LAUNCHED_LIMIT = 10_000;
let launchedOverflowed = false;

/**
 * Whether a session's end must look for stray processes (`killStrayProcesses`): unless the session was created by this
 * process (no earlier process can have left anything; a resume sweeps at its start) and this process never started a
 * command for it, nothing can carry its marker. The sweep reads every process's environment (~5 ms on a busy
 * machine), so a session that ran no command skips it. Forgets the session's markers.
 */
export const sweepAfterSession = (sessionId: string, createdHere: boolean): boolean => {
  const prefix = `${sessionId}:`;
  let launched = false;
  for (const marker of launchedMarkers) {
    if (!marker.startsWith(prefix)) continue;
    launched = true;
    launchedMarkers.delete(marker);
  }
  return launched || launchedOverflowed || !createdHere;
};

const markLive = (marker: string | undefined): (() => void) => {
  if (!marker) return () => undefined;
  if (launchedMarkers.size >= LAUNCHED_LIMIT) {
    launchedMarkers.clear();
    launchedOverflowed = true;
  }
  if (!launchedOverflowed) launchedMarkers.add(marker);
  liveMarkers.set(marker, (liveMarkers.get(marker) ?? 0) + 1);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const left = (liveMarkers.get(marker) ?? 1) - 1;
    if (left > 0) liveMarkers.set(marker, left);
    else liveMarkers.delete(marker);
  };
};

/**
 * Kill every process that carries a marker of `sessionId` and is no command this process runs: what an earlier
 * process of the session left behind (a background command, or any command of a process killed with SIGKILL, which
 * outside bubblewrap nothing ties to rein's life). Only the process that holds the session may call it. Resolves with
 * the pids it killed once none of them is alive (or after `waitMs`, with those still alive reported by the caller's
 * next look).
 */
export const killStrayProcesses = async (sessionId: string, waitMs = 2_000): Promise<number[]> => {
  const strays = () => processesOfSession(sessionId).filter(({ marker }) => !liveMarkers.has(marker)).map(({ pid }) => pid);
  const found = strays();
  if (found.length === 0) return [];
  const killed = new Set(found);
  signalEach(found, 'SIGKILL');
  const deadline = Date.now() + waitMs;
  for (let left = strays(); left.length > 0 && Date.now() < deadline; left = strays()) {
    // A process forked while the first signals went out: killed too.
    for (const pid of left) killed.add(pid);
    signalEach(left, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return [...killed].sort((a, b) => a - b);
};

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
 * Run a launched command (see `prepareLaunch`) in its own process group: a soft timeout (SIGTERM to everything it
 * started) and then a hard one (SIGKILL), each stream captured up to the policy's cap. When the command exits,
 * whatever it left running is killed — under bubblewrap the pid namespace ends with it. A background command
 * (`detachAfterMs`) returns early and runs until its hard timeout, its session's end or rein's exit. Never rejects.
 */
export const runCommand = (run: CommandRun): Promise<CommandOutcome> =>
  new Promise((resolve) => {
    const { launch } = run;
    const marker = launch.env[callMarkerVariable];
    const argv = launch.argv;
    const started = Date.now();
    const stdout = capture(run.policy.maxCaptureBytes);
    const stderr = capture(run.policy.maxCaptureBytes);
    let timedOut: CommandOutcome['timedOut'] = null;
    let cancelled = false;
    let settled = false;
    let stoppedBy: BackgroundStop | undefined;
    // A background command's end being recorded (`onBackgroundEnd`), which `closed` waits for.
    let endRecorded: Promise<unknown> = Promise.resolve();
    const released = markLive(marker);
    // Under the watchdog, fd 3 is its end of a socket whose other end only this process holds (see `commandWatchdog`).
    const input = run.stdin === undefined ? 'ignore' : 'pipe';
    // Under the watchdog fd 3 is its control socket; under bubblewrap it may carry the seccomp program (`--seccomp 3`).
    const child = spawn(argv[0]!, argv.slice(1), { cwd: run.cwd, env: launch.env, detached: true, stdio: launch.watchdog || launch.seccomp ? [input, 'pipe', 'pipe', 'pipe'] : [input, 'pipe', 'pipe'] });
    const pid = child.pid;
    if (launch.seccomp && !launch.watchdog) {
      const program = child.stdio[3] as (NodeJS.WritableStream & { on(event: 'error', listener: () => void): unknown }) | null;
      program?.on('error', () => undefined);
      program?.end(launch.seccomp);
    }
    if (run.stdin !== undefined && child.stdin) {
      // A command that exits without reading its input must not crash rein with EPIPE.
      child.stdin.on('error', () => undefined);
      child.stdin.end(run.stdin);
    }
    const control = launch.watchdog ? (child.stdio[3] as (NodeJS.ReadableStream & { destroy(): void; unref?(): void }) | null) ?? undefined : undefined;
    control?.on('error', () => undefined);
    // The watchdog's first line is the command's own pid: the one a background result names (`kill <pid>` stops it).
    let commandPid: number | undefined;
    let said = '';
    control?.on('data', (chunk: Buffer) => {
      said += chunk.toString('latin1');
      if (commandPid === undefined && said.includes('\n')) commandPid = Number.parseInt(said, 10) || undefined;
    });
    let watchdogKill: NodeJS.Timeout | undefined;
    const stop = (signal: NodeJS.Signals, leaderGone = false) => {
      signalCommand(pid, launch, marker, signal, leaderGone, control);
      // The watchdog exits once nothing is left below it; should it not, it is killed like any process.
      if (control && signal === 'SIGKILL' && !leaderGone && watchdogKill === undefined) watchdogKill = setTimeout(() => killGroup(pid, 'SIGKILL'), run.policy.killGraceMs).unref();
    };
    const outcomeOf = (exitCode: number | null, signal: NodeJS.Signals | null, detached: boolean): CommandOutcome => ({ shell: launch.shell, pid: commandPid ?? pid, exitCode, signal, stdout: stdout.result(), stderr: stderr.result(), timedOut, cancelled, background: detached, durationMs: Date.now() - started, enforcement: launch.enforcement });
    const finish = (exitCode: number | null, signal: NodeJS.Signals | null, detached = false) => {
      if (settled) return;
      settled = true;
      if (!detached) {
        clearTimeout(soft);
        clearTimeout(hard);
        clearTimeout(watchdogKill);
        run.signal.removeEventListener('abort', onAbort);
      }
      resolve(outcomeOf(exitCode, signal, detached));
    };
    const soft = setTimeout(() => {
      timedOut = 'soft';
      stop('SIGTERM');
    }, run.timeoutMs);
    const hard = setTimeout(() => {
      timedOut = 'hard';
      stop('SIGKILL');
    }, run.timeoutMs + run.policy.killGraceMs);
    const onAbort = () => {
      if (settled && child.exitCode === null && child.signalCode === null) stoppedBy ??= 'cancelled';
      cancelled = true;
      stop('SIGKILL');
    };
    run.signal.addEventListener('abort', onAbort, { once: true });
    if (run.signal.aborted) onAbort();
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout.add(chunk);
      run.onOutput?.('stdout', chunk.toString('utf8'));
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr.add(chunk);
      run.onOutput?.('stderr', chunk.toString('utf8'));
    });
    child.on('error', (error) => {
      stderr.add(Buffer.from(`failed to start ${argv[0]}: ${error.message}\n`));
      released();
      finish(127, null);
    });
    // The leader exited: kill what it left behind so the pipes close and nothing outlives the call.
    child.on('exit', () => stop('SIGKILL', true));
    child.on('close', (code, signal) => {
      if (pid !== undefined) background.delete(pid);
      released();
      void launch.proxy?.close();
      if (!settled) return finish(code, signal);
      // A background command ended after its call returned (by itself, at its timeout, or with its session): its
      // timers must not signal a group id that may be reused.
      clearTimeout(soft);
      clearTimeout(hard);
      clearTimeout(watchdogKill);
      run.signal.removeEventListener('abort', onAbort);
      endRecorded = Promise.resolve(run.onBackgroundEnd?.(outcomeOf(code, signal, true), stoppedBy ? 'stopped' : timedOut ? 'timeout' : 'exited', stoppedBy)).catch(() => undefined);
    });
    if (run.detachAfterMs !== undefined && pid !== undefined) {
      // Registered after the handler above: by then the end is being recorded.
      const closed = new Promise<void>((resolve) => child.once('close', () => void endRecorded.then(() => resolve())));
      background.set(pid, {
        sessionId: run.sessionId,
        stop: (reason) => {
          // Only what rein really stopped is "stopped": a command that had already exited ended by itself.
          if (child.exitCode === null && child.signalCode === null && timedOut === null) stoppedBy ??= reason;
          stop('SIGKILL');
        },
        closed,
      });
      setTimeout(() => {
        // Left running: nothing of it may keep this process alive; the 'exit' hook and the session's end stop it.
        soft.unref();
        hard.unref();
        child.unref();
        (child.stdout as unknown as { unref?: () => void }).unref?.();
        (child.stderr as unknown as { unref?: () => void }).unref?.();
        control?.unref?.();
        finish(null, null, true);
      }, run.detachAfterMs).unref();
    }
  });
