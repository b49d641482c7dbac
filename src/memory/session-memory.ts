import { randomBytes } from 'node:crypto';
import type { Observable } from 'rxjs';
import type { DelegationJoined } from '../../models/delegation.records.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { MemoryProposed } from '../../models/memory.records.js';
import type { ModelResponded } from '../../models/model.records.js';
import type { ToolSettled } from '../../models/tool.records.js';
import type { FactDraft } from '../../models/envelope.js';
import { valuesOf } from '../projections/persistent-map.js';
import { memoryProjection, type MemoryView } from '../projections/memory.view.js';
import { reducerOf } from '../projections/projection.js';
import { foldEntries } from '../host/step-record.js';

/** The entries `observe` reads (the candidate ledger's own `memory.*` records are folded whole by the memory view). */
const observedTypes = new Set(['memory.unavailable', 'verification.recorded', 'model.responded', 'tool.settled', 'delegation.joined']);
const observedType = (type: string): boolean => observedTypes.has(type);
/** The entries live extraction reads: the root's end, verifications and user messages (`extractCandidates`). */
const liveTypes = new Set(['session.ended', 'verification.recorded', 'user.message']);
const liveType = (type: string): boolean => liveTypes.has(type);
import { normalizeContent, sharesKey } from './governance-policy.js';
import { extractCandidates } from './candidate-extractor.js';
import type { GovernanceLog } from './governance-log.js';
import type { MemoryScopeKeys } from './memory-scope.js';
import { readMemory } from './memory-retrieval.js';
import { governSession } from './session-governance.js';
import { proposalOf } from './proposal.js';
import type { ToolMemory, ToolMemoryProvider } from '../tools/tool-memory.js';
import { listen } from '../host/record-taps.js';

/** The memory of one harness: its governance stream, the scope its sessions work in, and the promotion policy. */
export interface MemoryServices {
  governance: GovernanceLog;
  scope: MemoryScopeKeys;
  /** Promote approved candidates when a session ends (default true); off, they wait for a person. */
  autoPromote: boolean;
  /** Re-read the governance stream before a model call at most this often (ms). */
  refreshIntervalMs: number;
}

/** What the session memory needs from the session's host: its records as they become durable, and fact appends. */
export interface MemoryHost {
  records$: Observable<RecordEnvelope>;
  recordFacts(facts: readonly FactDraft[], options?: { actor?: string; cause?: string }): Promise<RecordEnvelope[]>;
}

/** A fresh candidate id naming its session: `<sessionId>:c-<8 hex>`. */
export const newCandidateId = (sessionId: string): string => `${sessionId}:c-${randomBytes(4).toString('hex')}`;

/** The session a candidate id names (`<sessionId>:c-…`), if it has that form. */
export const sessionOfCandidate = (candidateId: string): string | undefined => /^(.+):c-[0-9a-f]+$/.exec(candidateId)?.[1];

/**
 * How many of a session's latest tool calls a memory proposal can name as its call or evidence (their record ids are
 * kept in memory). Older calls are out of any model's context by then; a proposal naming one counts no evidence.
 */
const rememberedCalls = 4_096;

/**
 * One session's memory: its candidate ledger (folded from its own `memory.proposed` records), the workspace's
 * governance view, live extraction of candidates from the session's evidence, the memory tools' access, and the
 * governance pass when the session ends. Candidates are facts in the session stream; only the pass (or a person)
 * writes the governance stream.
 */
export class SessionMemory implements ToolMemoryProvider {
  readonly sessionId: string;
  readonly #services: MemoryServices;
  readonly #clock: () => number;
  readonly #reduce = reducerOf(memoryProjection);
  #session: MemoryView = memoryProjection.initial();
  readonly #calls = new Map<string, { modelRecordId: string; settledRecordId?: string }>();
  #lastRefresh = Number.NEGATIVE_INFINITY;
  #pending: Promise<unknown> = Promise.resolve();
  #outstanding = 0;
  #host: MemoryHost | undefined;
  #lastError: unknown;
  #unavailable: { code: string; message: string } | undefined;
  /** A run of a command failed in this session: the end-of-session pass checks the store records it may contradict. */
  #sawFailedRun = false;

  readonly #readRecords: () => Promise<RecordEnvelope[]>;

  /** `readRecords` reads the session's whole log (once, when it ends: the gate needs its turn evidence). */
  constructor(options: { sessionId: string; services: MemoryServices; clock: () => number; readRecords: () => Promise<RecordEnvelope[]> }) {
    this.sessionId = options.sessionId;
    this.#services = options.services;
    this.#clock = options.clock;
    this.#readRecords = options.readRecords;
  }

