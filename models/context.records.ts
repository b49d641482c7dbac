import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/** The sources a model input is assembled from, in priority order (the first is never trimmed). */
export const ContextSource = lazySchema(() => z.enum([
  'system_rules',
  'goal_constraints',
  'state',
  'tools',
  'project_instructions',
  'latest_observation',
  'recent_tail',
  'history_summary',
  'evidence',
  'memory',
  'hooks',
  'environment',
]));
export type ContextSource = z.infer<typeof ContextSource>;

/** The task phase the budget shares follow; derived from the log (mutations and verification results). */
export const ContextPhase = lazySchema(() => z.enum(['diagnosing', 'editing', 'verifying', 'summarizing']));
export type ContextPhase = z.infer<typeof ContextPhase>;

/** How much of a source went in: all of it, a cut with a reference to the rest, a summary, or only a reference. */
export const ContextMode = lazySchema(() => z.enum(['full', 'excerpt', 'summary', 'reference']));
export type ContextMode = z.infer<typeof ContextMode>;

/** `trusted`: instructions (rules, the user); `fact`: harness-derived state; `untrusted`: tool output, evidence, memory. */
export const TrustLevel = lazySchema(() => z.enum(['trusted', 'fact', 'untrusted']));
export type TrustLevel = z.infer<typeof TrustLevel>;

/**
 * A reference to what a decision is about: `#<seq>` (a record of this stream), `#<from>..#<to>` (a range of them),
 * `artifact://…` (a blob) or `memory:<recordId>`.
 */
export const ContextRef = lazySchema(() => z.string().min(1));

/** One source (or one item of it) that reached the model input. */
export const ContextInclusion = lazySchema(() => z.object({
  source: ContextSource,
  refs: z.array(ContextRef),
  mode: ContextMode,
  trust: TrustLevel,
  tokens: z.number().int().nonnegative(),
  reason: z.string(),
}));
export type ContextInclusion = z.infer<typeof ContextInclusion>;

/** Candidates that did not reach the model input (grouped: `count` of them, `refs` bounded). */
export const ContextExclusion = lazySchema(() => z.object({
  source: ContextSource,
  refs: z.array(ContextRef),
  count: z.number().int().positive(),
  reason: z.enum(['budget', 'beyond-tail', 'stale', 'in-tail', 'expired', 'out-of-scope', 'low-confidence', 'inactive', 'priority', 'superseded-by-session']),
  detail: z.string().optional(),
}));
export type ContextExclusion = z.infer<typeof ContextExclusion>;

/** A summary that stands in for records it replaces; the records themselves stay in the log untouched. */
export const ContextCompaction = lazySchema(() => z.object({
  summaryId: z.string(),
  replaces: z.array(ContextRef),
  count: z.number().int().nonnegative(),
  /** User constraints and prohibitions that stay in force verbatim (never summarised away). */
  keeps: z.array(z.object({ ref: ContextRef, text: z.string(), prohibition: z.boolean() })),
  reason: z.string(),
}));
export type ContextCompaction = z.infer<typeof ContextCompaction>;

/**
 * Where the conversation history shown in full starts, and the budgets the part before it was rendered with (the
 * history summary and the evidence pinned at that point). Recorded with every projection and folded back into the
 * context view, so the next round renders the same prefix byte for byte (a prefix the provider can cache) until the
 * history no longer fits and the policy moves it (a compaction).
 */
export const HistoryLayout = lazySchema(() => z.object({
  /** The seq of the first conversation item shown in full (0: from the start). */
  from: z.number().int().nonnegative(),
  /** The compaction level the layout was chosen at; another level chooses again. */
  level: z.number().int().nonnegative(),
  /** How many items before `from` the summary lists one line each (the rest are counted). */
  listed: z.number().int().nonnegative(),
  summaryTokens: z.number().int().nonnegative(),
  evidenceTokens: z.number().int().nonnegative(),
  /** The seqs of the reads shown as evidence (made before `from`, unchanged when pinned). */
  evidence: z.array(z.number().int().positive()),
}));
export type HistoryLayout = z.infer<typeof HistoryLayout>;

/**
 * effect (fact) · the context policy projected the model input for one model call attempt. `input` is the blob
 * with the exact `{ messages, tools }` the provider received (its BLAKE3: the projection's digest); the ledger says
 * what was included, excluded and compacted, and why. Version 2 keeps of the ledger's lists only what the session's
 * log cannot rebuild — the decisions on what came from outside it (`included` / `excluded` entries of source `memory`,
 * from the workspace's governance stream, and `hooks`) — and their sizes (`excludedCount`, `compactedCount`, always present); the rest
 * (version 1 held every entry) `rein context` rebuilds from the log and checks against `input`. Folded into the step
 * record of the attempt's settlement (a retried attempt's is a record of its own).
 */
export const ContextProjected = lazySchema(() => z.object({
  effectId: z.string().min(1),
  turn: z.number().int().positive(),
  attempt: z.number().int().positive(),
  model: z.string().optional(),
  tokenizer: z.string(),
  phase: ContextPhase,
  compactionLevel: z.number().int().nonnegative(),
  budget: z.object({ total: z.number().int().nonnegative(), bySource: z.record(z.string(), z.number().int().nonnegative()) }),
  estimatedTokens: z.number().int().nonnegative(),
  overBudget: z.boolean(),
  /** The last seq of the log the projection was built from. */
  throughSeq: z.number().int().nonnegative(),
  input: z.string(),
  included: z.array(ContextInclusion).optional(),
  excluded: z.array(ContextExclusion).optional(),
  compacted: z.array(ContextCompaction).optional(),
  /** Where the history shown in full starts (see `HistoryLayout`); absent in logs written before rein recorded it. */
  history: HistoryLayout.optional(),
  /**
   * The message indexes that end a stable part of the input (the system message, the session context, the history):
   * a provider that caches prompts marks them (Anthropic `cache_control`); at most three.
   */
  cacheBreakpoints: z.array(z.number().int().nonnegative()).max(3).optional(),
  /** Version 2: how many candidates were left out (the sum of the whole ledger's exclusion counts). */
  excludedCount: z.number().int().nonnegative().optional(),
  /** Version 2: how many compactions stood in for older records. */
  compactedCount: z.number().int().nonnegative().optional(),
}));

export { contextCounts, isPartialLedger } from './context-counts.js';
export type ContextProjected = z.infer<typeof ContextProjected>;
