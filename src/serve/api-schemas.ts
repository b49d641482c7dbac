import * as z from 'zod';
import { ReinRecordSchema } from '../../models/records.js';
import { StateValue } from '../../models/actor.records.js';
import { ContextProjected } from '../../models/context.records.js';
import { ApprovalDecision, ApprovalRequested } from '../../models/permission.records.js';
import type { TraceOutcome, TraceFinding } from '../trace/trace-types.js';
import { sessionStatuses, type SessionSummary } from '../session/session-catalog.js';
import { STREAM_NAME_PATTERN } from '../../models/envelope-rules.js';
import type { MachineGraph } from '../cli/machine-graph.js';
import { lazySchema } from '../../models/lazy-schema.js';

/*
 * The shapes the HTTP API speaks, as zod schemas: requests are parsed with them, and `/openapi.json` is generated from
 * them (`z.toJSONSchema`). Records are rein's own `ReinRecordSchema`; the other shapes mirror the library's types, and
 * the assertions at the end of this file fail to compile when one drifts from the type it mirrors.
 */

/** Every error answer: `{ error: { code, message } }` with a stable code (docs/errors.md: *Error codes*). */
export const ErrorBody = lazySchema(() => z.object({ error: z.object({ code: z.string(), message: z.string() }) }), { id: 'ErrorBody' });
export type ErrorBody = z.infer<typeof ErrorBody>;

export const TraceOutcomeSchema = lazySchema(() => z.enum(['succeeded', 'unverified', 'failed', 'cancelled', 'budget-exhausted', 'forked', 'interrupted', 'awaiting-approval', 'awaiting-confirmation', 'idle', 'running']), { id: 'TraceOutcome' });

/** One line of the session list: `rein sessions`' summary plus the trace outcome, turns, tokens and times. */
export const SessionRow = lazySchema(() => z
  .object({
    id: z.string(),
    status: z.string(),
    head: z.number().int(),
    createdAt: z.number(),
    task: z.string(),
    forkedFrom: z.object({ stream: z.string(), seq: z.number().int() }).optional(),
    damaged: z.object({ code: z.string(), message: z.string() }).optional(),
    /** Why a queued session no worker could start is `failed` (or, still `queued`, why its last try did not start). */
    reason: z.string().optional(),
    /** The trace outcome (a completed run whose last test failed is `failed`, one with no passing test after its last change `unverified`). */
    outcome: TraceOutcomeSchema.optional(),
    turns: z.number().int(),
    toolCalls: z.number().int(),
    tokens: z.object({ input: z.number().int(), output: z.number().int(), estimated: z.boolean() }),
    /** The session's cost in US dollars at the server's prices (children included); absent when a model has no price (`costUnpriced`). */
    costUsd: z.number().optional(),
    /** The models with no price, when there are: the cost is unknown (never 0). */
    costUnpriced: z.array(z.string()).optional(),
    /** Cache reads as a share of input tokens (0..1); absent before the first model reply. */
    cacheHitRate: z.number().optional(),
    /** The tokens the whole tree spent (children included) and the model they are priced at, as the listing read them. */
    usage: z
      .object({
        provider: z.string().optional(),
        model: z.string().optional(),
        calls: z.number().int(),
        inputTokens: z.number(),
        outputTokens: z.number(),
        cacheReadTokens: z.number(),
        cacheWriteTokens: z.number(),
      })
      .optional(),
    updatedAt: z.number(),
    durationMs: z.number(),
    /** Running in this server's process now (its actions need no resume). */
    runningHere: z.boolean(),
    /** False while the server is still reading the session for the first time: the counts are partial and the outcome is left out. */
    indexed: z.boolean(),
  }), { id: 'SessionRow' });
export type SessionRow = z.infer<typeof SessionRow>;

export const SessionList = lazySchema(() => z
  .object({
    sessions: z.array(SessionRow),
    /** With `limit`: the id to pass as `after` for the next page, when there is one. */
    next: z.string().optional(),
    /** Whether this server takes actions (start, send, approve, resume, fork…); false when it is read-only. */
    actions: z.boolean(),
  }), { id: 'SessionList' });
