import * as z from 'zod';
import type { DecisionPoint, HookPoint } from '../../models/hook.records.js';
import { runHookCommand } from './command-runner.js';
import type { HookRegistration, HookResult, InvokeOutcome } from './hook-types.js';
import type { SandboxScope } from '../tools/command-launch.js';
import { runSandboxedHookCommand } from './sandboxed-hook.js';
import { lazySchema } from '../../models/lazy-schema.js';

/** The events of the `hooks` config, with the shape Claude Code's settings use, and the rein point each one is. */
export const commandHookEvents = {
  PreToolUse: 'preToolUse',
  PostToolUse: 'postToolUse',
  UserPromptSubmit: 'userPromptSubmit',
  Stop: 'stop',
  SubagentStart: 'subagentStart',
  SubagentStop: 'subagentStop',
  SessionStart: 'sessionStart',
  SessionEnd: 'sessionEnd',
  PreCompact: 'preCompact',
} as const satisfies Record<string, HookPoint>;
export type CommandHookEvent = keyof typeof commandHookEvents;

/** Default timeout of a command hook, in seconds (as in Claude Code). */
export const defaultCommandTimeoutSeconds = 60;

const CommandHook = lazySchema(() => z
  .object({
    type: z.literal('command'),
    command: z.string().min(1),
    /** Seconds (default 60). */
    timeout: z.number().positive().max(3_600).optional(),
    /** rein's extension: a failing hook at a blocking point lets the call through instead of denying it (recorded). */
    failOpen: z.boolean().optional(),
    /**
     * rein's extension: `true` runs the command inside the bash sandbox (`runSandboxedHookCommand`), `false` on the
     * host. Unset: on the host for a host's `createRein({ hooks })`; the CLI reads a workspace file's unset as `true`.
     */
    sandbox: z.boolean().optional(),
  })
  .strict());

const Matcher = lazySchema(() => z
  .object({
    /** A regular expression over the tool name (rein's, or the Claude Code name it maps to); empty or `*` matches every tool. */
    matcher: z
      .string()
      .refine((matcher) => {
        try {
          new RegExp(`^(?:${matcher})$`);
          return true;
        } catch {
          return false;
        }
      }, 'not a valid regular expression')
      .optional(),
    hooks: z.array(CommandHook).min(1),
  })
  .strict());

/** The `hooks` field of `rein.config.json`. */
export const CommandHooksConfig = lazySchema(() => z.object(Object.fromEntries(Object.keys(commandHookEvents).map((event) => [event, z.array(Matcher).optional()])) as Record<CommandHookEvent, z.ZodOptional<z.ZodArray<typeof Matcher>>>).strict());
export type CommandHooksConfig = z.infer<typeof CommandHooksConfig>;

/** rein tool names and the Claude Code names a matcher written for Claude Code may use for them. */
export const claudeToolAliases: Readonly<Record<string, readonly string[]>> = {
  bash: ['Bash'],
  read: ['Read'],
  write: ['Write'],
  edit: ['Edit'],
  edit_lines: ['Edit', 'MultiEdit'],
  // A patch edits, writes and deletes files: a hook written for Claude Code's file tools guards it too.
  apply_patch: ['Edit', 'MultiEdit', 'Write'],
  glob: ['Glob'],
  grep: ['Grep'],
  list_dir: ['LS'],
  delegate_task: ['Task', 'Agent'],
};

const toolPoints: ReadonlySet<HookPoint> = new Set(['preToolUse', 'postToolUse']);

/** The matcher as a test over rein's tool name and its Claude Code aliases; undefined matches everything. */
export const toolMatcher = (matcher: string | undefined): ((tool: string) => boolean) | undefined => {
  if (matcher === undefined || matcher === '' || matcher === '*') return undefined;
  const pattern = new RegExp(`^(?:${matcher})$`);
  return (tool) => pattern.test(tool) || (claudeToolAliases[tool] ?? []).some((alias) => pattern.test(alias));
};

/** What a command hook's stdout JSON may hold (Claude Code's fields; unknown fields are ignored). */
const HookOutput = lazySchema(() => z
  .object({
    continue: z.boolean().optional(),
    stopReason: z.string().optional(),
    decision: z.enum(['approve', 'block']).optional(),
    reason: z.string().optional(),
    suppressOutput: z.boolean().optional(),
    systemMessage: z.string().optional(),
    hookSpecificOutput: z
      .object({
        hookEventName: z.string().optional(),
        permissionDecision: z.enum(['allow', 'deny', 'ask']).optional(),
        permissionDecisionReason: z.string().optional(),
        updatedInput: z.record(z.string(), z.unknown()).optional(),
        additionalContext: z.string().optional(),
      })
      .passthrough()
      .optional(),
  })
  .passthrough());
