import * as z from 'zod';
import type { DecisionPoint, GuardrailStage, HookPoint, HookRow, HookVerdict } from '../../models/hook.records.js';
import { lazySchema } from '../../models/lazy-schema.js';

export type { DecisionPoint, GuardrailStage, HookPoint } from '../../models/hook.records.js';

/** A tool call as hooks see it: rein's tool name, its (validated) input, ids, and what the tool may do. */
export interface HookToolCall {
  name: string;
  input: Record<string, unknown>;
  callId: string;
  effectId: string;
  risk: string;
  readOnly: boolean;
}

/** A tool result as `postToolUse` and the output guardrail see it. */
export interface HookToolResult {
  status: 'ok' | 'error';
  errorCode?: string;
  observation: string;
}

/** What every hook input carries. `actor` is the agent's path (`root`, or a child agent's). */
export interface HookInputBase {
  sessionId: string;
  actor: string;
  cwd: string;
  /** The agent's permission mode (a child agent runs in its own, never wider, mode). */
  mode: string;
}

/** The input of each hook point. */
export interface HookInputs {
  sessionStart: { task: string };
  userPromptSubmit: { prompt: string };
  preToolUse: { tool: HookToolCall };
  postToolUse: { tool: HookToolCall; result: HookToolResult };
  contextProject: { turn: number };
  preCompact: { level: number };
  subagentStart: { child: string; role: string; objective: string };
  subagentStop: { child: string; status: string; reason?: string };
  stop: { text: string; continuations: number };
  sessionEnd: { status: string; reason?: string };
}

/** The input of each guardrail stage. */
export interface GuardrailInputs {
  pre_flight: { text: string; toolCalls: Array<{ name: string; input: Record<string, unknown>; callId: string }> };
  input: { tool: HookToolCall };
  output: { tool: HookToolCall; result: HookToolResult };
}

export type HookInput<P extends HookPoint = HookPoint> = HookInputBase & { point: P } & HookInputs[P];
export type GuardrailInput<S extends GuardrailStage = GuardrailStage> = HookInputBase & { stage: S } & GuardrailInputs[S];

/**
 * What a hook returns (nothing means no decision): `allow`, `deny` (with a reason), `ask` a person, or `amend` the
 * tool input (`input`, with a reason) at `preToolUse`; `continue` (with the reason the model reads) or `stop` at
 * `stop`; `block` a prompt at `userPromptSubmit`. `additionalContext` is shown to the model next (untrusted, through
 * the context policy); `candidates` are a `contextProject` hook's context candidates. `stopSession` (the reason) ends
 * the whole session after this point, at any point (a command hook's `continue: false`); at `preToolUse` the call is
 * also denied and at `userPromptSubmit` the prompt blocked, whatever `decision` says.
 */
export const HookResult = lazySchema(() => z
  .object({
    decision: z.enum(['allow', 'deny', 'ask', 'amend', 'continue', 'stop', 'block']).optional(),
    reason: z.string().max(20_000).optional(),
    input: z.record(z.string(), z.unknown()).optional(),
    additionalContext: z.string().max(50_000).optional(),
    candidates: z.array(z.object({ id: z.string().min(1).max(200), priority: z.number().finite().optional(), content: z.string().max(50_000) }).strict()).max(32).optional(),
    stopSession: z.string().max(20_000).optional(),
  })
  .strict());
export type HookResult = z.infer<typeof HookResult>;

/** What a guardrail returns: `pass`, or `block` with the reason. */
export const GuardrailResult = lazySchema(() => z.object({ verdict: z.enum(['pass', 'block']), reason: z.string().max(20_000).optional() }).strict());
export type GuardrailResult = z.infer<typeof GuardrailResult>;

/** What the hook kernel gives a running hook: its abort signal (fired at its timeout or when the call is cancelled). */
export interface HookRunContext {
  signal: AbortSignal;
}

/** Points where a hook's failure (timeout, throw, bad result, a command's unexpected exit) denies: fail closed. */
export const blockingPoints: ReadonlySet<DecisionPoint> = new Set(['preToolUse', 'guardrail.pre_flight', 'guardrail.input', 'guardrail.output']);

/** One registered hook or guardrail, normalised: the kernel runs these. */
export interface HookRegistration {
  /** Full id: `<plugin>:<hook id>` for plugin hooks, `command:<Event>#<n>` for command hooks. */
  id: string;
  kind: 'plugin' | 'command';
  pluginId?: string;
  point: DecisionPoint;
  order: number;
  timeoutMs: number;
  /** Reverse the failure policy: a blocking hook that fails lets the call through (recorded). */
  failOpen: boolean;
  /** For tool points: which tool names this hook is for (absent: all). */
  matches?: (toolName: string) => boolean;
  /**
   * Run once. Return (or resolve) the result (undefined for no decision); throw, reject or return an error for a
   * failure. A command hook resolves `error` itself for an exit code other than 0 and 2. A synchronous answer costs no
   * timer: the signal is made only when the hook reads it or answers later.
   */
  invoke(input: Record<string, unknown>, context: HookRunContext): InvokeOutcome | Promise<InvokeOutcome>;
}

/** How one invocation went, before the kernel combines it with the others. */
export type InvokeOutcome =
  | { ok: true; result: HookResult | GuardrailResult | undefined }
  | { ok: false; error: NonNullable<HookRow['error']> };

/** The combined decision of one point for one subject, and the record that proves it. */
export interface PointDecision {
  decision: HookVerdict;
  reason?: string;
  decidedBy?: string;
  /** The tool input after every `amend`, when some hook amended it. */
  amended?: Record<string, unknown>;
  additionalContext?: string;
  candidates?: Array<{ id: string; hookId: string; priority: number; content: string }>;
  /** A hook asked to stop the session (the first one that did; the hooks after it did not run). */
  stopSession?: { hookId: string; reason: string };
  rows: HookRow[];
}
