/**
 * The session machine's contract: the constants its rules name, its input, context and output, the events it takes
 * and the params of the actions the host interprets. Types and constants only; the statechart is session.machine.ts.
 */
import type { ApprovalRequested } from '../models/permission.records.js';
import type { ChildUsage, DelegationAccepted, DelegationRole, FailureClass } from '../models/delegation.records.js';
import type { ReportFormat } from '../models/report-contracts.js';
import type { JoinOutput } from './delegation/join-output.js';
import type { ApprovalOutcome } from './permission.machine.js';
import type { TurnOutput } from './turn.machine.js';
import type { Budgets, Usage } from '../models/budgets.js';
import type { EffectFailed, EffectKind } from '../models/effect.records.js';
import type { ModelFailed, ModelResponded } from '../models/model.records.js';
import type { BudgetsRaised, SessionCancelled, SessionCaveat, SessionOutcome, UserMessage } from '../models/session.records.js';
import type { ToolSettled } from '../models/tool.records.js';
import type { FailClosedFinding } from '../models/fail-closed.js';
import type { McpStarted } from '../models/mcp.records.js';
import type { BudgetPool } from './delegation/budget-share.js';

/** The tools whose results must carry shell boundary evidence. */
export const shellTools: readonly string[] = ['bash'];

/** The claims completing a session requires of the last tool turn's CallSpec. */
export const completionClaims: readonly string[] = ['session.complete'];

/** The tool a child agent ends with; its schema is the child's output contract. */
export const reportTool = 'submit_report';

/** How many times `stop` hooks may send a finished session back to the model before it ends anyway (no loop). */
export const maxStopContinuations = 3;

/**
 * How many replies in a row cut at the output token limit (`max_tokens`, no tool calls) the model is asked to
 * continue before the session ends anyway, with a `reply_cut` caveat.
 */
export const maxCutContinuations = 3;

/** Broken reports a child may correct: one correction round, then the child fails with a contract failure. */
export const maxReportCorrections = 1;

/**
 * Final answers that do not validate against the session's output schema which are returned to the model with the
 * validation errors; one more invalid answer fails the session (`OUTPUT_INVALID`).
 */
export const maxOutputCorrections = 3;

/** What the session remembers of its latest tool turn: completing the session rests on it. */
export interface TurnVerdict {
  turnId: string;
  path: string;
  status: TurnOutput['status'] | 'open';
  classes: string[];
  /** The fail-closed findings the turn ended with (what a completion over a blocked turn leaves standing). */
  findings: FailClosedFinding[];
  /** The join digest once the turn closed its join (the evidence a child's report is merged on). */
  joinDigest?: string | null;
}

