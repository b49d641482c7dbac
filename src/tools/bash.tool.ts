import { constants } from 'node:os';
import * as z from 'zod';
import type { CommandExecution } from '../../models/tool.records.js';
import type { ArtifactRef } from '../../stores/blob-store.js';
import { classifyForPermission } from '../policy/shell-subject.js';
import { detectIsolation, networkRefusal, sandboxProfileOf, type Enforcement } from '../policy/sandbox-policy.js';
import { digestOf } from '../../machines/typestate/digest.js';
import type { Launch } from './command-launch.js';
import { processArea } from '../areas/process-loader.js';
import { sandboxEnforcement } from '../policy/sandbox-probe.js';
import type { BackgroundStop, CapturedStream, CommandOutcome } from './process-runner.js';
import { defineTool, toolFailure, type ResumeCheck, type ToolContext, type ToolNote, type ToolResult } from './tool.js';
import { fieldsWithNul, nulByteFailure } from './os-errors.js';
import { processesMarked, signalEach } from './process-tree.js';
import { lazySchema } from '../../models/lazy-schema.js';

export const BashParameters = lazySchema(() => z
  .object({
    command: z.string().min(1),
    timeout_ms: z.number().int().min(1).optional().describe('Default 120000 (clamped by policy)'),
    cwd: z.string().min(1).optional().describe('Default: the workspace root'),
    run_in_background: z.boolean().optional().describe('Leave it running and return; later output is lost unless redirected to a file'),
    description: z.string().max(200).optional().describe('A few words shown when asking for approval'),
  })
  .strict());
export type BashParameters = z.infer<typeof BashParameters>;

/**
 * Resume check for an in-doubt command: rerun it only when the earlier process tree is provably gone. Every process
 * of a call carries its `REIN_CALL` marker (under bubblewrap the namespace's init does too, and the whole namespace
 * dies with it). Survivors are killed; if any still run after that, the command is not rerun, confirmed or not.
 */
export const checkCommandGone = async (intent: Record<string, unknown> | undefined): Promise<ResumeCheck> => {
  const marker = typeof intent?.marker === 'string' ? intent.marker : undefined;
  if (!intent) return { resolution: 'awaiting-confirmation', reason: 'it never started' };
  if (!marker) return { resolution: 'awaiting-confirmation', reason: 'the log holds no process marker for it, so rein cannot prove its processes are gone' };
  const survivors = processesMarked(marker);
  if (survivors.length === 0) return { resolution: 'awaiting-confirmation', reason: 'no process of the earlier run is alive' };
  signalEach(survivors, 'SIGKILL');
  const deadline = Date.now() + 2_000;
  let left = processesMarked(marker);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    left = processesMarked(marker);
  }
  if (left.length > 0) return { resolution: 'failed-in-doubt', reason: `${left.length} process(es) of the earlier run still run (pids ${left.join(', ')}); it is not run again` };
  return { resolution: 'awaiting-confirmation', reason: `${survivors.length} process(es) of the earlier run were still alive and were killed; none is left` };
};

/** How long a background command runs before bash returns its first output. */
export const backgroundStartupMs = 1_000;

const enforcementText = (enforcement: Enforcement): string => (enforcement.enforced ? `enforced (${enforcement.mechanism})` : `not enforced: ${enforcement.reason}`);

/** A stream as the model sees it: the whole text, or a head and a tail around a marker with the artifact holding all of it. */
const preview = async (stream: CapturedStream, limit: number, context: ToolContext): Promise<{ text: string; artifact?: ArtifactRef; omittedBytes?: number }> => {
  const text = stream.bytes.toString('utf8');
  if (text.length <= limit && stream.dropped === 0) return { text };
  const artifact = await context.blobs.put(stream.bytes);
  const head = text.slice(0, Math.floor(limit / 4));
  const tail = text.slice(text.length - Math.floor((limit * 3) / 4));
  const omittedBytes = stream.bytes.length - Buffer.byteLength(head) - Buffer.byteLength(tail) + stream.dropped;
  const dropped = stream.dropped > 0 ? `; ${stream.dropped} further bytes were not kept` : '';
  return { text: `${head}\n[… truncated: ${omittedBytes} bytes omitted; full output in ${artifact} (read_artifact)${dropped} …]\n${tail}`, artifact, omittedBytes };
};

