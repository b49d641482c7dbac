import type { SandboxPolicy } from '../policy/sandbox-policy.js';
import type { SandboxScope } from '../tools/command-launch.js';
import { processArea } from '../areas/process-loader.js';
import { hookOutputCap, type HookCommandOutcome } from './command-runner.js';

/**
 * Run a hook command inside the bash sandbox, as the model's own commands run: bubblewrap with the workspace
 * read-write, protected paths read-only (a hook may run its own protected script, never change it), an empty home,
 * the environment cleared to the policy's allow-list plus `extraEnv`, the policy's network, and every process it
 * starts ended with it — or, where bubblewrap is not available, the same fallback measures as `bash`. `stdin` is
 * written and closed. Never rejects; a launch the policy refuses (`sandbox.mode: required` without bubblewrap) is
 * a `spawnError`.
 */
export const runSandboxedHookCommand = async (options: {
  command: string;
  sandbox: SandboxScope;
  stdin: string;
  signal: AbortSignal;
  timeoutMs: number;
  marker: string;
  extraEnv: Record<string, string>;
}): Promise<HookCommandOutcome> => {
  const { policy, workspace } = options.sandbox;
  // Its output is a hook's answer, kept as small as a host hook's.
  const bounded: SandboxPolicy = { ...policy, maxCaptureBytes: Math.min(policy.maxCaptureBytes, hookOutputCap) };
  let launch;
  try {
    launch = await (await processArea()).prepareLaunch({ command: options.command, cwd: workspace.root, policy: bounded, workspace, marker: options.marker, protectedReadable: true });
  } catch (error) {
    return { exitCode: null, signal: null, stdout: '', stderr: '', spawnError: (error as Error).message, killed: false };
  }
  if ('refused' in launch) return { exitCode: null, signal: null, stdout: '', stderr: '', spawnError: launch.refused, killed: false };
  Object.assign(launch.env, options.extraEnv);
  const outcome = await (await processArea()).runCommand({ launch, cwd: workspace.root, timeoutMs: options.timeoutMs, policy: bounded, signal: options.signal, stdin: options.stdin });
  return {
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    stdout: outcome.stdout.bytes.toString('utf8'),
    stderr: outcome.stderr.bytes.toString('utf8'),
    killed: outcome.timedOut !== null || outcome.cancelled,
  };
};