type HookOutput = z.infer<typeof HookOutput>;

const tail = (text: string, limit = 2_000): string => (text.length > limit ? `…${text.slice(text.length - limit)}` : text).trim();

/** Map an exit-0 answer (JSON or plain text on stdout) to rein's hook result for `event`. */
const resultOfOutput = (event: CommandHookEvent, stdout: string): InvokeOutcome => {
  const text = stdout.trim();
  if (!text.startsWith('{')) {
    // Plain text on stdout is context only where Claude Code treats it so.
    return { ok: true, result: text !== '' && (event === 'UserPromptSubmit' || event === 'SessionStart') ? { additionalContext: text } : undefined };
  }
  let parsed: HookOutput;
  try {
    const value = HookOutput.safeParse(JSON.parse(text));
    if (!value.success) return { ok: false, error: { kind: 'invalid', message: `stdout JSON does not fit the hook output: ${value.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}` } };
    parsed = value.data;
  } catch (error) {
    return { ok: false, error: { kind: 'invalid', message: `stdout is not valid JSON: ${(error as Error).message}` } };
  }
  const specific = parsed.hookSpecificOutput;
  const context = specific?.additionalContext;
  const reason = specific?.permissionDecisionReason ?? parsed.reason ?? parsed.stopReason;
  // `continue: false` stops the whole session, whatever else the answer says (as in Claude Code); at `Stop` the
  // session is ending anyway and at `SessionEnd` it has ended.
  const halt = parsed.continue === false && event !== 'Stop' && event !== 'SessionEnd' ? { stopSession: parsed.stopReason ?? `continue: false from a ${event} hook` } : {};
  const withContext = (result: HookResult): HookResult => ({ ...result, ...(context ? { additionalContext: context } : {}), ...halt });
  const stopped = parsed.continue === false;
  switch (event) {
    case 'PreToolUse': {
      const permission = specific?.permissionDecision ?? (parsed.decision === 'block' ? 'deny' : parsed.decision === 'approve' ? 'allow' : undefined);
      if (stopped || permission === 'deny') return { ok: true, result: withContext({ decision: 'deny', reason: reason ?? 'denied by a PreToolUse hook' }) };
      if (permission === 'ask') return { ok: true, result: withContext({ decision: 'ask', ...(reason ? { reason } : {}) }) };
      if (specific?.updatedInput) return { ok: true, result: withContext({ decision: 'amend', input: specific.updatedInput, reason: reason ?? 'input updated by a PreToolUse hook' }) };
      return { ok: true, result: withContext(permission === 'allow' ? { decision: 'allow', ...(reason ? { reason } : {}) } : {}) };
    }
    case 'UserPromptSubmit':
      if (stopped || parsed.decision === 'block') return { ok: true, result: { decision: 'block', reason: reason ?? 'blocked by a UserPromptSubmit hook', ...halt } };
      return { ok: true, result: withContext({}) };
    case 'Stop':
      if (stopped) return { ok: true, result: { decision: 'stop', ...(reason ? { reason } : {}) } };
      if (parsed.decision === 'block') return { ok: true, result: { decision: 'continue', reason: reason ?? 'a Stop hook asked to continue' } };
      return { ok: true, result: undefined };
    case 'PostToolUse': {
      // A PostToolUse "block" cannot undo the call: its reason is shown to the model, as in Claude Code.
      const shown = [parsed.decision === 'block' ? parsed.reason : undefined, context].filter((part): part is string => Boolean(part));
      return { ok: true, result: shown.length > 0 || stopped ? { ...(shown.length > 0 ? { additionalContext: shown.join('\n\n') } : {}), ...halt } : undefined };
    }
    case 'SessionStart':
      return { ok: true, result: withContext({}) };
    default:
      return { ok: true, result: stopped ? { ...halt } : undefined };
  }
};

/** Map an exit 2 (stderr is the message) to rein's hook result for `event`. */
const resultOfBlock = (event: CommandHookEvent, stderr: string): InvokeOutcome => {
  const message = tail(stderr) || `blocked by a ${event} hook (exit 2)`;
  switch (event) {
    case 'PreToolUse':
      return { ok: true, result: { decision: 'deny', reason: message } };
    case 'UserPromptSubmit':
      return { ok: true, result: { decision: 'block', reason: message } };
    case 'Stop':
      return { ok: true, result: { decision: 'continue', reason: message } };
    case 'PostToolUse':
      return { ok: true, result: { additionalContext: message } };
    default:
      return { ok: true, result: { reason: message } };
  }
};