export type SessionList = z.infer<typeof SessionList>;

export const PendingApproval = lazySchema(() => ApprovalRequested.omit({ elapsedMs: true })
  .extend({ actor: z.string().optional(), seq: z.number().int().optional() }), { id: 'PendingApproval' });
export type PendingApproval = z.infer<typeof PendingApproval>;

/** One session: its row, what it waits for, and the sessions forked from it. */
/** One agent's share of a session's cost: its model calls, dollars (absent when unpriced), input and cache reads. */
export const AgentCostRow = lazySchema(() => z
  .object({
    actor: z.string(),
    calls: z.number().int(),
    costUsd: z.number().optional(),
    inputTokens: z.number().int(),
    cacheReadTokens: z.number().int(),
    cacheHitRate: z.number().optional(),
  }), { id: 'AgentCost' });
export type AgentCostRow = z.infer<typeof AgentCostRow>;

export const SessionDetail = lazySchema(() => SessionRow.extend({
  approvals: z.array(PendingApproval),
  /** In-doubt effects a resume left waiting for a person's confirmation to rerun them. */
  confirmations: z.array(z.object({ effectId: z.string() })),
  forks: z.array(z.string()),
  /** Each agent's share of the cost (`root`, and its children by path), in the order they first answered. */
  agents: z.array(AgentCostRow),
  /** Whether this server takes actions; false when it is read-only. */
  actions: z.boolean(),
}), { id: 'SessionDetail' });
export type SessionDetail = z.infer<typeof SessionDetail>;

export const RecordPage = lazySchema(() => z.object({ head: z.number().int(), records: z.array(ReinRecordSchema) }), { id: 'RecordPage' });
export type RecordPage = z.infer<typeof RecordPage>;

/** One row of a session's timeline (see src/serve/timeline.ts). */
export const TimelineStep = lazySchema(() => z
  .object({
    kind: z.enum(['user', 'turn', 'call', 'approval', 'child', 'join', 'note', 'verification', 'end']),
    actor: z.string(),
    seq: z.number().int(),
    to: z.number().int(),
    label: z.string(),
    status: z.enum(['ok', 'error', 'denied', 'waiting', 'running', 'info']),
    turn: z.number().int().optional(),
    callId: z.string().optional(),
    tool: z.string().optional(),
    findings: z.array(z.string()).optional(),
    /** The seq to fork at to redo this step (just before the input that settled it: the reply, the result, the answer). */
    forkAt: z.number().int().optional(),
  }), { id: 'TimelineStep' });
export type TimelineStep = z.infer<typeof TimelineStep>;

export const Timeline = lazySchema(() => z
  .object({
    head: z.number().int(),
    total: z.number().int(),
    /** Steps before this index are final: a live client refetches from here. */
    stable: z.number().int(),
    offset: z.number().int(),
    steps: z.array(TimelineStep),
    /** Each actor that has steps, in order of its first one (the lanes). */
    lanes: z.array(z.string()),
    /** False while the server is still reading a long session for the first time: `head` is how far it got; ask again. */
    complete: z.boolean(),
    /** The log's head when the request came (a live client follows from after it). */
    logHead: z.number().int(),
  }), { id: 'Timeline' });
export type Timeline = z.infer<typeof Timeline>;

export const TraceFindingSchema = lazySchema(() => z
  .object({
    type: z.string(),
    category: z.string(),
    boundary: z.string(),
    claim: z.string(),
    evidence: z.array(z.string()),
    confidence: z.enum(['low', 'medium', 'high']),
    suggestedFixArea: z.string(),
    unknowns: z.array(z.string()),
    seq: z.number().int(),
    fact: z.string().optional(),
  }), { id: 'TraceFinding' });