/** A tool call waiting for a person's answer; re-requested as a fresh `executeTool` effect once answered. */
export interface PendingApproval {
  callId: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** An effect the session has requested and not yet seen settle. */
export interface OutstandingEffect {
  kind: EffectKind;
  callId?: string;
  /** For a `delegate_task` call whose plan was accepted: the delegation actor whose join is the call's result. */
  delegation?: string;
  /** What that delegation's children were given (their shares of this agent's budgets), held until the join. */
  reserved?: BudgetPool;
}

/** What makes a session a child agent: its task, role and output contract, and the delegation it reports to. */
export interface ChildInput {
  taskId: string;
  role: DelegationRole;
  /** The delegation actor's path (the child's parent in the actor tree). */
  delegation: string;
  /** The parent's `delegate_task` call id. */
  callId: string;
  format: ReportFormat;
  /** Session time (ms since creation) when the child started: its wall-time budget counts from here. */
  startedAtMs: number;
  /** 1 for a child of the root agent. */
  depth: number;
}

/** What a session actor hands its parent when it ends (a child agent's result; the root's is read by the host). */
export interface AgentOutput {
  kind: 'agent';
  path: string;
  status: SessionOutcome;
  reason?: string;
  /** A child's valid report, present only when it completed. */
  report?: Record<string, unknown>;
  /** The MutationReady turn the report was submitted in. */
  evidence?: { turnId: string; joinDigest: string };
  failureClass?: FailureClass;
  usage: ChildUsage;
}

export interface SessionInput {
  path: string;
  sessionId: string;
  budgets: Budgets;
  /** The active instruction-linked mutation policy; a turn's CallSpec must match it for MutationReady. */
  mutationPolicyDigest?: string;
  /** Present for a child agent (spawned by a delegation actor). */
  child?: ChildInput;
  /**
   * A conversation (an editor's chat, `rein acp`): a final answer ends the prompt's turn, not the session, which waits
   * in `idle` for the next message.
   */
  conversation?: boolean;
}

export interface SessionContext {
  path: string;
  sessionId: string;
  budgets: Budgets;
  usage: Usage;
  /** Counter behind deterministic effect ids (`<path>:e<n>`): ids are never random. */
  nextEffect: number;
  outstanding: Record<string, OutstandingEffect>;
  /** The effect id of the model call the session is waiting for, if any. */
  awaitingModel: string | null;
  /** Calls waiting for approval, by approval id (= the permission actor's path and id). */
  approvals: Record<string, PendingApproval>;
  /** The active mutation policy digest (from `session.created`, then `policy.changed`). */
  mutationPolicyDigest: string;
  /** The latest tool turn's typestate verdict; `null` before the first tool turn. */
  lastTurn: TurnVerdict | null;
  endReason: string | null;
  child: ChildInput | null;
  /** Session time the wall-time budget counts from (0 for the root agent). */
  startedAtMs: number;
  /** A child's accepted report (from a `submit_report` call that settled ok), waiting for its turn to reach MutationReady. */
  report: { callId: string; value: Record<string, unknown> } | null;
  failureClass: FailureClass | null;
  /** The final state reached (for the output). */
  outcome: SessionOutcome | null;
  /** What the completion leaves open (a cut reply, an objecting stop hook): carried by `session.ended`. */
  caveats: SessionCaveat[];
  /** The session's small counters and flags, kept in one field (see `SessionTally`). */
  tally: SessionTally;
}

/**
 * Counters and flags of a session that only the machine reads, grouped so the context stays at 18 top-level fields.
 * XState copies the whole context with `Object.assign({}, context, update)` on every `assign`; V8 turns an object
 * built that way into a slow dictionary-mode object at 20 properties, which made each assign ~10× dearer and every
 * context read a hash lookup (measured: ~5% of an in-memory round trip's CPU). tests/machines/session.machine.paths.test.ts
 * keeps the count below that limit.
 */
export interface SessionTally {
  /** Broken reports so far (invalid `submit_report` calls, replies without a report). */
  contractFailures: number;
  /** Final replies a `stop` hook sent back to the model so far (bounded by `maxStopContinuations`). */
  stopContinuations: number;
  /** Replies in a row cut at the output token limit with no tool calls (the model continues while below `maxCutContinuations`). */
  cutReplies: number;
  /** A user message arrived while the model call in flight was already asked: the model has not seen it yet. */
  unseenMessage: boolean;
  /**
   * Why the tool-call budget ends the session: a reply proposed more calls than the budget had left, those past it
   * were refused unrun, and the session ends `budget-exhausted` once their turn has joined.
   */
  toolCallBudgetSpent: string | null;
  /**
   * The turns and tool calls this agent's delegated children (and theirs) spent, charged at each join: they count
   * against this agent's budgets like its own (their tokens are added to `usage`). Kept apart from `usage`, whose
   * turn count numbers this agent's own turns.
   */
  delegated: { turns: number; toolCalls: number };
  /** Final answers the output schema refused so far (bounded by `maxOutputCorrections`); absent: none. */
  outputCorrections?: number;
  /** The validated final answer, carried by `session.ended` as its `output`. */
  answer?: { value: unknown };
  /** The validation errors of the last refused answer, when they failed the session. */
  outputErrors?: string[];
  /** The session is a conversation (see `SessionInput.conversation`). */
  conversation?: boolean;
}

/** The event a permission actor's parent receives when it reaches a final state. */
export type ApprovalDoneEvent = { type: `xstate.done.actor.${string}`; output: ApprovalOutcome };

/** The event a turn actor's parent receives when the turn reaches `mutationReady` or `blocked`. */
export type TurnDoneEvent = { type: `xstate.done.actor.${string}`; output: TurnOutput };

/** The event a delegation actor's parent receives when the join is decided. */
export type DelegationDoneEvent = { type: `xstate.done.actor.${string}`; output: JoinOutput };

/** Machine events are input records: `{ type, ...data }`. */
export type SessionEvent =
  | ({ type: 'user.message' } & UserMessage)
  | ({ type: 'model.responded' } & ModelResponded)
  | ({ type: 'model.failed' } & ModelFailed)
  | ({ type: 'tool.settled' } & ToolSettled)
  | ({ type: 'effect.failed' } & EffectFailed)
  | ({ type: 'approval.requested' } & ApprovalRequested)
  | ({ type: 'delegation.accepted' } & DelegationAccepted)
  | ApprovalDoneEvent
  | TurnDoneEvent
  | DelegationDoneEvent
  | { type: 'turn.results-ready'; turnId: string; rows: Array<{ callId: string; errorCode?: string }> }
  | { type: 'policy.changed'; mutationPolicyDigest: string }
  | ({ type: 'mcp.started' } & McpStarted)
  | ({ type: 'session.cancelled' } & SessionCancelled)
  | ({ type: 'session.budgets-raised' } & BudgetsRaised);

/** Params of the `requestEffect` action: the host turns each into an `effect.requested` record. */
export interface RequestEffectParams {
  effectId: string;
  kind: EffectKind;
  args: Record<string, unknown>;
}

/** What a child tells its delegation actor about its approvals (the delegation records the escalation). */
export type DelegationNotice =
  | { type: 'child.escalated'; approvalId: string; tool: string; summary: string; reason: string }
  | { type: 'child.resumed'; approvalId: string };

/** Params of the `emitRecord` action: the host turns each into a derived record of that type. */
export interface EmitRecordParams {
  type: string;
  data: Record<string, unknown>;
}
