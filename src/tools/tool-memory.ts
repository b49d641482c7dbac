import type { CandidateScope, MemoryAuthority, MemoryConfidence, MemoryKind, MemoryProposed } from '../../models/memory.records.js';

/** A scoped memory query from the `memory_read` tool. */
export interface MemoryReadRequest {
  /** Only this scope level (default: every level that applies to this session). */
  scope?: 'user' | 'workspace' | 'repo' | 'branch';
  taskType?: string;
  kinds?: readonly MemoryKind[];
  /** Default `low`: an explicit read sees weak hints too, each labelled. */
  minConfidence?: MemoryConfidence;
  /** At most this many memories (default 10). */
  limit?: number;
}

/** One memory as a tool returns it: labelled with its scope, confidence and authority. */
export interface MemoryReadItem {
  id: string;
  content: string;
  kind: MemoryKind;
  scope: string;
  confidence: MemoryConfidence;
  authority: MemoryAuthority;
  version: number;
  lastVerifiedAt?: string;
  reviewAfter?: string;
  expiresAt?: string;
}

/** What `memory_read` found, and what it left out because this session knows better. */
export interface MemoryReadResult {
  memories: MemoryReadItem[];
  suppressed: Array<{ id: string; reason: string }>;
}

/** What the model may propose with `memory_write` (confidence is never among it). */
export interface MemoryProposalRequest {
  content: string;
  kind: MemoryKind;
  scope?: CandidateScope['level'];
  /** A short topic (`test-command`, `package-manager`): the conflict key is `<level>:<key>:<topic>`. */
  topic?: string;
  /** Call ids of this session's earlier tool calls whose results support it. */
  evidence?: readonly string[];
  ttlDays?: number;
  taskType?: string;
}

/** The memory a tool call may use: scoped reads, and proposals that become candidates (never memory by themselves). */
export interface ToolMemory {
  /** Why memory cannot be read in this session (`<CODE>: <message>`, see `memory.unavailable`); undefined when it can. */
  unavailable?(): string | undefined;
  read(request: MemoryReadRequest): Promise<MemoryReadResult>;
  /**
   * Turn a proposal into a candidate (id, scope key, sources and conflict keys filled in by the runtime; confidence
   * `low`, status `pending`). It is written as `memory.proposed` with the call's result — if the call succeeds.
   */
  propose(request: MemoryProposalRequest): { ok: true; candidate: MemoryProposed } | { ok: false; message: string };
}

/** How the tool pipeline gets a call's `ToolMemory`; `record` collects the proposals to write. */
export interface ToolMemoryProvider {
  forCall(call: { actor: string; callId: string }, record: (candidate: MemoryProposed) => void): ToolMemory;
}