/** The trace report (`rein trace --json`): outcome, findings (primary first), and what the analyzer could not know. */
export const TraceBody = lazySchema(() => z
  .object({
    sessionId: z.string(),
    task: z.string(),
    outcome: TraceOutcomeSchema,
    claimedSuccess: z.boolean(),
    ended: z.object({ seq: z.number().int(), id: z.string(), status: z.string(), reason: z.string().optional() }).optional(),
    finalMessage: z.object({ seq: z.number().int(), id: z.string(), text: z.string() }).optional(),
    findings: z.array(TraceFindingSchema),
    primary: TraceFindingSchema.optional(),
    /** How many linked turns the report has (the timeline lists them). */
    turns: z.number().int(),
    unknowns: z.array(z.string()),
    evalCandidate: z.boolean(),
  }), { id: 'TraceReport' });
export type TraceBody = z.infer<typeof TraceBody>;

const ModelInput = lazySchema(() => z.object({ messages: z.array(z.object({ role: z.string() }).loose()), tools: z.array(z.object({ name: z.string() }).loose()) }));

/** What the model of `actor` saw at `turn`: the ledger (parts with tokens, what was dropped or summarised and why) and the exact input. */
export const ContextBody = lazySchema(() => z
  .object({
    actor: z.string(),
    turn: z.number().int(),
    seq: z.number().int().optional(),
    reconstructed: z.boolean(),
    ledger: ContextProjected.omit({ input: true }).partial({ effectId: true }).extend({ input: z.string().optional() }).loose(),
    input: ModelInput,
    /** The same actor's previous turn's input, for the diff. */
    previous: z.object({ turn: z.number().int(), input: ModelInput }).optional(),
  }), { id: 'ContextBody' });
export type ContextBody = z.infer<typeof ContextBody>;

export const MemoryBody = lazySchema(() => z
  .object({
    candidates: z.array(z.object({ candidateId: z.string(), status: z.string(), text: z.string().optional(), kind: z.string().optional() })),
    records: z.array(z.object({ recordId: z.string(), status: z.string(), text: z.string().optional() })),
    orphans: z.number().int(),
  }), { id: 'MemoryBody' });
export type MemoryBody = z.infer<typeof MemoryBody>;

export const MachineGraphSchema = lazySchema(() => z
  .object({
    machine: z.string(),
    states: z.array(z.object({ id: z.string(), type: z.string(), initial: z.string().optional() })),
    transitions: z.array(z.object({ source: z.string(), event: z.string(), guard: z.string().optional(), targets: z.array(z.string()) })),
  }), { id: 'MachineGraph' });
export const MachineList = lazySchema(() => z.object({ machines: z.array(MachineGraphSchema) }), { id: 'MachineList' });
export type MachineList = z.infer<typeof MachineList>;

/** The state of every actor as of a seq (for the machine view's highlight). */
export const ActorStates = lazySchema(() => z.object({ seq: z.number().int(), actors: z.record(z.string(), StateValue) }), { id: 'ActorStates' });
export type ActorStates = z.infer<typeof ActorStates>;

const CompareSide = lazySchema(() => z.object({
  sessionId: z.string(),
  status: z.string(),
  outcome: TraceOutcomeSchema,
  turns: z.number().int(),
  toolCalls: z.number().int(),
  tokens: z.object({ input: z.number().int(), output: z.number().int() }),
  durationMs: z.number(),
  verifications: z.array(z.object({ seq: z.number().int(), name: z.string(), status: z.string(), command: z.string().optional() })),
  filesChanged: z.array(z.string()),
  changes: z.array(z.object({ path: z.string(), kind: z.enum(['created', 'modified', 'deleted', 'renamed', 'mode', 'type']), from: z.string().optional() })).optional(),
  tree: z.string().optional(),
}));

/** Two sessions side by side (see `compareSessions`). */
export const CompareBody = lazySchema(() => z
  .object({
    a: CompareSide,
    b: CompareSide,
    alignment: z.enum(['fork', 'turns']),
    forkSeq: z.number().int().optional(),
    firstDifference: z
      .object({ turn: z.number().int(), a: z.object({ seq: z.number().int(), text: z.string() }).optional(), b: z.object({ seq: z.number().int(), text: z.string() }).optional() })
      .optional(),
    sameTree: z.boolean().optional(),
  }), { id: 'CompareBody' });
export type CompareBody = z.infer<typeof CompareBody>;

