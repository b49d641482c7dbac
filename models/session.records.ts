import * as z from 'zod';
import { Budgets } from './budgets.js';
import { FailClosedFinding } from './fail-closed.js';
import { PermissionAction, PermissionMode, PermissionSource } from './permission.records.js';
import { lazySchema } from './lazy-schema.js';

/** How a session ended; the four final states of the session machine. */
export const SessionOutcome = lazySchema(() => z.enum(['completed', 'failed', 'cancelled', 'budget-exhausted']));
export type SessionOutcome = z.infer<typeof SessionOutcome>;

/** input · the first record of every session: who runs, where, with what budgets and which tools are visible. */
export const SessionCreated = lazySchema(() => z.object({
  sessionId: z.string().min(1),
  task: z.string(),
  workspace: z.string().min(1),
  provider: z.object({
    name: z.string().min(1),
    model: z.string().optional(),
    source: z.string().optional(),
    /** The fallback chain, in order (see `createRein({ fallbacks })`); absent when there is none. */
    fallbacks: z.array(z.object({ name: z.string().min(1), model: z.string().optional(), source: z.string().optional() })).optional(),
  }),
  budgets: Budgets,
  tools: z.array(z.string()),
  machine: z.object({ name: z.string(), version: z.string() }),
  /** The instruction-linked policy the session's mutations must run under (permissions and sandbox, by digest). */
  policy: z.object({ mutationPolicyDigest: z.string() }).optional(),
  /**
   * The permission settings the session was started with (mode and rules): resume restores them, so a deny rule or
   * plan mode holds for the whole session. Absent in logs written before they were recorded.
   */
  permissions: z
    .object({
      mode: PermissionMode,
      rules: z.array(z.object({ action: PermissionAction, tool: z.string().min(1), pattern: z.string().optional(), source: PermissionSource.optional() })),
    })
    .optional(),
  /** The final answer must be JSON valid against this JSON Schema (docs/model-input.md: *Typed final answers*). */
  output: z.object({ schema: z.record(z.string(), z.unknown()) }).optional(),
  /** A conversation: a final answer ends the prompt's turn and the session waits for the next message (`rein acp`). */
  conversation: z.literal(true).optional(),
}));
export type SessionCreated = z.infer<typeof SessionCreated>;

/** input · the active mutation policy changed (e.g. resumed with other permission flags); later turns must match it. */
export const PolicyChanged = lazySchema(() => z.object({ mutationPolicyDigest: z.string() }));
export type PolicyChanged = z.infer<typeof PolicyChanged>;

/**
 * input · a person raised the root agent's turn, tool-call, token or wall-time budget (`rein resume <id> --max-turns
 * <n>`, `--max-tool-calls <n>`, `--max-tokens <n>`, `--max-wall-time <ms>`; the library's `resumeSession(id, { budgets
 * })`): each given limit replaces the one in force from here on. A session that ended `budget-exhausted` runs again; an
 * interrupted one (resumed before it ended) goes on under the new limits. The root's machine takes it in
 * `budgetExhausted`, `idle` and `running`, and only when every given limit is above what is already spent (a spent
 * tool-call budget's end also needs a tool-call limit); resume refuses any other raise before recording it
 * (`BUDGET_NOT_RAISED`). At least one limit is given.
 */
export const BudgetsRaised = lazySchema(() =>
  z
    .object({
      /** The new turn budget (whole model calls, children's included), above the turns already taken. */
      maxTurns: z.number().int().positive().optional(),
      /** The new tool-call budget (children's calls included), above the calls already made; it lifts a spent one. */
      maxToolCalls: z.number().int().positive().optional(),
      /** The new token budget (input + output), above the tokens already used. */
      maxTokens: z.number().int().positive().optional(),
      /** The new wall-time budget in milliseconds since the session started, above the time already taken. */
      maxWallTimeMs: z.number().int().positive().optional(),
    })
    .refine((raise) => raise.maxTurns !== undefined || raise.maxToolCalls !== undefined || raise.maxTokens !== undefined || raise.maxWallTimeMs !== undefined, { message: 'a raise gives maxTurns, maxToolCalls, maxTokens or maxWallTimeMs' }),
);
export type BudgetsRaised = z.infer<typeof BudgetsRaised>;

/** input · text from the user (the task itself, or a later message). */
export const UserMessage = lazySchema(() => z.object({ text: z.string() }));
export type UserMessage = z.infer<typeof UserMessage>;

/** input · the user or host cancelled the session; running effects are aborted. */
export const SessionCancelled = lazySchema(() => z.object({ reason: z.string() }));
export type SessionCancelled = z.infer<typeof SessionCancelled>;

