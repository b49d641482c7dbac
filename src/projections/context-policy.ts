import type { ContextCompaction, ContextExclusion, ContextInclusion, ContextPhase, HistoryLayout } from '../../models/context.records.js';
import type { ModelMessage, ModelToolDescription } from '../../models/model-contract.js';
import { defaultContextWindow, defaultPhaseShares, phaseOf, type PhaseShares } from './context-budget.js';
import { emptyActorContext, type ActorContext, type ContextView } from './context.view.js';
import { assembleMessages } from './context-assembly.js';
import { fixedBlocks, type EnvironmentPart } from './context-fixed.js';
import { hookFill, memoryFill, type HookCandidate } from './context-extras.js';
import { latestObservationFill, splitConversation } from './context-sources.js';
import { anchorIndexOf, earlierUsersSection, evidenceCandidates, fromOf, isBoundary, renderEvidence, renderHistory, renderSummary, type RenderedEvidence, type RenderedHistory, type RenderedSummary } from './context-history.js';
import type { EvidenceItem } from './context.view.js';
import { toolSchemaTokens } from './tools-json.js';
import { inputMessagesTokens } from './message-memo.js';
import { memoryHints, type MemoryQuery } from './memory-hints.js';
import type { MemoryView } from './memory.view.js';
import type { TokenCounter } from './token-counter.js';

/** How the context policy is configured; every field has a documented default. */
export interface ContextPolicyOptions {
  /** The model's context window in tokens (default by model family, else 32,000). */
  contextWindow?: number;
  /** Tokens kept free for the reply (default 4,096). */
  reservedOutput?: number;
  /**
   * Messages the history keeps in full when it is compacted, the latest observation included (default 8); cut at
   * turn boundaries. Until then the history is kept whole and only grows (a prefix the provider can cache).
   */
  tailEvents?: number;
  /** At most this many summary lines stand in for conversation items before the history (default 20). */
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
  /** The environment block (workspace, OS, date, sandbox, git, listing) the session recorded when it started. */
  environment?: EnvironmentPart;
  /** The project instructions (AGENTS.md / CLAUDE.md, the user's file), already cut to their own budget. */
  instructions?: ProjectInstructionsPart;
}

/** The project instructions as one part of the input: their text, tokens and files (docs/model-input.md: *Project instructions*). */
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
  /** Where the history shown in full starts; recorded, so the next round keeps it while it fits. */
  history: HistoryLayout;
  /** Indexes of the messages that end a stable part (system, session context, history): cache breakpoints. */
  cacheBreakpoints: number[];
}

/** Exact token count of a rendered input: every message's content and tool calls, 4 per message, and the tool schemas. */
export const countInput = (messages: readonly ModelMessage[], tools: readonly ModelToolDescription[], counter: TokenCounter): number => {
  // A history's messages are counted once as it grows (`inputMessagesTokens`), not on every round they are shown again.
  return inputMessagesTokens(messages, counter) + toolSchemaTokens(tools, counter);
};

/** The most one tool result takes in the history: a quarter of the budget (tool output is already cut to 16 KB). */
export const resultCap = (total: number): number => Math.max(200, Math.floor(total / 4));

/** One way to lay out the conversation: the history from an anchor, and the session context standing in for the rest. */
interface Plan {
  anchorIndex: number;
  from: number;
  history: RenderedHistory;
  summary: RenderedSummary;
  evidence: RenderedEvidence;
  earlier: string;
  /** Tokens of the history's turns, the summary and the evidence (user messages are counted with the goal). */
  tokens: number;
  layout: HistoryLayout;
}

/**
 * The session context message's text from its sections (earlier user messages, summary, evidence). The last one is
 * kept while its sections are the same (they are kept strings while the history's start stays): the assembly then
 * finds the same string — its hash already computed — instead of a new copy of a few kilobytes to hash and compare.
 */
let lastContext: { earlier: string; summary: string; evidence: string; text: string } | undefined;