const executionOf = (command: string, outcome: CommandOutcome): CommandExecution => ({
  command,
  exitCode: outcome.exitCode,
  ...(outcome.signal ? { signal: outcome.signal } : {}),
  ...(outcome.timedOut ? { timedOut: outcome.timedOut } : {}),
  durationMs: outcome.durationMs,
});

const signalNames = new Map<number, NodeJS.Signals>(Object.entries(constants.signals).map(([name, number]) => [number, name as NodeJS.Signals]));

/** What rein saw besides the outcome: the sandbox, paths the command named outside it, cleanups and connections. */
interface CallExtras {
  launch: Launch;
  outsidePaths: readonly string[];
  removed: readonly string[];
  notes: ToolNote[];
  /** The timeout the command runs under (for a background command: when it is stopped). */
  timeoutMs: number;
}

const resultOf = async (args: BashParameters, cwd: string, outcome: CommandOutcome, context: ToolContext, extras: CallExtras): Promise<ToolResult> => {
  const stdout = await preview(outcome.stdout, context.sandbox.stdoutPreviewChars, context);
  const stderr = await preview(outcome.stderr, context.sandbox.stderrPreviewChars, context);
  const artifacts = [stdout.artifact, stderr.artifact].filter((ref): ref is ArtifactRef => ref !== undefined);
  const result: Record<string, unknown> = {
    command: args.command,
    shell: outcome.shell,
    cwd,
    stdout: stdout.text,
    stderr: stderr.text,
    exit_code: outcome.exitCode,
    success: outcome.exitCode === 0 && !outcome.timedOut,
    duration_ms: outcome.durationMs,
  };
  if (outcome.signal) result.signal = outcome.signal;
  // bubblewrap reports a command killed by a signal as exit status 128 + n, the shell's convention.
  else if (extras.launch.sandbox.enforcement === 'bubblewrap' && outcome.exitCode !== null && outcome.exitCode > 128 && signalNames.has(outcome.exitCode - 128)) result.signal = signalNames.get(outcome.exitCode - 128);
  if (stdout.artifact) result.stdout_truncated = { omitted_bytes: stdout.omittedBytes, artifact: stdout.artifact };
  if (stderr.artifact) result.stderr_truncated = { omitted_bytes: stderr.omittedBytes, artifact: stderr.artifact };
  // A background command has not ended: whether it succeeds is not known yet (`command.ended` records its end).
  if (outcome.background) Object.assign(result, { background: true, pid: outcome.pid, success: null, timeout_ms: extras.timeoutMs, message: `still running in the background after ${backgroundStartupMs} ms; later output is not captured — redirect it to a file to read it. It is stopped (SIGTERM, then SIGKILL ${context.sandbox.killGraceMs} ms later) with everything it started at its timeout of ${extras.timeoutMs} ms or at the session's end, whichever comes first` });
  result.sandbox = {
    enforcement: extras.launch.sandbox.enforcement,
    ...(extras.launch.sandbox.enforcement === 'fallback' ? { reason: extras.launch.sandbox.reason } : {}),
    filesystem: enforcementText(outcome.enforcement.filesystem),
    network: `${context.sandbox.network}, ${enforcementText(outcome.enforcement.network)}`,
    processes: `max ${context.sandbox.maxProcesses}, ${enforcementText(outcome.enforcement.processes)}`,
    memory: `max ${context.sandbox.maxMemoryMb} MB, ${enforcementText(outcome.enforcement.memory)}`,
    lifetime: enforcementText(outcome.enforcement.lifetime),
    user: enforcementText(outcome.enforcement.user),
    kernel: enforcementText(outcome.enforcement.kernel),
    tmp: `max ${context.sandbox.maxTmpMb} MB each for /tmp, the home and /dev/shm, ${enforcementText(outcome.enforcement.tmp)}`,
    env: 'cleared to the allow-list',
  };
  if (extras.outsidePaths.length > 0) {
    result.outside_sandbox = { paths: extras.outsidePaths, note: extras.launch.sandbox.enforcement === 'bubblewrap' ? 'these paths lie outside the workspace or are protected: inside the sandbox the system directories (/usr, /etc, /bin, /lib, /opt) are visible read-only, protected paths are empty, and anything else outside the workspace does not exist' : 'these paths lie outside the workspace or are protected; without the sandbox nothing hid them' };
  }
  if (extras.removed.length > 0) result.protected_paths_removed = { paths: extras.removed, note: 'the command created protected paths; rein removed them' };
  const connections = extras.launch.proxy?.decisions ?? [];
  if (connections.length > 0) result.network_connections = connections.map((connection) => `${connection.decision === 'allow' ? 'allowed' : 'refused'} ${connection.method} ${connection.host}:${connection.port}`);
  // Boundary evidence for the turn typestate: where it ran, under which sandbox profile, which command.
  const provenance = { route: 'shell', workdir: cwd, sandboxProfile: sandboxProfileOf(context.sandbox), commandDigest: digestOf(args.command) };
  const notes = extras.notes;
  // How the command ended, for verification: a background command has not ended, so it reports no exit.
  const execution = outcome.background ? undefined : executionOf(args.command, outcome);
  const ran = execution ? { execution } : {};
  if (outcome.cancelled) {
    // Why it was stopped, when the abort says (the wall-time budget ran out): the model reads it.
    const reason: unknown = context.signal.reason;
    const why = reason instanceof Error && !(reason.name === 'AbortError') ? ` (${reason.message})` : '';
    return { ok: false, code: 'Cancelled', message: JSON.stringify({ ...result, message: `the command was cancelled${why}; every process it started was killed` }), artifacts, provenance, notes, ...ran };
  }
  if (outcome.timedOut) {
    const message = outcome.timedOut === 'soft' ? 'timed out; SIGTERM stopped every process it started' : 'timed out; it ignored SIGTERM and every process it started was killed with SIGKILL';
    return { ok: false, code: 'Timeout', message: JSON.stringify({ ...result, timed_out: true, timeout_kind: outcome.timedOut, message }), artifacts, provenance, notes, ...ran };
  }
  return { ok: true, output: JSON.stringify(result), data: result, artifacts, provenance, notes, ...ran };
};