/**
 * The fail-closed findings still standing when a session ended: its last tool turn was blocked and the model
 * answered anyway. The session is `completed` (the answer is the model's to give), but nothing that turn did is
 * MutationReady, so no `succeeded` outcome, memory or merged report rests on it.
 */
export const UnresolvedFindings = lazySchema(() => z.object({ turnId: z.string(), findings: z.array(FailClosedFinding).min(1) }));
export type UnresolvedFindings = z.infer<typeof UnresolvedFindings>;

/**
 * What a completion leaves open that is not a fail-closed finding: `reply_cut` — the final reply was cut at the
 * output token limit (`max_tokens`) and the continuations it got did not finish it; `stop_hook_objected` — a `stop`
 * hook still asked to continue when its continuations were spent (`by` names it, `detail` is its reason). A session
 * that ends with one is `completed` (the answer is the model's to give) but never a clean completion: the summary,
 * `rein show`, `rein trace` and its outcome say so.
 */
export const SessionCaveat = lazySchema(() => z.object({ kind: z.enum(['reply_cut', 'stop_hook_objected']), detail: z.string(), by: z.string().optional() }));
export type SessionCaveat = z.infer<typeof SessionCaveat>;

/** effect (derived) · the session machine reached a final state. */
export const SessionEnded = lazySchema(() => z.object({
  status: SessionOutcome,
  reason: z.string().optional(),
  unresolved: UnresolvedFindings.optional(),
  caveats: z.array(SessionCaveat).min(1).optional(),
  /** The final answer, validated against the session's output schema (only with one, and only when completed). */
  output: z.unknown().optional(),
  /** Why the final answer never validated (the last answer's errors): the session failed with `OUTPUT_INVALID`. */
  outputErrors: z.array(z.string()).min(1).optional(),
}));
export type SessionEnded = z.infer<typeof SessionEnded>;

/** effect (fact) · this stream was forked from `parent` after copying its records 1..atSeq. */
export const SessionForked = lazySchema(() => z.object({
  parent: z.string(),
  atSeq: z.number().int().positive(),
  /** Why the fork was made, when rein made it: e.g. a new attempt at the model call a provider failure ended the parent on. */
  reason: z.string().optional(),
}));
export type SessionForked = z.infer<typeof SessionForked>;

/** effect (fact) · a process resumed the session after rebuilding it from the log. */
export const SessionResumed = lazySchema(() => z.object({
  fromSeq: z.number().int().nonnegative(),
  inDoubt: z.array(z.string()),
  snapshotSeq: z.number().int().nonnegative().optional(),
  /** Processes an earlier run of the session left running (background commands, or any command outside bubblewrap after a SIGKILL), killed before anything was decided. */
  strayProcessesKilled: z.number().int().positive().optional(),
  /** The cost budget (US dollars) this resume gave the session; it replaces the one recorded before. */
  maxCostUsd: z.number().positive().finite().optional(),
}));
export type SessionResumed = z.infer<typeof SessionResumed>;

/** effect (fact) · a stored snapshot could not be used; the rebuild fell back to a full replay. */
export const SnapshotRejected = lazySchema(() => z.object({ seq: z.number().int().positive(), reason: z.string() }));
export type SnapshotRejected = z.infer<typeof SnapshotRejected>;

/**
 * Why a session paused before a model call: the call's worst case on top of the tree's recorded spend (and the worst
 * cases of calls already under way) would pass the cost budget, or a price needed to check it is unknown.
 */
export const CostBudgetStop = lazySchema(() => z.object({
  code: z.literal('COST_BUDGET_REACHED'),
  /** The model call that was not made (it stays in doubt; a resume with a higher budget makes it). */
  effectId: z.string(),
  actor: z.string(),
  model: z.string().optional(),
  limitUsd: z.number().nonnegative(),
  /** What the tree's recorded model calls cost (undefined when one of them has no price). */
  spentUsd: z.number().nonnegative().optional(),
  /** The worst cases of other calls admitted and not yet answered. */
  reservedUsd: z.number().nonnegative(),
  /** This call's worst case: input tokens × input price + maxOutputTokens × output price (undefined: no price). */
  worstCaseUsd: z.number().nonnegative().optional(),
  inputTokens: z.number().int().nonnegative(),
  maxOutputTokens: z.number().int().positive(),
}));
export type CostBudgetStop = z.infer<typeof CostBudgetStop>;

/**
 * effect (fact) · the process was interrupted (Ctrl-C, host shutdown): running effects were aborted unsettled. With
 * `budget`, the session paused before a model call its cost budget could not pay for (`rein resume --max-cost`).
 */
export const SessionInterrupted = lazySchema(() => z.object({ reason: z.string(), running: z.array(z.string()), budget: CostBudgetStop.optional() }));
export type SessionInterrupted = z.infer<typeof SessionInterrupted>;
