import type { SessionCaveat, UnresolvedFindings } from '../../models/session.records.js';
import type { CommandExecution, Truncation } from '../../models/tool.records.js';
import type { Denial, ShellClass } from '../../models/permission.records.js';
import type { PersistentList } from './persistent-list.js';
import type { SessionStatusState } from '../host/session-status.js';
import type { ViewState } from './projection.js';

/** Where a record sits in the log: enough to cite it as evidence. */
export interface TraceRef {
  seq: number;
  id: string;
}

export interface TraceContext extends TraceRef {
  attempt: number;
  input: string;
  estimatedTokens: number;
  phase: string;
  excluded: number;
  compacted: number;
}

export interface TraceVerification extends TraceRef {
  actor: string;
  name: string;
  status: 'passed' | 'failed' | 'inconclusive';
  summary: string;
  callId?: string;
  command?: string;
  artifact?: string;
  /** The run's exit code (`null`: a signal ended it); absent on a record that carries no exit (a host's own). */
  exitCode?: number | null;
  durationMs?: number;
}

/** One child agent of a delegation, linked to its parent's call by `corr` and to its own turns by its actor path. */
export interface TraceChild {
  taskId: string;
  role: string;
  actor: string;
  contextMode: string;
  tools: readonly string[];
  started: TraceRef;
  status: 'running' | 'awaiting-approval' | 'completed' | 'failed' | 'cancelled';
  escalations: number;
  ended?: TraceRef;
  reportStatus?: string;
  failureClass?: string;
  reason?: string;
}

/** What a `delegate_task` call became: its validation, the delegation actor, its children and the join. */
export interface TraceDelegation {
  validated?: TraceRef & { ok: boolean; failureClass?: string; reason?: string };
  accepted?: TraceRef;
  path?: string;
  children: readonly TraceChild[];
  joined?: TraceRef & { policy: string; outcome: string; conflicts: number };
}

/** One tool call, linked by its `corr` (the call id): request → permission → start → result → verification. */
export interface TraceAction {
  callId: string;
  effectId: string;
  name: string;
  arguments: Record<string, unknown>;
  requested: TraceRef & { cause?: string };
  /** The permission decision; `classes`: what the shell classifier found in a command (`read-only`, `write`, …). */
  permission?: TraceRef & { decision: string; reason?: string; classes?: readonly ShellClass[] };
  /**
   * A call whose permission asked a person: the `ask` decision, and the request re-issued with the answer (a new
   * effect for the same call, which then has its own permission decision). One action, not two rows.
   */
  approval?: { asked?: TraceRef & { decision: string; reason?: string }; answered: TraceRef & { approvalId: string; decision: string } };
  /** Hook and guardrail decisions about this call, in log order (`preToolUse`, `guardrail.input`, `guardrail.output`, `postToolUse`). */
  hooks?: ReadonlyArray<TraceRef & { point: string; decision: string; reason?: string; by?: string }>;
  started?: TraceRef;
  settled?: TraceRef & { status: 'ok' | 'error'; errorCode?: string; observation: string; truncated?: Truncation; execution?: CommandExecution; denial?: Denial };
  verification?: TraceVerification;
  failed?: TraceRef & { code: string; message: string };
  delegation?: TraceDelegation;
}

/** One attempt of a model call: which provider took it, how it ended and what came next (retry, fallback…). */
export interface TraceAttempt extends TraceRef {
  attempt: number;
  provider: string;
  model?: string;
  outcome: 'ok' | 'error';
  errorCode?: string;
  decision: string;
  fallbackTo?: string;
}

/** One model call of one actor, linked by `cause`: the context it got, its attempts, its reply or failure, and its tool calls. */
export interface TraceTurn {
  actor: string;
  turn: number;
  effectId: string;
  requested: TraceRef;
  contexts: TraceContext[];
  attempts: TraceAttempt[];
  /** The reply; `continuation`: a `stop` hook answered this final reply with "continue" (its reason, and which hook). */
  response?: TraceRef & { text: string; toolCalls: number; stopReason: string; continuation?: { reason: string; by?: string } };
  failure?: TraceRef & { type: 'model.failed' | 'effect.failed'; code: string; message: string };
  actions: TraceAction[];
}

/** A record worth a line in the timeline that belongs to no turn (resume, interruption, cancellation, fork). */
export interface TraceNote extends TraceRef {
  type: string;
  actor: string;
  text: string;
  /** `command.ended`: the call whose background command ended. */
  callId?: string;
}

/** The trace view: the session's facts linked into turns and tool calls (DESIGN's responsibility chain). */
export interface TraceView extends ViewState {
  sessionId?: string;
  task?: string;
  workspace?: string;
  tools: readonly string[];
  users: PersistentList<TraceRef & { actor: string; text: string }> | undefined;
  /** Closed turns, newest first; each actor's current turn is in `open`. */
  closed: PersistentList<TraceTurn> | undefined;
  open: Readonly<Record<string, TraceTurn>>;
  verifications: PersistentList<TraceVerification> | undefined;
  notes: PersistentList<TraceNote> | undefined;
  ended?: TraceRef & { status: string; reason?: string; unresolved?: UnresolvedFindings; caveats?: SessionCaveat[]; output?: unknown; outputErrors?: string[] };
  /** Records whose `cause` / `corr` named nothing the view knew: a broken link in the chain. */
  unlinked: number;
  /** What the log says about the session's status (as `rein sessions` lists it). */
  status: SessionStatusState;
}