  /** This session's candidate ledger and the governance view as last read. */
  views(): { session: MemoryView; governance: MemoryView } {
    return { session: this.#session, governance: this.#services.governance.view };
  }

  /** The governance log this session reads and writes through. */
  get governance(): GovernanceLog {
    return this.#services.governance;
  }

  /** The last error of the background work (extraction writes, the end-of-session pass), if any. */
  get lastError(): unknown {
    return this.#lastError;
  }

  /** Why this session runs without memory (its `memory.unavailable` fact), if it does. */
  get unavailable(): { code: string; message: string } | undefined {
    return this.#unavailable;
  }

  /**
   * From now on this session runs without memory (the governance stream could not be read): the view stays as last
   * read, nothing reads or writes the stream again, `memory_read` reports it. The caller records `memory.unavailable`.
   */
  markUnavailable(reason: { code: string; message: string }): void {
    this.#unavailable ??= reason;
  }

  /** Fold one durable record of the session (stored or live, in seq order). */
  observe(stored: RecordEnvelope): void {
    this.#session = this.#reduce(this.#session, stored);
    // Only the entries it reads: a step record's other derived entries are not even built.
    foldEntries(undefined, stored, (_, record) => void this.#observeEntry(record), observedType);
  }

  #observeEntry(record: RecordEnvelope): void {
    if (record.type === 'memory.unavailable') this.markUnavailable(record.data as { code: string; message: string });
    if (record.type === 'verification.recorded' && (record.data as { status?: unknown; command?: unknown }).status === 'failed' && (record.data as { command?: unknown }).command) this.#sawFailedRun = true;
    if (record.type === 'model.responded') {
      for (const call of (record.data as ModelResponded).toolCalls) {
        this.#calls.set(`${record.actor}\u0000${call.callId}`, { modelRecordId: record.id });
        // The oldest goes first: memory per step stays flat however long the session runs.
        if (this.#calls.size > rememberedCalls) this.#calls.delete(this.#calls.keys().next().value!);
      }
    } else if (record.type === 'tool.settled') {
      const entry = this.#calls.get(`${record.actor}\u0000${(record.data as ToolSettled).callId}`);
      if (entry) entry.settledRecordId = record.id;
    } else if (record.type === 'delegation.joined') {
      // A delegate_task call's result is its join (written by the delegation actor on behalf of the calling agent).
      const joined = record.data as DelegationJoined;
      const entry = this.#calls.get(`${joined.parent}\u0000${joined.callId}`);
      if (entry) entry.settledRecordId = record.id;
    }
  }

  /** Start writing: extract candidates from live records, and govern the session's candidates when it ends. */
  attach(host: MemoryHost): void {
    this.#host = host;
    listen(host.records$, (record) => {
      foldEntries(undefined, record, (_, entry) => void this.#onLive(entry), liveType);
    });
  }

  /** Re-read the governance stream when the last read is older than the refresh interval (or `force`). */
  async refresh(force = false): Promise<MemoryView> {
    if (this.#unavailable) return this.#services.governance.view;
    const now = this.#clock();
    if (!force && now - this.#lastRefresh < this.#services.refreshIntervalMs) return this.#services.governance.view;
    this.#lastRefresh = now;
    return this.#services.governance.refresh();
  }

  /** True while extraction writes or the end-of-session pass are in flight. */
  get busy(): boolean {
    return this.#outstanding > 0;
  }

  /** Resolves once the background work started so far is done (it never rejects; see `lastError`). */
  settled(): Promise<void> {
    return this.#pending.then(() => undefined);
  }

  forCall(call: { actor: string; callId: string }, record: (candidate: MemoryProposed) => void): ToolMemory {
    return {
      unavailable: () => (this.#unavailable ? `${this.#unavailable.code}: ${this.#unavailable.message}` : undefined),
      read: async (request) => {
        await this.refresh(true);
        return readMemory({ governance: this.#services.governance.view, session: this.#session, scope: this.#services.scope, request, now: this.#clock() });
      },
      propose: (request) => {
        const proposed = proposalOf({ request, sessionId: this.sessionId, scope: this.#services.scope, now: this.#clock(), newCandidateId: () => newCandidateId(this.sessionId), call: this.#calls.get(`${call.actor}\u0000${call.callId}`), evidence: (callId) => this.#calls.get(`${call.actor}\u0000${callId}`)?.settledRecordId });
        if (proposed.ok) record(proposed.candidate);
        return proposed;
      },
    };
  }

  #known(content: string, conflictKeys: readonly string[]): boolean {
    const normalized = normalizeContent(content);
    return valuesOf(this.#session.candidates).some((candidate) => normalizeContent(candidate.content) === normalized && (conflictKeys.length === 0 || sharesKey(candidate.conflictKeys, conflictKeys)));
  }

  #background(work: () => Promise<unknown>): void {
    this.#outstanding += 1;
    this.#pending = this.#pending.then(work).catch((error: unknown) => {
      this.#lastError = error;
    }).finally(() => {
      this.#outstanding -= 1;
    });
  }

  #onLive(record: RecordEnvelope): void {
    const host = this.#host;
    if (!host) return;
    if (record.type === 'session.ended' && !record.actor.includes('/')) {
      this.#background(() => this.#governOnEnd());
      return;
    }
    const proposals = extractCandidates(record, {
      sessionId: this.sessionId,
      scope: this.#services.scope,
      newCandidateId: () => newCandidateId(this.sessionId),
      known: (content, keys) => this.#known(content, keys),
    });
    if (proposals.length === 0) return;
    // Enqueued now (synchronously), so the host is not quiet before the candidates are durable.
    const written = host.recordFacts(proposals.map((candidate): FactDraft => ({ type: 'memory.proposed', data: candidate, ...(record.corr ? { corr: record.corr } : {}) })), { actor: record.actor, cause: record.id });
    this.#background(() => written);
  }

  /**
   * Govern the candidates of a session that already ended (resumed after a crash cut its end-of-session pass
   * short): the pass is idempotent, so candidates the governance stream knows are skipped.
   */
  catchUp(): void {
    this.#background(() => this.#governOnEnd());
  }

  async #governOnEnd(): Promise<void> {
    // Without memory the candidates stay in this session's log (a resume after the stream is repaired governs them).
    // A session with no candidate still governs when a run of a command failed: it may contradict a stored record.
    if ((this.#session.candidates.size === 0 && !this.#sawFailedRun) || this.#unavailable) return;
    const records = await this.#readRecords();
    const now = this.#clock();
    await this.#services.governance.transact(
      (view) => governSession({ sessionId: this.sessionId, records, view, repoKey: this.#services.scope.repo, now, autoPromote: this.#services.autoPromote }),
      { corr: this.sessionId },
    );
    this.#lastRefresh = now;
  }
}
