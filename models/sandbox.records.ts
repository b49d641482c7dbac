import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/** How commands are isolated: bubblewrap (the OS sandbox) or the fallback measures. */
export const SandboxEnforcementKind = lazySchema(() => z.enum(['bubblewrap', 'fallback']));
export type SandboxEnforcementKind = z.infer<typeof SandboxEnforcementKind>;

/**
 * effect (fact) · the sandbox in effect for this process's run of the session, found by the start-up probe:
 * written once when the session is created and again each time it is resumed (possibly on another machine).
 */
export const SandboxChecked = lazySchema(() => z.object({
  enforcement: SandboxEnforcementKind,
  mode: z.enum(['auto', 'required', 'off']),
  network: z.enum(['disabled', 'allow-list', 'allow-all']),
  allowedHosts: z.array(z.string()).optional(),
  /** Why the fallback is in effect (bubblewrap missing, user namespaces refused, mode off). */
  reason: z.string().optional(),
  /**
   * Why the network policy holds nowhere (the fallback, and no network namespace can be made): the network is open
   * whatever `network` says; `bash` is refused unless the mode is `off`.
   */
  networkNotEnforced: z.string().optional(),
  /** The limits of every command: processes at once, MB of data segment per process, MB of each private tmpfs. */
  limits: z.object({ maxProcesses: z.number().int().positive(), maxMemoryMb: z.number().int().positive(), maxTmpMb: z.number().int().positive() }).optional(),
}));
export type SandboxChecked = z.infer<typeof SandboxChecked>;

/** effect (fact) · the network allow-list proxy allowed or refused one connection a command asked for. */
export const NetworkDecided = lazySchema(() => z.object({
  effectId: z.string().min(1),
  callId: z.string().min(1),
  host: z.string(),
  port: z.number().int().min(1).max(65_535),
  method: z.string(),
  decision: z.enum(['allow', 'refuse']),
  reason: z.string(),
}));
export type NetworkDecided = z.infer<typeof NetworkDecided>;

/**
 * effect (fact) · a command left running in the background (`run_in_background`) ended after its call had returned:
 * by itself (`exited`), stopped at its `timeout_ms` (`timeout`), or stopped by rein while it still ran (`stopped`,
 * with `stoppedBy`): at its session's end (written after `session.ended`, before that end's `workspace.cleaned`),
 * at an interruption, at its call's cancellation, or when the process let go of a paused session (`release`, before
 * the `workspace.cleaned` of that check). Not written when rein's own exit stopped it.
 */
export const CommandEnded = lazySchema(() => z.object({
  effectId: z.string().min(1),
  callId: z.string().min(1),
  /** The command's pid, as its call's result named it. */
  pid: z.number().int().optional(),
  /** `exited`: by itself; `timeout`: stopped at its `timeout_ms`; `stopped`: rein stopped it (`stoppedBy` says why). */
  ended: z.enum(['exited', 'timeout', 'stopped']),
  /**
   * What rein stopped it for: its session's end, an interruption of the session, its call's cancellation, or this
   * process letting go of a session that waits for a person (`paused`: an approval or a confirmation).
   */
  stoppedBy: z.enum(['session-end', 'interrupted', 'cancelled', 'paused']).optional(),
  /** null: a signal ended it. */
  exitCode: z.number().int().nullable(),
  signal: z.string().optional(),
  /** `soft`: it stopped after SIGTERM; `hard`: it needed SIGKILL. */
  timedOut: z.enum(['soft', 'hard']).optional(),
  timeoutMs: z.number().int().min(1),
  durationMs: z.number().int().min(0),
}));
export type CommandEnded = z.infer<typeof CommandEnded>;

/**
 * effect (fact) · rein removed files of its own or of a command from the workspace: the temp files of a write
 * interrupted by a crash (found on resume), protected paths a command created, or (`protected-path-changed`) the
 * protected paths an MCP call changed, which rein put back as they were before the call.
 */
export const WorkspaceCleaned = lazySchema(() => z.object({
  effectId: z.string().min(1).optional(),
  callId: z.string().min(1).optional(),
  paths: z.array(z.string().min(1)).min(1),
  reason: z.enum(['interrupted-write', 'protected-path-created', 'protected-path-changed']),
}));
export type WorkspaceCleaned = z.infer<typeof WorkspaceCleaned>;