/** What a command hook gets on stdin: Claude Code's field names, rein's values (see docs/capabilities.md: *Command hooks*). */
export const commandHookInput = (event: CommandHookEvent, input: Record<string, unknown>): Record<string, unknown> => {
  const base: Record<string, unknown> = { session_id: input.sessionId, cwd: input.cwd, hook_event_name: event, permission_mode: input.mode, agent: input.actor };
  const tool = input.tool as { name: string; input: Record<string, unknown>; callId: string } | undefined;
  if (tool) Object.assign(base, { tool_name: tool.name, tool_input: tool.input, tool_use_id: tool.callId });
  const result = input.result as { status: string; errorCode?: string; observation: string } | undefined;
  if (result) base.tool_response = { status: result.status, ...(result.errorCode ? { error_code: result.errorCode } : {}), output: result.observation };
  if (typeof input.prompt === 'string') base.prompt = input.prompt;
  if (event === 'Stop' || event === 'SubagentStop') base.stop_hook_active = typeof input.continuations === 'number' && input.continuations > 0;
  if (event === 'Stop') base.last_message = input.text;
  if (event === 'SessionStart') Object.assign(base, { source: 'startup', task: input.task });
  if (event === 'SessionEnd') Object.assign(base, { reason: input.status, ...(input.reason ? { detail: input.reason } : {}) });
  if (event === 'PreCompact') Object.assign(base, { trigger: 'auto', level: input.level });
  if (event === 'SubagentStart' || event === 'SubagentStop') Object.assign(base, { agent_id: input.child, ...(input.role ? { agent_type: input.role } : {}), ...(input.status ? { status: input.status } : {}) });
  return base;
};

/**
 * Turn the `hooks` config into kernel registrations (`command:<Event>#<n>`, in config order). Each runs its command
 * with the event's JSON on stdin: exit 0 with optional JSON on stdout decides as Claude Code's fields say, exit 2
 * blocks with stderr as the message, and any other exit (or a command that cannot start, or invalid JSON) is a
 * failure — which denies at `PreToolUse` (fail closed, unless `failOpen`) and is recorded elsewhere.
 */
export const commandHookRegistrations = (config: CommandHooksConfig | undefined, options: { workspace: string; sandbox?: SandboxScope }): HookRegistration[] => {
  const registrations: HookRegistration[] = [];
  if (!config) return registrations;
  for (const event of Object.keys(commandHookEvents) as CommandHookEvent[]) {
    const point: DecisionPoint = commandHookEvents[event];
    let index = 0;
    for (const group of config[event] ?? []) {
      const matches = toolPoints.has(point) ? toolMatcher(group.matcher) : undefined;
      for (const hook of group.hooks) {
        index++;
        const id = `command:${event}#${index}`;
        const timeoutMs = (hook.timeout ?? defaultCommandTimeoutSeconds) * 1_000;
        registrations.push({
          id,
          kind: 'command',
          point,
          order: 0,
          timeoutMs,
          failOpen: hook.failOpen ?? false,
          ...(matches ? { matches } : {}),
          async invoke(input, context) {
            const stdin = JSON.stringify(commandHookInput(event, input));
            const extraEnv = { REIN_PROJECT_DIR: options.workspace, CLAUDE_PROJECT_DIR: options.workspace, ...(typeof input.sessionId === 'string' ? { REIN_SESSION_ID: input.sessionId } : {}) };
            let outcome;
            if (hook.sandbox !== true) outcome = await runHookCommand({ command: hook.command, cwd: options.workspace, stdin, signal: context.signal, extraEnv });
            else if (options.sandbox) outcome = await runSandboxedHookCommand({ command: hook.command, sandbox: options.sandbox, stdin, signal: context.signal, timeoutMs, marker: `${typeof input.sessionId === 'string' ? input.sessionId : 'rein'}:${id}`, extraEnv });
            else return { ok: false, error: { kind: 'exit', message: 'could not start: it asks for the sandbox, and none was given to run it in' } };
            if (outcome.spawnError) return { ok: false, error: { kind: 'exit', message: `could not start: ${outcome.spawnError}` } };
            if (outcome.killed) return { ok: false, error: { kind: 'timeout', message: 'killed at its timeout' } };
            if (outcome.exitCode === 0) return resultOfOutput(event, outcome.stdout);
            if (outcome.exitCode === 2) return resultOfBlock(event, outcome.stderr);
            const how = outcome.exitCode === null ? `was killed by ${outcome.signal}` : `exited with ${outcome.exitCode}`;
            return { ok: false, error: { kind: 'exit', message: `${how}${outcome.stderr.trim() ? `: ${tail(outcome.stderr, 500)}` : ''}`, ...(outcome.exitCode === null ? {} : { exitCode: outcome.exitCode }) } };
          },
        });
      }
    }
  }
  return registrations;
};
