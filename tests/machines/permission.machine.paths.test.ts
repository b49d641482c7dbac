import { describe, expect, it } from 'vitest';
import type { SnapshotFrom } from 'xstate';
import { createActor } from 'xstate';
import { checkMachine } from 'rein/testing';
import { permissionMachine, type PermissionEvent } from '../../machines/permission.machine.js';

type Snapshot = SnapshotFrom<typeof permissionMachine>;

const approvalId = 'root/approval-3';
const input = {
  path: approvalId,
  question: { effectId: 'root:e3', callId: 'root:e1.0', approvalId, tool: 'bash', target: 'npm test', summary: 'bash npm test', risk: 'execute', reason: 'commands need approval', suggestedRule: 'bash:npm test' },
};

/** Every reply a person (or a confused host) can send, including ones for another approval and empty feedback. */
const events = (): PermissionEvent[] => [
  { type: 'approval.replied', approvalId, decision: 'allow-once' },
  { type: 'approval.replied', approvalId, decision: 'allow-session' },
  { type: 'approval.replied', approvalId, decision: 'allow-session', rule: 'bash:npm *' },
  { type: 'approval.replied', approvalId, decision: 'deny' },
  { type: 'approval.replied', approvalId, decision: 'deny', feedback: 'run the unit tests only' },
  { type: 'approval.replied', approvalId, decision: 'deny', feedback: '   ' },
  { type: 'approval.replied', approvalId: 'root/approval-4', decision: 'allow-once' },
];

const isFinal = (snapshot: Snapshot) => snapshot.status === 'done';

describe('permission.machine model check', () => {
  const result = checkMachine({
    machine: permissionMachine,
    input,
    events,
    stateInvariants: {
      'waiting has no answer yet': (snapshot) => !snapshot.matches('awaitingReply') || snapshot.context.outcome === null,
      'a final state carries the answer for this approval': (snapshot) => !isFinal(snapshot) || snapshot.context.outcome?.approvalId === approvalId,
      'allowed once means allow-once': (snapshot) => !snapshot.matches('allowedOnce') || snapshot.context.outcome?.decision === 'allow-once',
      'allowed for session grants a rule': (snapshot) => !snapshot.matches('allowedForSession') || (snapshot.context.outcome?.decision === 'allow-session' && typeof snapshot.context.outcome.rule === 'string'),
      'denied with feedback keeps the feedback': (snapshot) => !snapshot.matches('deniedWithFeedback') || (snapshot.context.outcome?.decision === 'deny' && Boolean(snapshot.context.outcome.feedback?.trim())),
      'plain denied has no feedback worth reading': (snapshot) => !snapshot.matches('denied') || (snapshot.context.outcome?.decision === 'deny' && !snapshot.context.outcome.feedback?.trim()),
    },
    transitionInvariants: {
      'a reply for another approval changes nothing': ({ from, to, event }) => event.approvalId === approvalId || JSON.stringify(from.value) === JSON.stringify(to.value),
      'a final state stays final': ({ from, to }) => !isFinal(from) || JSON.stringify(from.value) === JSON.stringify(to.value),
    },
  });

  it('holds every invariant on every reachable state and edge', () => {
    expect(result.violations).toEqual([]);
  });

  it('reaches the waiting state and every answer', () => {
    expect(result.stateValues).toEqual(['"allowedForSession"', '"allowedOnce"', '"awaitingReply"', '"denied"', '"deniedWithFeedback"'].sort());
  });

  it('hands its parent the answer as output', () => {
    const actor = createActor(permissionMachine, { input }).start();
    actor.send({ type: 'approval.replied', approvalId, decision: 'allow-session' });
    expect(actor.getSnapshot().output).toEqual({ approvalId, decision: 'allow-session', rule: 'bash:npm test' });
    const denied = createActor(permissionMachine, { input }).start();
    denied.send({ type: 'approval.replied', approvalId, decision: 'deny', feedback: 'not on main' });
    expect(denied.getSnapshot().output).toEqual({ approvalId, decision: 'deny', feedback: 'not on main' });
  });
});
