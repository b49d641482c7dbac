import { toArray } from '../projections/persistent-list.js';
import type { TraceAction, TraceTurn, TraceView } from '../projections/trace.view.js';
import type { TraceFinding } from '../trace/trace-types.js';
import type { TimelineStep } from './api-schemas.js';
import { callLabel as callSummary, oneLine } from '../trace/call-label.js';

/** Fork just before an input record (a reply, a result, an answer): the seq before it ends a step. */
const forkBefore = (seq: number | undefined): { forkAt?: number } => (seq !== undefined && seq > 1 ? { forkAt: seq - 1 } : {});

const seqsOf = (turn: TraceTurn): number[] => [
  turn.requested.seq,
  ...turn.contexts.map((context) => context.seq),
  ...turn.attempts.map((attempt) => attempt.seq),
  ...(turn.response ? [turn.response.seq] : []),
  ...(turn.failure ? [turn.failure.seq] : []),
  ...turn.actions.flatMap(actionSeqs),
];

function actionSeqs(action: TraceAction): number[] {
  return [action.requested.seq, action.permission?.seq, action.approval?.asked?.seq, action.approval?.answered.seq, action.started?.seq, action.settled?.seq, action.verification?.seq, action.failed?.seq, action.delegation?.joined?.seq].filter((seq): seq is number => seq !== undefined);
}

const actionStatus = (action: TraceAction): TimelineStep['status'] => {
  if (action.settled?.denial || action.permission?.decision === 'deny') return 'denied';
  if (action.failed || action.settled?.status === 'error') return 'error';
  if (action.settled) return 'ok';
  if (action.permission?.decision === 'ask' && !action.approval) return 'waiting';
  return 'running';
};

const turnRows = (turn: TraceTurn, open: boolean): TimelineStep[] => {
  const seqs = seqsOf(turn);
  const text = turn.response?.text || (turn.failure ? `${turn.failure.code}: ${turn.failure.message}` : open ? 'waiting for the model…' : '');
  const rows: TimelineStep[] = [
    {
      kind: 'turn',
      actor: turn.actor,
      seq: turn.requested.seq,
      to: Math.max(...seqs),
      label: oneLine(`turn ${turn.turn}${text ? `: ${text}` : ''}`),
      status: turn.failure ? 'error' : turn.response ? 'ok' : 'running',
      turn: turn.turn,
      ...forkBefore(turn.response?.seq ?? turn.failure?.seq),
    },
  ];
  for (const action of turn.actions) {
    const status = actionStatus(action);
    if (action.approval || status === 'waiting') {
      const asked = action.approval?.asked ?? action.permission;
      rows.push({
        kind: 'approval',
        actor: turn.actor,
        seq: asked?.seq ?? action.requested.seq,
        to: action.approval?.answered.seq ?? asked?.seq ?? action.requested.seq,
        label: oneLine(action.approval ? `approval ${action.approval.answered.decision}: ${callSummary(action.name, action.arguments)}` : `approval asked: ${callSummary(action.name, action.arguments)}`),
        status: action.approval ? (action.approval.answered.decision === 'deny' ? 'denied' : 'ok') : 'waiting',
        turn: turn.turn,
        callId: action.callId,
        tool: action.name,
        ...forkBefore(action.approval?.answered.seq),
      });
    }
    const seqs = actionSeqs(action);
    const exit = action.settled?.execution ? ` → exit ${String(action.settled.execution.exitCode)}` : '';
    rows.push({ kind: 'call', actor: turn.actor, seq: action.requested.seq, to: Math.max(...seqs), label: oneLine(`${callSummary(action.name, action.arguments)}${exit}`), status, turn: turn.turn, callId: action.callId, tool: action.name, ...forkBefore(action.settled?.seq) });
    for (const child of action.delegation?.children ?? []) {
      rows.push({
        kind: 'child',
        actor: child.actor,
        seq: child.started.seq,
        to: child.ended?.seq ?? child.started.seq,
        label: oneLine(`${child.role} ${child.taskId}: ${child.status}${child.reason ? ` (${child.reason})` : ''}`),
        status: child.status === 'completed' ? 'ok' : child.status === 'running' ? 'running' : child.status === 'awaiting-approval' ? 'waiting' : 'error',
        callId: action.callId,
      });
    }
    const joined = action.delegation?.joined;
    if (joined) rows.push({ kind: 'join', actor: turn.actor, seq: joined.seq, to: joined.seq, label: oneLine(`join (${joined.policy}): ${joined.outcome}${joined.conflicts ? `, ${joined.conflicts} conflicts` : ''}`), status: joined.outcome === 'satisfied' || joined.outcome === 'completed' ? 'ok' : 'info', callId: action.callId });
  }
  return rows;
};

