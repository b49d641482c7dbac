import type { SnapshotFrom } from 'xstate';
import { sessionMachine, type SessionEvent } from '../../machines/session.machine.js';
import { approvalIdOf } from '../../models/permission.records.js';
import { baseCallSpec } from './turn.fixtures.js';

/*
 * The session machine's event alphabet per state (split from session.machine.paths.test.ts to be shared with
 * tests/host/compiled-machine.prop.test.ts, which drives the compiled form and xstate with it).
 */

export type Snapshot = SnapshotFrom<typeof sessionMachine>;

export const budgets = { maxTurns: 3, maxToolCalls: 3, maxTokens: 1_000, maxWallTimeMs: 1_000 };
export const input = { path: 'root', sessionId: 's-test', budgets, mutationPolicyDigest: 'b3:policy' };

export const call = (index: number) => ({ callId: `c${index}`, name: 'read', arguments: { path: 'a.txt' } });
export const usage = { inputTokens: 10, outputTokens: 10 };

/** Every event a session can meet in a state, including adversarial ones: stale ids, unknown ids, budget overruns. */
export const events = (snapshot: Snapshot): SessionEvent[] => {
  const { awaitingModel, outstanding } = snapshot.context;
  const list: SessionEvent[] = [
    { type: 'user.message', text: 'go' },
    { type: 'session.cancelled', reason: 'stop' },
    { type: 'tool.settled', effectId: 'root:e999', callId: 'c9', name: 'read', status: 'ok', observation: 'stray', elapsedMs: 1 },
    { type: 'model.responded', effectId: 'root:e999', turn: 1, text: 'stale', toolCalls: [], stopReason: 'end_turn', usage, elapsedMs: 1 },
  ];
  if (awaitingModel) {
    const reply = { effectId: awaitingModel, turn: snapshot.context.usage.turns, text: 'ok', stopReason: 'end_turn' as const, usage, elapsedMs: 1, callSpec: baseCallSpec({ callId: awaitingModel }) };
    list.push(
      { type: 'model.responded', ...reply, toolCalls: [] },
      { type: 'model.responded', ...reply, toolCalls: [call(1)], stopReason: 'tool_use' },
      { type: 'model.responded', ...reply, toolCalls: [call(1), call(2)], stopReason: 'tool_use' },
      { type: 'model.responded', ...reply, toolCalls: [], usage: { inputTokens: 900, outputTokens: 900 } },
      { type: 'model.responded', ...reply, toolCalls: [], stopReason: 'pause_turn' },
      { type: 'model.failed', effectId: awaitingModel, turn: 1, error: { code: 'overloaded', message: 'busy', retryable: true }, elapsedMs: 1 },
      // Resume settles an in-doubt model call this way, unrun, once the wall time is spent.
      { type: 'model.failed', effectId: awaitingModel, turn: 1, error: { code: 'cancelled', message: 'not run again', retryable: false }, elapsedMs: 5_000 },
      { type: 'effect.failed', effectId: awaitingModel, error: { code: 'X', message: 'boom' }, elapsedMs: 1 },
    );
  }
  for (const [effectId, effect] of Object.entries(outstanding)) {
    if (effect.kind !== 'executeTool') continue;
    const callId = effect.callId ?? 'c?';
    const ask = { effectId, callId, tool: 'write', arguments: { path: 'a.txt' }, summary: 'write a.txt', risk: 'write', reason: 'edits need approval', suggestedRule: 'write', elapsedMs: 3 };
    list.push(
      { type: 'tool.settled', effectId, callId, name: 'read', status: 'ok', observation: 'fine', elapsedMs: 2 },
      { type: 'tool.settled', effectId, callId, name: 'read', status: 'error', errorCode: 'NotFound', observation: 'NotFound: x', elapsedMs: 5_000 },
    );
    // A call may ask again after an answer (new effect id each time); bound the effect counter so the graph is finite.
    if (snapshot.context.nextEffect <= 8) list.push({ type: 'approval.requested', ...ask, approvalId: approvalIdOf('root', effectId) }, { type: 'approval.requested', ...ask, approvalId: 'root/approval-999' });
  }
  for (const approvalId of Object.keys(snapshot.context.approvals)) {
    list.push(
      { type: `xstate.done.actor.${approvalId}`, output: { approvalId, decision: 'allow-once' } },
      { type: `xstate.done.actor.${approvalId}`, output: { approvalId, decision: 'deny', feedback: 'no' } },
    );
  }
  list.push({ type: 'xstate.done.actor.root/approval-999', output: { approvalId: 'root/approval-999', decision: 'allow-once' } });
  const turn = snapshot.context.lastTurn;
  if (turn?.status === 'open') {
    // The turn actor's side of the exchange, in every outcome it can report (the turn machine is checked on its own).
    const done = (status: 'mutation-ready' | 'blocked', joinClosed: boolean, classes: string[]) =>
      ({ type: `xstate.done.actor.${turn.path}`, output: { turnId: turn.turnId, status, joinClosed, joinDigest: joinClosed ? 'b3:join' : null, findings: classes.map((name) => ({ class: name, detail: name })) } }) as SessionEvent;
    list.push(
      { type: 'turn.results-ready', turnId: turn.turnId, rows: [{ callId: 'c1' }, { callId: 'c2', errorCode: 'Cancelled' }] },
      { type: 'turn.results-ready', turnId: 'root:e999', rows: [] },
      done('mutation-ready', true, []),
      done('blocked', true, ['tool.unknown_or_disallowed']),
      done('blocked', false, ['tool.result_missing']),
      { type: 'xstate.done.actor.root/turn-99', output: { turnId: 'root:e999', status: 'mutation-ready', joinClosed: true, joinDigest: 'b3:join', findings: [] } } as SessionEvent,
    );
  }
  if (snapshot.context.mutationPolicyDigest === 'b3:policy') list.push({ type: 'policy.changed', mutationPolicyDigest: 'b3:other-policy' });
  return list;
};
