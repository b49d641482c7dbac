import type { ChildUsage } from '../../models/delegation.records.js';

/*
 * The delegation machine's output, in a file of its own: the session contract (machines/session.contract.ts) names it
 * in the event the parent receives, and the delegation machine imports the contract's types, so keeping it in either
 * file would make the two import each other.
 */

/** What the parent learns when the join is decided: the call's terminal result. */
export interface JoinOutput {
  kind: 'delegation.join';
  callId: string;
  outcome: 'satisfied' | 'unsatisfied' | 'cancelled';
  observation: string;
  usage: ChildUsage;
  /**
   * The latest session time (ms) the delegation saw: a child's deadline timer that fired. The parent charges it to
   * its own clock, so a deadline that was also the parent's leaves it no wall time for another call.
   */
  elapsedMs: number;
}