const sessionContext = (earlier: string, summary: string, evidence: string): string => {
  if (lastContext !== undefined && lastContext.earlier === earlier && lastContext.summary === summary && lastContext.evidence === evidence) return lastContext.text;
  const present = [earlier, summary, evidence].filter((section) => section.length > 0);
  const text = present.length === 0 ? '' : `<session-context note="assembled by the harness from the session log">\n${present.join('\n')}\n</session-context>`;
  lastContext = { earlier, summary, evidence, text };
  return text;
};

/**
 * Project the model input for the next round (the context policy). Rules, environment, goal, user messages and
 * constraints, state and tool schemas are always included. The conversation is laid out so that what does not change
 * comes first and stays byte-identical from round to round: the system message, then (once the history has been
 * compacted) a session context holding the earlier user messages, a summary of what lies before the history and the
 * evidence pinned then, then the history in full — which only grows — and last the parts that change every round
 * (the task state, memory hints, hook context). The history start recorded by the previous round is kept while
 * everything fits; when it no longer does, the history is compacted: it restarts at the last `tailEvents` messages
 * (further on if even they do not fit), with a new summary and evidence, so the prefix is stable again from there.
 * The latest observation is never dropped, only cut; a squeeze drops the lowest priorities first (history, then
 * evidence, then memory and hook context). Tool calls keep their results; tool output is quoted as untrusted data;
 * every candidate is in `included` or `excluded` with a reason. Cost is bounded by the view's bounded collections.
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
  const maxLines = options.summaryLines ?? 20;
  const cap = resultCap(total);
  const fixed = fixedBlocks({ view: input.view, actor, systemPrompt: input.systemPrompt, tools: input.tools, counter, phase, level, ...(input.instructions ? { instructions: input.instructions } : {}), ...(input.environment ? { environment: input.environment } : {}) });
  const hints = input.memory ? memoryHints(input.memory, { workspace: input.view.workspace ?? '', ...options.memory, now: input.now }, input.sessionMemory) : { hints: [], excluded: [] };

  /** The layout with the history from `anchorIndex`; the summary and evidence budgets as recorded, or as given. */
  const planAt = (anchorIndex: number, budgets: { summary: number; evidence: number | ((left: number) => number); listed?: number; pinned?: readonly EvidenceItem[] }): Plan | undefined => {
    const from = fromOf(actor, anchorIndex);
    const history = renderHistory(actor, anchorIndex, cap, counter);
    const summary = renderSummary(actor, anchorIndex, { from, budget: budgets.summary, maxLines, ...(budgets.listed === undefined ? {} : { listed: budgets.listed }), counter });
    if (!summary) return undefined;
    const earlier = earlierUsersSection(actor, from, fixed.goal);
    const withoutEvidence = history.tokens + summary.tokens;
    const evidenceBudget = typeof budgets.evidence === 'number' ? budgets.evidence : Math.max(0, budgets.evidence(withoutEvidence));
    // The reads shown in the history are no candidates (only looked for when the layout is chosen anew, not kept).
    const shown = (): Set<number> => {
      const resultSeqs = new Set<number>();
      for (let index = anchorIndex; index < actor.recent.length; index++) {
        const item = actor.recent[index]!;
        if (item.kind === 'turn') for (const result of item.results) resultSeqs.add(result.seq);
      }
      return resultSeqs;
    };
    const evidence = renderEvidence(actor, budgets.pinned ?? evidenceCandidates(actor, from, shown()), evidenceBudget, counter);
    return {
      anchorIndex,
      from,
      history,
      summary,
      evidence,
      earlier,
      tokens: withoutEvidence + evidence.tokens,
      layout: { from, level, listed: summary.listed, summaryTokens: budgets.summary, evidenceTokens: evidenceBudget, evidence: evidence.pinned },
    };
  };

  const choose = (flexible: number): { plan: Plan; moved: boolean; starved: boolean; squeezed: boolean } => {
    const cut = (share: number) => Math.floor(share * flexible);
    // Keep the recorded layout while it fits; the first round lays the history out from the start (unless the
    // provider already said the input is too long: a raised compaction level always compacts).
    const recorded = actor.layout;
    if (recorded ? recorded.level === level : level === 0) {
      const index = anchorIndexOf(actor, recorded?.from ?? 0);
      const kept = index === undefined ? undefined : recorded ? planAt(index, { summary: recorded.summaryTokens, evidence: recorded.evidenceTokens, listed: recorded.listed, pinned: recorded.pinned }) : planAt(index, { summary: cut(shares.history_summary), evidence: (left) => Math.min(cut(shares.evidence), flexible - left) });
      if (kept && kept.tokens <= flexible) return { plan: kept, moved: false, starved: false, squeezed: false };
    }
    // Compaction: the history restarts at the last `tailEvents` messages, or further on while it does not fit. It
    // aims at half the budget (evidence included), so the history has room to grow for many rounds before the next.
    const items = actor.recent;
    const split = splitConversation(actor, tailEvents);
    const lastStart = Math.max(0, items.length - 1);
    const half = Math.floor(flexible / 2);
    const candidates = items.slice(split.beyond.length, lastStart).filter((item) => item.kind === 'turn').length;
    let last: Plan | undefined;
    for (const target of [half, flexible]) {
      const budgets = { summary: cut(shares.history_summary), evidence: (left: number) => Math.min(cut(shares.evidence), target - left) };
      for (let index = split.beyond.length; index <= lastStart; index++) {
        if (!isBoundary(actor, index)) continue;
        const plan = planAt(index, budgets);
        if (!plan) continue;
        last = plan;
        if (plan.tokens <= target) {
          const shownTurns = items.slice(index, lastStart).filter((item) => item.kind === 'turn').length;
          return { plan, moved: true, starved: candidates > 0 && shownTurns === 0 && plan.summary.tokens === 0, squeezed: false };
        }
      }
    }
    // Even the latest item alone does not fit: the latest observation is cut to what is left, lower priorities dropped.
    return { plan: last ?? planAt(lastStart, { summary: 0, evidence: 0 })!, moved: true, starved: candidates > 0, squeezed: true };
  };

  const build = (flexible: number) => {
    const chosen = choose(flexible);
    const { plan } = chosen;
    let history = plan.history;
    let summary = plan.summary;
    let evidence = plan.evidence;
    const excluded: ContextExclusion[] = [...summary.excluded, ...evidence.excluded];
    const dropping = chosen.starved || chosen.squeezed;
    // The history's messages rendered as later rounds will render them (a squeezed latest observation is not).
    let historyStable = history.messages.length;
    if (chosen.squeezed) {
      const split = splitConversation(actor, tailEvents);
      if (split.latest) {
        const latestOnly = { ...split, tail: [] };
        let latest = latestObservationFill(latestOnly, Math.max(0, flexible - summary.tokens), counter);
        if (summary.tokens > 0 && summary.tokens + latest.tokens > flexible) {
          excluded.push({ source: 'history_summary', refs: summary.included.flatMap((entry) => entry.refs), count: 1, reason: 'priority', detail: 'the latest observation did not fit' });
          summary = { ...summary, section: '', tokens: 0, included: [], compacted: [] };
          latest = latestObservationFill(latestOnly, flexible, counter);
        }
        // The latest turn is the history's last item: its messages are the history's last ones.
        const before = history.messages.slice(0, history.messages.length - latest.messages.length);
        historyStable = before.length;
        history = { cut: history.cut, messages: [...before, ...latest.messages], tokens: history.tokens - (history.included.find((entry) => entry.source === 'latest_observation')?.tokens ?? 0) + latest.tokens, included: [...history.included.filter((entry) => entry.source !== 'latest_observation'), ...latest.included] };
      }
    }
    if (dropping && (evidence.included.length > 0 || evidence.candidates > 0)) {
      excluded.push({ source: 'evidence', refs: evidence.included.length > 0 ? evidence.included.flatMap((entry) => entry.refs) : [], count: Math.max(1, evidence.included.length), reason: 'priority', detail: 'the history did not fit' });
      evidence = { ...evidence, section: '', tokens: 0, pinned: [], included: [] };
    }
    const context = sessionContext(plan.earlier, summary.section, evidence.section);
    const layout: HistoryLayout = { ...plan.layout, listed: summary.tokens > 0 ? plan.layout.listed : 0, summaryTokens: summary.tokens > 0 ? plan.layout.summaryTokens : 0, evidence: evidence.pinned, evidenceTokens: evidence.pinned.length > 0 ? plan.layout.evidenceTokens : 0 };
    let remaining = Math.max(0, flexible - history.tokens - summary.tokens - evidence.tokens);
    const memoryCap = Math.floor(shares.memory * flexible);
    // A source that could not show its first unit drops every lower one: memory and hook context come after evidence.
    const evidenceStarved = evidence.candidates > 0 && evidence.included.length === 0;
    const drop = dropping ? 'the history did not fit' : evidenceStarved ? 'the evidence did not fit' : undefined;
    let memory = memoryFill(hints, Math.min(remaining, memoryCap), remaining, counter);
    if (drop) memory = memory.dropAll(drop);
    remaining = Math.max(0, remaining - memory.tokens);
    let hooked = hookFill(input.hookCandidates ?? [], Math.min(remaining, memoryCap), counter);
    if (drop) hooked = hooked.dropAll(drop);
    const assembled = assembleMessages({ system: fixed.system, systemParts: fixed.systemParts, goal: fixed.goal, context, history: history.messages, historyText: history.text, historyStable, volatile: [fixed.state, memory.section, hooked.section] });
    return { layout, history, summary, evidence, excluded, memory, hooked, assembled, estimatedTokens: countInput(assembled.messages, input.tools, counter) };
  };

  // Message framing is only known once rendered: shrink the flexible budget by any overshoot (twice at most).
  let flexible = Math.max(0, total - fixed.tokens);
  let result = build(flexible);
  for (let attempt = 0; attempt < 2 && result.estimatedTokens > total && flexible > 0; attempt++) {
    flexible = Math.max(0, flexible - (result.estimatedTokens - total));
    result = build(flexible);
  }
  const { layout, history, summary, evidence, memory, hooked, assembled, estimatedTokens } = result;
  // Built key by key, in the order the record keeps: a spread with added keys took V8's slow path (~10 µs a round).
  let latestTokens = 0;
  let tailTokens = 0;
  let others: ContextInclusion[] | undefined;
  for (const entry of history.included) {
    if (entry.source === 'latest_observation') latestTokens += entry.tokens;
    else if (entry.source === 'recent_tail') tailTokens += entry.tokens;
    else (others ??= []).push(entry);
  }
  const bySource: Record<string, number> = {};
  for (const source in fixed.bySource) bySource[source] = fixed.bySource[source]!;
  bySource['latest_observation'] = latestTokens;
  bySource['recent_tail'] = tailTokens;
  bySource['history_summary'] = summary.tokens;
  bySource['evidence'] = evidence.tokens;
  bySource['memory'] = memory.tokens;
  if (input.hookCandidates && input.hookCandidates.length > 0) bySource['hooks'] = hooked.tokens;
  if (others) for (const entry of others) bySource[entry.source] = (bySource[entry.source] ?? 0) + entry.tokens;
  return {
    messages: assembled.messages,
    phase,
    compactionLevel: level,
    tokenizer: counter.name,
    budget: { total, bySource },
    estimatedTokens,
    overBudget: estimatedTokens > total,
    throughSeq: input.view.seq,
    // Memory's and the hook context's entries come last (the session records them, and finds them from the end).
    included: [...fixed.included, ...history.included, ...summary.included, ...evidence.included, ...memory.included, ...hooked.included],
    excluded: [...result.excluded, ...memory.excluded, ...hooked.excluded],
    compacted: [...summary.compacted, ...memory.compacted, ...hooked.compacted],
    history: layout,
    cacheBreakpoints: assembled.breakpoints,
  };
};
