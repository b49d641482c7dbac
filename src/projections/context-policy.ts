import type { ContextCompaction, ContextExclusion, ContextInclusion, ContextPhase } from '../../models/context.records.js';
import type { ModelMessage, ModelToolDescription } from '../../models/model-contract.js';
import { defaultContextWindow, defaultPhaseShares, phaseOf, type PhaseShares } from './context-budget.js';
import { emptyActorContext, type ActorContext, type ContextView } from './context.view.js';
import { assembleMessages } from './context-assembly.js';
import { fixedBlocks } from './context-fixed.js';
import { evidenceFill, hookFill, memoryFill, type HookCandidate } from './context-extras.js';
import { latestObservationFill, shownResultSeqs, splitConversation, type Fill } from './context-sources.js';
import { tailFill } from './context-tail.js';
import { toolSchemaTokens } from './tools-json.js';
import { memoryHints, type MemoryQuery } from './memory-hints.js';
import type { MemoryView } from './memory.view.js';
import type { TokenCounter } from './token-counter.js';

/** How the context policy is configured; every field has a documented default. */
export interface ContextPolicyOptions {
  /** The model's context window in tokens (default by model family, else 32,000). */
  contextWindow?: number;
  /** Tokens kept free for the reply (default 4,096). */
  reservedOutput?: number;
  /** Messages in the recent tail, the latest observation included (default 8); cut at turn boundaries. */
  tailEvents?: number;
  /** At most this many summary lines stand in for conversation items beyond the tail (default 20). */
  summaryLines?: number;
  /** Per-phase caps overriding `defaultPhaseShares`. */
  shares?: Partial<Record<ContextPhase, Partial<PhaseShares>>>;
  /** Where memory hints must be scoped to (default: the session's workspace; user scope allowed). */
  memory?: Omit<MemoryQuery, 'now'>;
}

/** Everything one projection reads. Pure: the same input always gives the same projection. */
export interface PolicyInput {
  view: ContextView;
  actor: string;
  /** The governance store's view (the workspace's `memory` stream): where hints come from. */
  memory?: MemoryView;
  /** This session's own memory view: its verified observations and the user's statements beat stored memory. */
  sessionMemory?: MemoryView;
  systemPrompt: string;
  tools: readonly ModelToolDescription[];
  counter: TokenCounter;
  options?: ContextPolicyOptions;
  model?: string;
  /** Time memory expiry is judged at (epoch ms). */
  now: number;
  /** Raised by `compact` after a context-length error; the view's recorded level is the floor. */
  compactionLevel?: number;
  /** Candidates `contextProject` hooks offered for this round (admitted after memory, within memory's share). */
  hookCandidates?: readonly HookCandidate[];
  /** The project instructions (AGENTS.md / CLAUDE.md, the user's file), already cut to their own budget. */
  instructions?: ProjectInstructionsPart;
}

/** The project instructions as one part of the input: their text, tokens and files (README: *Project instructions*). */
export interface ProjectInstructionsPart {
  text: string;
  /** The rendered text's blob (`artifact://…`), as `instructions.loaded` records it. */
  ref?: string;
  tokens: number;
  files: readonly string[];
  cut: boolean;
}

/** The model input for one round and the decision ledger behind it (`context.projected` without `input`). */
export interface ModelInputProjection {
  messages: ModelMessage[];
  phase: ContextPhase;
  compactionLevel: number;
  tokenizer: string;
  budget: { total: number; bySource: Record<string, number> };
  estimatedTokens: number;
  overBudget: boolean;
  throughSeq: number;
  included: ContextInclusion[];
  excluded: ContextExclusion[];
  compacted: ContextCompaction[];
}

/** Exact token count of a rendered input: every message's content and tool calls, 4 per message, and the tool schemas. */
export const countInput = (messages: readonly ModelMessage[], tools: readonly ModelToolDescription[], counter: TokenCounter): number =>
  messages.reduce((sum, message) => sum + counter.count(message.content) + (message.role === 'assistant' && message.toolCalls ? counter.count(JSON.stringify(message.toolCalls)) : 0) + 4, 0) +
  toolSchemaTokens(tools, counter);

/**
 * Project the model input for the next round (the context policy). Rules, goal, user messages and constraints,
 * state and tool schemas are always included. Then the latest observation (never dropped, only cut), the recent
 * tail with its history summary, evidence and memory hints are filled in that priority order, each up to its
 * phase cap and never past what is left; a source that cannot fit its first unit drops every lower source, so a
 * squeeze drops the lowest priorities first. Leftover budget then grows trimmed sources in priority order. Tool
 * calls keep their results; tool output is quoted as untrusted data; every candidate is in `included` or
 * `excluded` with a reason. Cost is bounded by the view's bounded collections, not by the session's length.
 */
