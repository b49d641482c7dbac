import type { GateEvidence } from '../../models/memory.records.js';
import type { TurnStatus } from './turn-evidence.js';

declare const promotionReadyBrand: unique symbol;

/**
 * Evidence that a candidate may be promoted: every tool turn it came from reached MutationReady. Only
 * `checkPromotionGate` makes one; `promoteCandidate` requires it.
 */
export type PromotionReady = { readonly turns: readonly string[]; readonly [promotionReadyBrand]: true };

/** The gate refused: `wait` while a source turn is still open, `reject` when one was blocked or can no longer close. */
export type PromotionGateOutcome = { ok: true; value: PromotionReady; evidence: GateEvidence } | { ok: false; verdict: 'wait' | 'reject'; reason: string; evidence: GateEvidence };

/**
 * The MutationReady gate of promotion (promotion is a mutation). A candidate may be promoted only if every tool turn
 * its source records belong to reached `turn.mutation-ready` — the turn typestate's own verdict, not re-derived. A
 * blocked turn rejects it with the blocking classes; an open turn makes it wait, or rejects it once the session
 * ended (the turn will never close). A candidate with no tool turn among its sources (a user's own words) has
 * nothing to rest on and passes. A verified observation whose sources are not passing runs (`unverifiedSources`: a
 * failed verification, a missing one, one with no exit code — a claim) is rejected whatever its turns. Pure.
 */
export const checkPromotionGate = (input: { sourceTurns: readonly string[]; turns: ReadonlyMap<string, TurnStatus>; sessionEnded: boolean; unverifiedSources?: readonly string[] }): PromotionGateOutcome => {
  const turns = [...input.sourceTurns];
  if (input.unverifiedSources && input.unverifiedSources.length > 0) {
    const reason = `it claims a verified observation, but its source ${input.unverifiedSources.join(', ')} is not a passing run (no exit code 0 on record)`;
    return { ok: false, verdict: 'reject', reason, evidence: { status: 'blocked', turns, reason } };
  }
  const blocked = turns.flatMap((turn) => {
    const status = input.turns.get(turn);
    return status?.status === 'blocked' ? [`${turn} (${status.classes.join(', ') || 'blocked'})`] : [];
  });
  if (blocked.length > 0) {
    const reason = `its source turn ${blocked.join(', ')} was blocked: no mutation before MutationReady`;
    return { ok: false, verdict: 'reject', reason, evidence: { status: 'blocked', turns, reason } };
  }
  const open = turns.filter((turn) => input.turns.get(turn) === undefined);
  if (open.length > 0) {
    const reason = input.sessionEnded
      ? `its source turn ${open.join(', ')} never reached MutationReady and the session has ended`
      : `its source turn ${open.join(', ')} has not reached MutationReady yet`;
    return { ok: false, verdict: input.sessionEnded ? 'reject' : 'wait', reason, evidence: { status: 'open', turns, reason } };
  }
  return { ok: true, value: { turns } as unknown as PromotionReady, evidence: { status: turns.length === 0 ? 'no-turn' : 'mutation-ready', turns } };
};