/**
 * Run a shell command in the workspace under the sandbox policy. Returns JSON `{ command, shell, cwd, stdout,
 * stderr, exit_code, success, … }`; a non-zero exit is a result, not a failure. A timeout is a `Timeout`
 * observation carrying the same JSON with `timed_out`, `timeout_kind` and `message`. Output past the preview is
 * kept whole as an artifact. The command is classified for the permission stage before it runs.
 */
export const bashTool = defineTool<BashParameters, { cwd: string; relative: string; outsidePaths: string[]; marker: string }>({
  name: 'bash',
  description: 'Run a command with bash -c in the workspace, inside the sandbox. Returns JSON {stdout, stderr, exit_code, success}; a non-zero exit is a normal result.',
  parameters: BashParameters,
  annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: true, requiresConfirmation: true },
  risk: 'execute',
  sideEffect: 'process',
  resumePolicy: 'require-user-confirmation',
  async prepare(args, context) {
    // A NUL byte cannot reach a command line: refused before anything runs, naming the field.
    const nul = fieldsWithNul({ command: args.command, cwd: args.cwd });
    if (nul.length > 0) return nulByteFailure(nul);
    const resolved = await context.workspace.resolveExisting(args.cwd ?? '.');
    if (!resolved.ok) return resolved;
    const sandbox = await sandboxEnforcement(context.sandbox);
    if (sandbox.enforcement === 'fallback' && context.sandbox.mode === 'required') return toolFailure('Denied', `the sandbox mode is "required" but bubblewrap is not available: ${sandbox.reason}. Nothing was run.`, 'sandbox_unavailable');
    const network = sandbox.enforcement === 'fallback' ? networkRefusal(context.sandbox, detectIsolation()) : null;
    if (network) return toolFailure('Denied', `${network}. Nothing was run.`, 'sandbox_unavailable');
    const { subject, outsidePaths } = classifyForPermission(args.command, { workspace: context.workspace.root, cwd: resolved.path, protectedPaths: context.workspace.protectedList() });
    const marker = `${context.sessionId}:${context.callId}`;
    return { ok: true, plan: { cwd: resolved.path, relative: resolved.relative, outsidePaths, marker }, subject, intent: { command: args.command, cwd: resolved.relative, marker } };
  },
  async execute(args, context, plan) {
    const again = await context.workspace.resolveExisting(plan.relative);
    if (!again.ok || again.path !== plan.cwd) return toolFailure('Denied', `the working directory ${plan.relative} changed while the call was checked`, 'outside_workspace');
    const { prepareLaunch, absentProtectedPaths, existingProtectedFolders, runCommand, removeCreatedProtectedPaths, removeCreatedInFolders, watchBackground } = await processArea();
    const launch = await prepareLaunch({ command: args.command, cwd: plan.cwd, policy: context.sandbox, workspace: context.workspace, marker: plan.marker });
    if ('refused' in launch) return toolFailure('Denied', `${launch.refused}. Nothing was run.`, 'sandbox_unavailable');
    const absent = await absentProtectedPaths(context.workspace);
    // Outside bubblewrap nothing masks the protected folders that exist: what a command plants there is taken out after.
    const folders = launch.enforcement.filesystem.enforced ? [] : await existingProtectedFolders(context.workspace);
    // A background command runs until the timeout it asked for, or the longest the policy allows when it asked none.
    const timeoutMs = Math.min(args.timeout_ms ?? (args.run_in_background ? context.sandbox.maxTimeoutMs : context.sandbox.defaultTimeoutMs), context.sandbox.maxTimeoutMs);
    let lastProgress = 0;
    const outcome = await runCommand({
      launch,
      cwd: plan.cwd,
      timeoutMs,
      policy: context.sandbox,
      signal: context.signal,
      sessionId: context.sessionId,
      ...(args.run_in_background ? { detachAfterMs: backgroundStartupMs, onBackgroundEnd: (ended: CommandOutcome, how: 'exited' | 'timeout' | 'stopped', stoppedBy?: BackgroundStop) => {
        // rein's own exit leaves no moment to write anything: the next resume finds what it left by its marker.
        if (stoppedBy === 'exit') return;
        return context.recordLater?.('command.ended', { ...(ended.pid === undefined ? {} : { pid: ended.pid }), ended: how, ...(stoppedBy ? { stoppedBy } : {}), exitCode: ended.exitCode, ...(ended.signal ? { signal: ended.signal } : {}), ...(ended.timedOut ? { timedOut: ended.timedOut } : {}), timeoutMs, durationMs: ended.durationMs });
      } } : {}),
      onOutput: (_stream, text) => {
        const now = Date.now();
        if (now - lastProgress < 200) return;
        lastProgress = now;
        const line = text.trimEnd().split('\n').pop();
        if (line) context.progress(line.slice(0, 200));
      },
    });
    const removed = [...(await removeCreatedProtectedPaths(context.workspace, absent)), ...(await removeCreatedInFolders(context.workspace, folders))];
    // Still running: it could create a protected path after this check; its session's end checks again.
    if (outcome.background) await watchBackground(context.sessionId, context.workspace, absent, folders);
    const notes: ToolNote[] = [
      ...(launch.proxy?.decisions ?? []).map((decision) => ({ type: 'network.decided', data: { ...decision } })),
      ...(removed.length > 0 ? [{ type: 'workspace.cleaned', data: { paths: removed, reason: 'protected-path-created' } }] : []),
    ];
    return resultOf(args, plan.relative, outcome, context, { launch, outsidePaths: plan.outsidePaths, removed, notes, timeoutMs });
  },
  checkResume: async (intent) => checkCommandGone(intent),
});