export const projectModelInput = (input: PolicyInput): ModelInputProjection => {
  const options = input.options ?? {};
  const counter = input.counter;
  const actor: ActorContext = input.view.actors.get(input.actor) ?? emptyActorContext(input.actor);
  const level = Math.max(actor.compactionLevel, input.compactionLevel ?? 0);
  const phase = phaseOf(actor);
  const shares = { ...defaultPhaseShares[phase], ...options.shares?.[phase] };
  const window = options.contextWindow ?? defaultContextWindow(input.model);
  const total = Math.max(0, Math.floor((window - (options.reservedOutput ?? 4_096)) / 2 ** level));
  const tailEvents = Math.max(2, Math.floor((options.tailEvents ?? 8) / 2 ** level));
  const summaryLines = options.summaryLines ?? 20;

  const split = splitConversation(actor, tailEvents);
  const fixed = fixedBlocks({ view: input.view, actor, systemPrompt: input.systemPrompt, tools: input.tools, counter, phase, level, ...(input.instructions ? { instructions: input.instructions } : {}) });
  const hints = input.memory ? memoryHints(input.memory, { workspace: input.view.workspace ?? '', ...options.memory, now: input.now }, input.sessionMemory) : { hints: [], excluded: [] };

  const allocate = (flexible: number) => {
    const cap = (share: number) => Math.floor(share * flexible);
    // Pass 1: priority order, each source up to its cap; the first unit of a source may use all that is left.
    let remaining = flexible;
    const latest = latestObservationFill(split, Math.min(remaining, cap(shares.latest_observation)), counter);
    remaining = Math.max(0, remaining - latest.tokens);
    let tail = tailFill(actor, split, Math.min(remaining, cap(shares.recent_tail + shares.history_summary)), remaining, counter, summaryLines);
    const tailStarved = tail.units === 0 && tail.candidates > 0;
    remaining = Math.max(0, remaining - tail.tokens);
    const shownSeqs = () => shownResultSeqs(split, new Set([...tail.shownSeqs, ...latest.shownSeqs]));
    let evidence = evidenceFill(actor, shownSeqs(), Math.min(remaining, cap(shares.evidence)), remaining, counter);
    if (tailStarved) evidence = evidence.dropAll('the recent tail did not fit');
    const evidenceStarved = tailStarved || (evidence.units === 0 && evidence.candidates > 0);
    remaining = Math.max(0, remaining - evidence.tokens);
    let memory = memoryFill(hints, Math.min(remaining, cap(shares.memory)), remaining, counter);
    if (evidenceStarved) memory = memory.dropAll(tailStarved ? 'the recent tail did not fit' : 'the evidence did not fit');
    remaining = Math.max(0, remaining - memory.tokens);
    let hooked = hookFill(input.hookCandidates ?? [], Math.min(remaining, cap(shares.memory)), counter);
    if (evidenceStarved) hooked = hooked.dropAll(tailStarved ? 'the recent tail did not fit' : 'the evidence did not fit');
    remaining = Math.max(0, remaining - hooked.tokens);

    // Pass 2: leftover budget grows what was trimmed, again in priority order.
    const grow = (fill: Fill, refill: (allowance: number) => Fill): Fill => {
      if (remaining <= 0 || fill.complete || fill.dropped) return fill;
      const grown = refill(fill.tokens + remaining);
      if (grown.tokens <= fill.tokens || grown.tokens - fill.tokens > remaining) return fill;
      remaining -= grown.tokens - fill.tokens;
      return grown;
    };
    if (!tailStarved) tail = grow(tail, (allowance) => tailFill(actor, split, allowance, allowance, counter, summaryLines));
    if (!evidenceStarved) evidence = grow(evidence, (allowance) => evidenceFill(actor, shownSeqs(), allowance, allowance, counter));
    if (!evidenceStarved) memory = grow(memory, (allowance) => memoryFill(hints, allowance, allowance, counter));
    const messages = assembleMessages({ fixed, latest, tail, sections: [tail, evidence, memory, hooked] });
    return { latest, tail, evidence, memory, hooked, messages, estimatedTokens: countInput(messages, input.tools, counter) };
  };

  // Message framing is only known once rendered: shrink the flexible budget by any overshoot (twice at most).
  let flexible = Math.max(0, total - fixed.tokens);
  let result = allocate(flexible);
  for (let attempt = 0; attempt < 2 && result.estimatedTokens > total && flexible > 0; attempt++) {
    flexible = Math.max(0, flexible - (result.estimatedTokens - total));
    result = allocate(flexible);
  }
  const { latest, tail, evidence, memory, hooked, messages, estimatedTokens } = result;
  const fills = [latest, tail, evidence, memory, hooked];
  const bySource: Record<string, number> = { ...fixed.bySource, latest_observation: latest.tokens, recent_tail: 0, history_summary: 0, evidence: evidence.tokens, memory: memory.tokens, ...(input.hookCandidates && input.hookCandidates.length > 0 ? { hooks: hooked.tokens } : {}) };
  for (const entry of tail.included) bySource[entry.source] = (bySource[entry.source] ?? 0) + entry.tokens;
  return {
    messages,
    phase,
    compactionLevel: level,
    tokenizer: counter.name,
    budget: { total, bySource },
    estimatedTokens,
    overBudget: estimatedTokens > total,
    throughSeq: input.view.seq,
    included: [...fixed.included, ...fills.flatMap((fill) => fill.included)],
    excluded: fills.flatMap((fill) => fill.excluded),
    compacted: fills.flatMap((fill) => fill.compacted),
  };
};
