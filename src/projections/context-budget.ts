import type { ContextPhase } from '../../models/context.records.js';
import type { ActorContext } from './context.view.js';

/** The sources the budget is shared among, in priority order (rules, goal, constraints, state and tools come first and are never trimmed). */
export const flexibleSources = ['latest_observation', 'recent_tail', 'history_summary', 'evidence', 'memory'] as const;
export type FlexibleSource = (typeof flexibleSources)[number];

/** Caps per source as fractions of the flexible budget. They may add up past 1: sources are filled in priority order. */
export type PhaseShares = Record<FlexibleSource, number>;

/**
 * Budget caps by task phase: diagnosing favours evidence (reads), editing favours the tail and the files being
 * changed, verifying favours the latest observation (the test output), summarizing favours the tail (what was done).
 */
export const defaultPhaseShares: Readonly<Record<ContextPhase, PhaseShares>> = {
  diagnosing: { latest_observation: 0.45, recent_tail: 0.45, history_summary: 0.1, evidence: 0.35, memory: 0.05 },
  editing: { latest_observation: 0.35, recent_tail: 0.45, history_summary: 0.1, evidence: 0.4, memory: 0.05 },
  verifying: { latest_observation: 0.6, recent_tail: 0.35, history_summary: 0.1, evidence: 0.2, memory: 0.05 },
  summarizing: { latest_observation: 0.4, recent_tail: 0.55, history_summary: 0.1, evidence: 0.2, memory: 0.05 },
};

/**
 * The task phase, from the log alone: `diagnosing` before any change, `editing` while the latest change is newer
 * than the latest verification, then `verifying` (it failed) or `summarizing` (it passed).
 */
export const phaseOf = (actor: ActorContext): ContextPhase => {
  const verification = actor.verification;
  if (verification && verification.seq > actor.lastMutationSeq) return verification.status === 'passed' ? 'summarizing' : 'verifying';
  return actor.lastMutationSeq === 0 ? 'diagnosing' : 'editing';
};

/** Context windows of known model families, in tokens; anything else gets 32,000. */
export const defaultContextWindow = (model: string | undefined): number => {
  const name = (model ?? '').toLowerCase();
  if (/^(gpt-4\.1|gpt-5|o3|o4)/.test(name)) return 200_000;
  if (/^(gpt-4o|gpt-4-turbo|o1|chatgpt-4o|gpt-oss)/.test(name)) return 128_000;
  if (/^gpt-4/.test(name)) return 8_192;
  if (/^gpt-3\.5/.test(name)) return 16_385;
  if (/claude/.test(name)) return 200_000;
  return 32_000;
};

/** The highest compaction level: each level halves the budget and the tail; past this `compact` reports false. */
export const maxCompactionLevel = 4;