export const StartBody = lazySchema(() => z.object({ task: z.string().trim().min(1) }), { id: 'StartBody' });
export const MessageBody = lazySchema(() => z.object({ text: z.string().trim().min(1) }), { id: 'MessageBody' });
export const ApprovalBody = lazySchema(() => z.object({ decision: ApprovalDecision, feedback: z.string().max(2000).optional() }), { id: 'ApprovalBody' });
export const ConfirmBody = lazySchema(() => z.object({ decision: z.enum(['rerun', 'decline']) }), { id: 'ConfirmBody' });
export const ForkBody = lazySchema(() => z.object({ at: z.number().int().min(1) }), { id: 'ForkBody' });
export const ReasonBody = lazySchema(() => z.object({ reason: z.string().max(500).optional() }), { id: 'ReasonBody' });

/** What an action did: the session it concerns and its status afterwards (`paused` while it runs on). */
export const ActionResult = lazySchema(() => z.object({ sessionId: z.string(), status: z.string() }), { id: 'ActionResult' });
export type ActionResult = z.infer<typeof ActionResult>;

/** A replay verdict: verified, or the first differing seq. */
export const ReplayBody = lazySchema(() => z
  .object({
    sessionId: z.string(),
    verified: z.boolean(),
    records: z.number().int().optional(),
    inputs: z.number().int().optional(),
    regenerated: z.number().int().optional(),
    divergence: z.object({ seq: z.number().int(), message: z.string() }).optional(),
  }), { id: 'ReplayBody' });
export type ReplayBody = z.infer<typeof ReplayBody>;

export const SessionId = lazySchema(() => z.object({ id: z.string().min(1).max(128) }));
export const ApprovalPath = lazySchema(() => SessionId.extend({ approvalId: z.string().min(1) }));
export const EffectPath = lazySchema(() => SessionId.extend({ effectId: z.string().min(1) }));
const seqParam = lazySchema(() => z.coerce.number().int().min(1));
/** `GET /api/sessions`: `status` (one `rein sessions` lists), a page of `limit` sessions (1..10,000) `after` a session id. */
export const ListQuery = lazySchema(() => z.object({
  status: z.enum(sessionStatuses).optional(),
  q: z.string().optional(),
  limit: z
    .string()
    .regex(/^[1-9][0-9]{0,4}$/, 'must be a whole number from 1 to 10000')
    .transform(Number)
    .refine((limit) => limit <= 10_000, 'must be a whole number from 1 to 10000')
    .optional(),
  after: z.string().regex(STREAM_NAME_PATTERN, 'must be a session id (the last one of the previous page)').optional(),
}));
export const RecordsQuery = lazySchema(() => z.object({ from: seqParam.optional(), to: seqParam.optional(), limit: z.coerce.number().int().min(1).max(5000).optional() }));
export const EventsQuery = lazySchema(() => z.object({ from: seqParam.optional() }));
export const TimelineQuery = lazySchema(() => z.object({ offset: z.coerce.number().int().min(0).optional(), limit: z.coerce.number().int().min(1).max(100_000).optional() }));
export const ContextQuery = lazySchema(() => z.object({ actor: z.string().optional(), turn: z.coerce.number().int().min(1).optional() }));
export const StatesQuery = lazySchema(() => z.object({ seq: seqParam }));
export const BlobQuery = lazySchema(() => z.object({ ref: z.string().startsWith('artifact://') }));
export const CompareQuery = lazySchema(() => z.object({ a: z.string().min(1), b: z.string().min(1) }));

// The mirrors stay in step with the library's types: each line fails to compile when they drift apart.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const mirrors: [Same<z.infer<typeof TraceOutcomeSchema>, TraceOutcome>, Same<TraceFinding['confidence'], z.infer<typeof TraceFindingSchema>['confidence']>] = [true, true];
const rowFromSummary = (summary: SessionSummary): Pick<SessionRow, keyof SessionSummary> => summary;
const graphFits = (graph: MachineGraph): z.infer<typeof MachineGraphSchema> => graph;
void mirrors;
void rowFromSummary;
void graphFits;