/**
 * A session's timeline from its trace view, in log order: the user's messages, each model turn and its tool calls,
 * approvals, child agents (each in its own lane: its actor) and their joins, verifications, resumes, interrupts and
 * the end, each with the seq range it spans. `findings` (the trace report's) are attached to the step they point at.
 * `stable`: the steps before this index are final (a live client refetches from there). Pure.
 */
export const timelineOf = (view: TraceView, findings: readonly TraceFinding[] = []): { steps: TimelineStep[]; stable: number; lanes: string[] } => {
  const steps: TimelineStep[] = [];
  for (const user of toArray(view.users)) steps.push({ kind: 'user', actor: user.actor, seq: user.seq, to: user.seq, label: oneLine(user.text), status: 'info', ...forkBefore(user.seq) });
  for (const turn of toArray(view.closed)) steps.push(...turnRows(turn, false));
  const open = Object.values(view.open);
  for (const turn of open) steps.push(...turnRows(turn, true));
  for (const verification of toArray(view.verifications)) steps.push({ kind: 'verification', actor: verification.actor, seq: verification.seq, to: verification.seq, label: oneLine(`${verification.status}: ${verification.command ?? verification.name} ${verification.summary}`), status: verification.status === 'passed' ? 'ok' : verification.status === 'failed' ? 'error' : 'info', ...(verification.callId ? { callId: verification.callId } : {}) });
  for (const note of toArray(view.notes)) steps.push({ kind: 'note', actor: note.actor, seq: note.seq, to: note.seq, label: oneLine(`${note.type}: ${note.text}`), status: note.type === 'session.interrupted' || note.type === 'session.cancelled' ? 'error' : 'info', ...(note.callId ? { callId: note.callId } : {}) });
  if (view.ended) steps.push({ kind: 'end', actor: 'root', seq: view.ended.seq, to: view.ended.seq, label: oneLine(`ended ${view.ended.status}${view.ended.reason ? `: ${view.ended.reason}` : ''}`), status: view.ended.status === 'completed' ? 'ok' : 'error' });
  // A child's row spans its whole lane: from its first record (its first turn may be written before its start fact) to its last.
  const spans = new Map<string, { first: number; last: number }>();
  for (const step of steps) {
    if (step.kind === 'child') continue;
    const span = spans.get(step.actor);
    spans.set(step.actor, { first: Math.min(span?.first ?? step.seq, step.seq), last: Math.max(span?.last ?? step.to, step.to) });
  }
  for (const step of steps) {
    const span = step.kind === 'child' ? spans.get(step.actor) : undefined;
    if (!span) continue;
    step.seq = Math.min(step.seq, span.first);
    step.to = Math.max(step.to, span.last);
  }
  const order: Record<TimelineStep['kind'], number> = { user: 0, note: 1, child: 2, turn: 3, approval: 4, call: 5, join: 6, verification: 7, end: 8 };
  steps.sort((left, right) => left.seq - right.seq || order[left.kind] - order[right.kind]);
  for (const finding of findings) {
    const at = findStep(steps, finding.seq);
    if (at !== undefined) (steps[at]!.findings ??= []).push(finding.type);
  }
  // A turn still open may grow (its reply, its calls' results); one with its reply and every call settled will not —
  // a child's last turn stays open in the view after the child ended.
  const growing = open.filter((turn) => (!turn.response && !turn.failure) || turn.actions.some((action) => !action.settled && !action.failed));
  const openFrom = view.ended ? Number.POSITIVE_INFINITY : Math.min(...growing.map((turn) => turn.requested.seq), ...steps.filter((step) => step.status === 'running' || step.status === 'waiting').map((step) => step.seq));
  const stableIndex = steps.findIndex((step) => step.seq >= openFrom);
  const lanes: string[] = [];
  for (const step of steps) if (!lanes.includes(step.actor)) lanes.push(step.actor);
  return { steps, stable: stableIndex === -1 ? steps.length : stableIndex, lanes };
};

/** The index of the most specific step whose range holds `seq` (a call before its turn), else the last one before it. */
export const findStep = (steps: readonly TimelineStep[], seq: number): number | undefined => {
  let best: number | undefined;
  let bestSpan = Number.POSITIVE_INFINITY;
  let before: number | undefined;
  for (const [index, step] of steps.entries()) {
    if (step.seq <= seq) before = index;
    if (step.seq <= seq && seq <= step.to && step.to - step.seq < bestSpan) {
      best = index;
      bestSpan = step.to - step.seq;
    }
  }
  return best ?? before;
};
