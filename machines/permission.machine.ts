import { assign, setup } from 'xstate';
import type { ApprovalDecision, ApprovalReplied, ApprovalRequested } from '../models/permission.records.js';
import { lazyValue } from '../models/lazy-schema.js';

/** What the permission actor shows a person: the request as recorded in `approval.requested`. */
export type ApprovalQuestion = Omit<ApprovalRequested, 'elapsedMs' | 'arguments'>;

export interface PermissionInput {
  /** The actor path, equal to the approval id (`root/approval-3`). */
  path: string;
  question: ApprovalQuestion;
}

/** The answer the permission actor hands its parent when it reaches a final state. */
export interface ApprovalOutcome {
  approvalId: string;
  decision: ApprovalDecision;
  feedback?: string;
  rule?: string;
}

export interface PermissionContext {
  path: string;
  question: ApprovalQuestion;
  outcome: ApprovalOutcome | null;
}

export type PermissionEvent = { type: 'approval.replied' } & ApprovalReplied;

const isFor = ({ context, event }: { context: PermissionContext; event: PermissionEvent }) => event.approvalId === context.question.approvalId;

/**
 * One question to a person (DESIGN §4): ask → awaiting reply → allow once · allow for session · deny · deny with
 * feedback. Spawned by the session machine when a call needs approval; its state is persisted with the session, so
 * a restart keeps the pending question. The final state's output tells the parent what to do with the call.
 */
export const permissionMachine = lazyValue(() => setup({
  types: {
    context: {} as PermissionContext,
    events: {} as PermissionEvent,
    input: {} as PermissionInput,
    output: {} as ApprovalOutcome,
  },
  actions: {
    noteReply: assign(({ context, event }) => ({
      outcome: {
        approvalId: context.question.approvalId,
        decision: event.decision,
        ...(event.feedback ? { feedback: event.feedback } : {}),
        ...(event.decision === 'allow-session' ? { rule: event.rule ?? context.question.suggestedRule ?? context.question.tool } : {}),
      },
    })),
  },
  guards: {
    isAllowOnce: ({ context, event }) => isFor({ context, event }) && event.decision === 'allow-once',
    isAllowSession: ({ context, event }) => isFor({ context, event }) && event.decision === 'allow-session',
    isDenyWithFeedback: ({ context, event }) => isFor({ context, event }) && event.decision === 'deny' && Boolean(event.feedback?.trim()),
    isDeny: ({ context, event }) => isFor({ context, event }) && event.decision === 'deny',
  },
}).createMachine({
  id: 'permission',
  context: ({ input }) => ({ path: input.path, question: input.question, outcome: null }),
  initial: 'awaitingReply',
  states: {
    awaitingReply: {
      on: {
        'approval.replied': [
          { guard: 'isAllowOnce', target: 'allowedOnce', actions: 'noteReply' },
          { guard: 'isAllowSession', target: 'allowedForSession', actions: 'noteReply' },
          { guard: 'isDenyWithFeedback', target: 'deniedWithFeedback', actions: 'noteReply' },
          { guard: 'isDeny', target: 'denied', actions: 'noteReply' },
        ],
      },
    },
    allowedOnce: { type: 'final' },
    allowedForSession: { type: 'final' },
    denied: { type: 'final' },
    deniedWithFeedback: { type: 'final' },
  },
  output: ({ context }) => context.outcome ?? { approvalId: context.question.approvalId, decision: 'deny' },
}));

export type PermissionMachine = typeof permissionMachine;
