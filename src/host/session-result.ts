/*
 * What a session run reports when it goes quiet (`SessionResult`): how it stopped, why, what it waits for, its answer
 * and its usage, read from the host's tree and state. Split from session-host.ts (issue 31).
 */
import type { RecordEnvelope } from '../../models/envelope.js';
import type { CostBudgetStop, SessionOutcome } from '../../models/session.records.js';
import type { MachineTree } from './machine-tree.js';
import { statusOfState, type SessionStatusState } from './session-status.js';
import type { SessionResult } from './session-host.types.js';

/** The host's state a result is read from. */
export interface SessionResultSource {
  stream: string;
  /** The seq of the last record written. */
  head: number;
  tree: MachineTree;
  /** The root's `session.ended` view, once the session ended in this process. */
  endedRecord: RecordEnvelope | undefined;
  interrupted: boolean;
  /** The cost-budget stop the session paused (or is pausing) for. */
  pausing: CostBudgetStop | undefined;
  statusState: SessionStatusState;
}

/** Why the session paused for its cost budget, as a person reads it. */
export function pauseReasonOf(stop: CostBudgetStop, stream: string): string {
  const usd = (value: number | undefined) => (value === undefined ? 'unknown' : `$${value < 1 ? value.toFixed(4) : value.toFixed(2)}`);
  const why = stop.worstCaseUsd === undefined || stop.spentUsd === undefined
    ? `the cost budget of ${usd(stop.limitUsd)} cannot be checked: ${stop.model ?? 'the model'} has no price`
    : `the cost budget of ${usd(stop.limitUsd)} could be exceeded: spent ${usd(stop.spentUsd)}${stop.reservedUsd > 0 ? `, calls under way up to ${usd(stop.reservedUsd)}` : ''}, this call up to ${usd(stop.worstCaseUsd)}`;
  return `paused before a model call of ${stop.actor}: ${why}; rein resume ${stream} --max-cost <usd> continues it`;
}

/** A session's result as its host's state stands now (the host's `result()`). */
export function sessionResultOf(session: SessionResultSource): SessionResult {
  const { tree, endedRecord, interrupted, pausing, statusState, stream, head } = session;
  const context = tree.context;
  const ended = endedRecord?.data as { status: SessionOutcome; reason?: string; output?: unknown; outputErrors?: string[] } | undefined;
  const tally = tree.done ? context.tally : undefined;
  const answer = ended ? ('output' in ended ? { output: ended.output } : {}) : tally?.answer ? { output: tally.answer.value } : {};
  const outputErrors = ended?.outputErrors ?? tally?.outputErrors;
  // A pause for the cost budget is recorded as an interruption (resumable the same way) and reported as a pause.
  const budgetPause = !ended && !tree.done && interrupted ? pausing : undefined;
  const status = ended?.status ?? (tree.done ? (context.outcome ?? 'failed') : budgetPause ? 'paused' : interrupted ? 'interrupted' : 'paused');
  const waiting = status === 'paused' ? statusOfState(statusState) : undefined;
  const waitingFor = budgetPause ? 'budget' : tree.pendingApprovals().length > 0 || waiting === 'awaiting-approval' ? 'approval' : waiting === 'awaiting-confirmation' ? 'confirmation' : waiting === 'idle' ? 'message' : undefined;
  return {
    sessionId: stream,
    ...(status === 'paused' && waitingFor ? { waitingFor } : {}),
    // A session rebuilt after it ended (resume of an ended session) has no `session.ended` from this process: its
    // final state says how it ended.
    status,
    ...(budgetPause ? { reason: pauseReasonOf(budgetPause, stream), stop: budgetPause } : ended?.reason ?? context.endReason ? { reason: ended?.reason ?? context.endReason ?? undefined } : {}),
    head,
    ...answer,
    ...(outputErrors ? { outputErrors } : {}),
    // The machine counts a turn when it requests the model call (its turn budget); a call still unanswered (the
    // session was stopped, cancelled or paused before the model replied) is a turn that never ran.
    // The whole tree's: the turns and tool calls of delegated children count as the session's (their tokens already do).
    usage: ((usage) => (context.awaitingModel === null ? usage : { ...usage, turns: Math.max(0, usage.turns - 1) }))({
      ...context.usage,
      turns: context.usage.turns + (context.tally?.delegated?.turns ?? 0),
      toolCalls: context.usage.toolCalls + (context.tally?.delegated?.toolCalls ?? 0),
    }),
  };
}
