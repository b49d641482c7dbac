import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/** The points where hooks run (docs/capabilities.md: *Hooks*). */
export const HookPoint = lazySchema(() => z.enum(['sessionStart', 'userPromptSubmit', 'preToolUse', 'postToolUse', 'contextProject', 'preCompact', 'subagentStart', 'subagentStop', 'stop', 'sessionEnd']));
export type HookPoint = z.infer<typeof HookPoint>;

/** Guardrail stages, in the order a turn must pass them: before its calls run, per call, per result. */
export const GuardrailStage = lazySchema(() => z.enum(['pre_flight', 'input', 'output']));
export type GuardrailStage = z.infer<typeof GuardrailStage>;

/** Where a recorded decision was made: a hook point, or a guardrail stage (`guardrail.<stage>`). */
export const DecisionPoint = lazySchema(() => z.enum([...HookPoint.options, 'guardrail.pre_flight', 'guardrail.input', 'guardrail.output']));
export type DecisionPoint = z.infer<typeof DecisionPoint>;

/**
 * What one hook (or guardrail) said: `allow`, `deny`, `ask`, `amend` (a rewritten tool input) at `preToolUse`;
 * `continue` / `stop` at `stop`; `block` for a refused prompt; `pass` / `block` for a guardrail; `none` for an
 * observer that decided nothing.
 */
export const HookVerdict = lazySchema(() => z.enum(['allow', 'deny', 'ask', 'amend', 'continue', 'stop', 'block', 'pass', 'none']));
export type HookVerdict = z.infer<typeof HookVerdict>;

/** Why a hook did not return a usable decision. */
export const HookErrorKind = lazySchema(() => z.enum(['timeout', 'threw', 'exit', 'invalid', 'aborted']));
export type HookErrorKind = z.infer<typeof HookErrorKind>;

/** One hook invocation: who ran, what it decided, how long it took, and what went wrong if anything. */
export const HookRow = lazySchema(() => z.object({
  hookId: z.string().min(1),
  kind: z.enum(['plugin', 'command']),
  pluginId: z.string().optional(),
  verdict: HookVerdict,
  reason: z.string().optional(),
  durationMs: z.number().nonnegative(),
  error: z.object({ kind: HookErrorKind, message: z.string(), exitCode: z.number().int().optional() }).optional(),
  /** The hook is configured to fail open: its error was recorded and did not block. */
  failOpen: z.literal(true).optional(),
  additionalContext: z.string().optional(),
  /** This hook asked to stop the session, with this reason (see `HookDecided.stopSession`). */
  stopSession: z.string().optional(),
}));
export type HookRow = z.infer<typeof HookRow>;

/** A context candidate a `contextProject` hook returned; the context policy admits or refuses it. */
export const HookContextCandidate = lazySchema(() => z.object({
  id: z.string().min(1),
  hookId: z.string().min(1),
  priority: z.number(),
  content: z.string(),
}));
export type HookContextCandidate = z.infer<typeof HookContextCandidate>;

/**
 * effect (fact) · the hooks (or guardrails) of one point ran for one subject: every invocation with its verdict,
 * reason and duration, and the combined decision the runtime acted on. For `amend`, the original and the amended
 * input. Replay and resume read this record; they never run the hooks again.
 */
export const HookDecided = lazySchema(() => z.object({
  point: DecisionPoint,
  effectId: z.string().optional(),
  callId: z.string().optional(),
  tool: z.string().optional(),
  /** BLAKE3 (`b3:`) of the canonical JSON the hooks were given. */
  inputDigest: z.string(),
  hooks: z.array(HookRow),
  decision: HookVerdict,
  reason: z.string().optional(),
  /** The deciding hook (the first deny, ask or block; the last amend). */
  decidedBy: z.string().optional(),
  original: z.record(z.string(), z.unknown()).optional(),
  amended: z.record(z.string(), z.unknown()).optional(),
  /** Context the hooks asked to show the model next (untrusted, admitted by the context policy). */
  additionalContext: z.string().optional(),
  candidates: z.array(HookContextCandidate).optional(),
  /**
   * A hook asked to stop the whole session (a command hook's `continue: false`, with its `stopReason`): the runtime
   * ends the session as `cancelled` with this reason right after this record is durable. Replay reads the
   * `session.cancelled` input that followed; resume of a session whose log holds this but no end cancels it.
   */
  stopSession: z.object({ hookId: z.string().min(1), reason: z.string() }).optional(),
}));
export type HookDecided = z.infer<typeof HookDecided>;
