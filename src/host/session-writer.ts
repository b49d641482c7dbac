/*
 * The session's writer: the one queue every batch of records goes through to the store, in seq order. It assigns seqs,
 * merges the batches that waited while the previous append was written into one atomic append, publishes each
 * record on `issued$` once handed to it (for the session's own folds, see `foldIssued`), on `written$` once written
 * and on `records$` once the store's commit covers it (acknowledged), and tracks the stream's status for stores that
 * index it. Split from session-host.ts (issue 31).
 */
import type { Subject } from 'rxjs';
import type { RecordDraft, RecordEnvelope } from '../../models/envelope.js';
import type { AppendOptions, EventStore } from '../../stores/event-store.js';
import { ReinError } from './host-errors.js';
import { publish, tapsOf, type Taps } from './record-taps.js';
import { statusOfState, statusStateOf, type SessionStatusState } from './session-status.js';
import { emptyUsage, usageOf, type UsageSummary } from '../projections/usage-summary.js';

/** A batch without blobs (shared: never changed). */
const noBlobs: readonly Uint8Array[] = [];

/** A batch handed to the writer and not yet written. */
interface PendingWrite {
  drafts: RecordDraft[];
  sync: boolean | undefined;
  blobs: readonly Uint8Array[] | undefined;
  resolve: (stored: RecordEnvelope[]) => void;
  reject: (error: unknown) => void;
}

/** A batch handed to the writer: its records' envelopes (seqs assigned) and the promise of their write. */
export interface IssuedBatch {
  /** The envelopes the store will return for the batch (`stream`, the seqs assigned in call order, the draft's fields). */
  envelopes: RecordEnvelope[];
  /** Resolves with the stored records once written, after they went to `written$`; rejects when the write failed. */
  written: Promise<RecordEnvelope[]>;
}

/** The envelope of a draft at `seq`, with its fields in schema order, as the stores build it (`toEnvelope`). */
const issuedEnvelopeOf = (stream: string, seq: number, draft: RecordDraft): RecordEnvelope => {
  const envelope = { stream, seq, id: draft.id, type: draft.type, v: draft.v, at: draft.at, actor: draft.actor } as RecordEnvelope;
  if (draft.cause !== undefined) envelope.cause = draft.cause;
  if (draft.corr !== undefined) envelope.corr = draft.corr;
  if (draft.data !== undefined) envelope.data = draft.data;
  return envelope;
};

/** At most this many records go into one store append when the writer merges the batches waiting for it. */
const maxMergedRecords = 1_024;

/** What the writer needs of the session it writes for: whether it broke, how to break it, and a nudge to its quiet waiters. */
export interface SessionWriterHost {
  broken(): Error | undefined;
  fail(error: unknown): void;
  wakeQuietWaiters(): void;
}

export interface SessionWriterOptions {
  store: EventStore;
  stream: string;
  /** The seq of the stream's last record. */
  head: number;
  /** The `at` of the stream's last record: no record this writer appends is stamped earlier. */
  lastAt: number;
  /** What the stream so far says about the session's status. */
  statusState: SessionStatusState;
  /** The session's token usage so far (all agents): written with every batch as the stream's summary (listings price it). */
  usage?: UsageSummary;
  /** Where each record goes once acknowledged (the host's `records$`). */
  records$: Subject<RecordEnvelope>;
  /** Where each record goes once written (the host's `written$`). */
  written$: Subject<RecordEnvelope>;
  /**
   * Where each record goes once handed to the writer, before it is written (the host's `issued$`): at the latest
   * when its batch (or an earlier one) is written, earlier when someone calls `foldIssued` (the host does, to prepare
   * the effects a step asked for while its batch is written). Only the session's own folds read it.
   */
  issued$?: Subject<RecordEnvelope>;
  host: SessionWriterHost;
}

/** One store append at a time, in seq order, for one session's stream: its only writer. */
export class SessionWriter {
  /** The seq of the last record written (the store confirmed the append). */
  head: number;
  /** The seq of the last record handed to the writer (written, being written, or waiting for the writer). */
  issuedHead: number;
  /** The seq of the last record acknowledged (the store's commit covers it). */
  acknowledgedHead: number;
  /** The `at` of the last record appended: record timestamps never go backwards within a stream. */
  lastAt: number;
  /** What the stream written so far says about the session's status (for stores that index it). */
  statusState: SessionStatusState;
  /** The session's running token usage (all agents), written with every batch as the stream's summary. */
  usage: UsageSummary;
  private readonly store: EventStore;
  private readonly stream: string;
  private readonly records$: Subject<RecordEnvelope>;
  private readonly written$: Subject<RecordEnvelope>;
  private readonly issued$: Subject<RecordEnvelope> | undefined;
  /** The session's own observers of `records$` and `issued$` (record-taps.ts): called first, without rxjs. */
  private readonly recordTaps: Taps<RecordEnvelope>;
  private readonly issuedTaps: Taps<RecordEnvelope> | undefined;
  /** Records handed to the writer and not yet published on `issued$`, in seq order. */
  private unfolded: RecordEnvelope[] = [];
  private readonly host: SessionWriterHost;
  /** Batches applied to the tree and waiting for the writer (one store append at a time, in seq order). */
  private pendingWrites: PendingWrite[] = [];
  private writing = false;
  /** Written records not yet acknowledged (the store's `commit` has not covered them), in seq order. */
  private unacknowledged: RecordEnvelope[] = [];
  private acknowledgedWaiters: Array<{ seq: number; resolve: () => void; reject: (error: unknown) => void }> = [];

  constructor(options: SessionWriterOptions) {
    this.store = options.store;
    this.stream = options.stream;
    this.head = options.head;
    this.issuedHead = options.head;
    this.acknowledgedHead = options.head;
    this.lastAt = options.lastAt;
    this.statusState = options.statusState;
    this.usage = options.usage ?? emptyUsage;
    this.records$ = options.records$;
    this.written$ = options.written$;
    this.issued$ = options.issued$;
    this.recordTaps = tapsOf(options.records$);
    this.issuedTaps = options.issued$ && tapsOf(options.issued$);
    this.host = options.host;
  }

  /**
   * Hand a batch to the writer; resolves with its stored records once written, after they went to `written$`.
   * `sync: true` forces an fsync (a mutating tool's intent) and acknowledges at once. Otherwise, with a store that
   * group-commits (`commit`), the batch is written without sync and acknowledged — `records$`, and the step's promise —
   * once the store's commit covers it, so the effects it requested can start meanwhile; a store without `commit`
   * decides by its mode and acknowledges when the append resolves. Seqs are assigned now, in call order.
   */
  append(drafts: RecordDraft[], sync: boolean | undefined, blobs?: readonly Uint8Array[]): Promise<RecordEnvelope[]> {
    return this.issue(drafts, sync, blobs).written;
  }

  /**
   * `append`, also giving the batch's envelopes as the store will return them (seqs assigned now): what the host reads
   * a step's effect intents from while the batch is being written.
   */
  issue(drafts: RecordDraft[], sync: boolean | undefined, blobs?: readonly Uint8Array[]): IssuedBatch {
    if (drafts.length === 0) return { envelopes: [], written: Promise.resolve([]) };
    // A fact stamped when its tool decided something may be appended after a later batch (parallel tools), and a
    // wall clock may step back: `at` is clamped so the stream's timestamps never go backwards.
    for (const draft of drafts) {
      if (draft.at < this.lastAt) draft.at = this.lastAt;
      else this.lastAt = draft.at;
    }
    const envelopes: RecordEnvelope[] = new Array(drafts.length);
    for (let index = 0; index < drafts.length; index++) envelopes[index] = issuedEnvelopeOf(this.stream, this.issuedHead + index + 1, drafts[index]!);
    this.issuedHead += drafts.length;
    if (this.issued$) for (const envelope of envelopes) this.unfolded.push(envelope);
    const written = new Promise<RecordEnvelope[]>((resolve, reject) => {
      this.pendingWrites.push({ drafts, sync, blobs, resolve, reject });
      this.pumpWrites();
    });
    return { envelopes, written };
  }

  /**
   * Publish on `issued$` every record handed to the writer so far, in seq order. The writer does it when a batch is
   * written (before `written$`); the host does it earlier, once the batch's write is under way, to prepare the
   * effects its step asked for against views that hold it. A record folded this way may still fail to be written:
   * the session then breaks, and nothing prepared from it is used.
   */
  foldIssued(): void {
    if (this.unfolded.length === 0) return;
    const records = this.unfolded;
    this.unfolded = [];
    for (const record of records) publish(this.issued$!, this.issuedTaps!, record);
  }

  /**
   * The writer: one store append at a time, in seq order. The batches that waited meanwhile (steps applied while the
   * previous append was written) go into one append — an atomic batch holding several whole steps, so a crash still
   * leaves a prefix of steps — as long as they ask for the same durability.
   */
  private pumpWrites(): void {
    if (this.writing || this.pendingWrites.length === 0) return;
    if (this.broken) {
      const failed = this.pendingWrites.splice(0);
      for (const pending of failed) pending.reject(this.broken);
      return;
    }
    const first = this.pendingWrites[0]!;
    let count = 1;
    let records = first.drafts.length;
    while (count < this.pendingWrites.length) {
      const next = this.pendingWrites[count]!;
      if (next.sync !== first.sync || records + next.drafts.length > maxMergedRecords) break;
      records += next.drafts.length;
      count++;
    }
    const group = this.pendingWrites.splice(0, count);
    const drafts = group.length === 1 ? first.drafts : group.flatMap((pending) => pending.drafts);
    const blobs = group.length === 1 ? (first.blobs ?? noBlobs) : group.flatMap((pending) => pending.blobs ?? []);
    const sync = first.sync;
    const grouped = sync !== true && this.store.commit !== undefined;
    // The status the whole stream leaves after this batch (a batch alone cannot tell: a resume's confirmation wait
    // outlives the transitions written after it). Folded over the merged batch: the same as folding its steps in turn.
    const statusState = statusStateOf(drafts, this.statusState);
    const status = statusOfState(statusState);
    // The running usage goes with the batch (one small put): a listing prices the session without reading its log.
    // Frozen when it changes (a new object: the running usage is never changed in place), so a store may keep it as it is
    // rather than serialise it with every append (the memory store: when a listing first reads it).
    const usage = usageOf(drafts, this.usage);
    if (usage !== this.usage) freezeUsage(usage);
    this.writing = true;
    const options: AppendOptions = { expectedSeq: this.head, summary: usage };
    if (grouped) options.sync = false;
    else if (sync !== undefined) options.sync = sync;
    if (blobs.length > 0) options.blobs = blobs;
    if (status !== undefined) options.status = status;
    this.store
      .append(this.stream, drafts, options)
      .then(
        (stored) => {
          this.writing = false;
          if (stored.length !== drafts.length) throw new ReinError('MACHINE_ERROR', `the store wrote ${stored.length} of ${drafts.length} records`);
          this.statusState = statusState;
          this.usage = usage;
          this.head = stored[stored.length - 1]!.seq;
          this.foldIssued();
          for (const record of stored) {
            this.unacknowledged.push(record);
            if (this.written$.observed) this.written$.next(record);
          }
          const head = this.head;
          if (!grouped) this.acknowledge(head);
          else {
            this.store.commit!(this.stream, head).then(
              () => this.acknowledge(head),
              (error: unknown) => this.fail(error),
            );
          }
          if (group.length === 1) first.resolve(stored);
          else {
            let offset = 0;
            for (const pending of group) {
              pending.resolve(stored.slice(offset, offset + pending.drafts.length));
              offset += pending.drafts.length;
            }
          }
          this.pumpWrites();
        },
      )
      .catch((error: unknown) => {
        this.writing = false;
        this.fail(error);
        for (const pending of group) pending.reject(error);
        this.pumpWrites();
      });
  }

  /** Everything up to `seq` is committed: publish it on `records$` (in seq order) and release who waits for it. */
  private acknowledge(seq: number): void {
    if (seq <= this.acknowledgedHead) return;
    this.acknowledgedHead = seq;
    let count = 0;
    while (count < this.unacknowledged.length && this.unacknowledged[count]!.seq <= seq) count++;
    const published = this.unacknowledged.splice(0, count);
    for (const record of published) publish(this.records$, this.recordTaps, record);
    const waiters = this.acknowledgedWaiters;
    this.acknowledgedWaiters = [];
    for (const waiter of waiters) {
      if (waiter.seq <= seq) waiter.resolve();
      else this.acknowledgedWaiters.push(waiter);
    }
    this.wakeQuietWaiters();
  }

  /** Resolves once the records up to `seq` are acknowledged; rejects when the session broke first. */
  acknowledged(seq: number): Promise<void> {
    if (seq <= this.acknowledgedHead) return Promise.resolve();
    if (this.broken) return Promise.reject(this.broken);
    return new Promise((resolve, reject) => this.acknowledgedWaiters.push({ seq, resolve, reject }));
  }

  /** The session broke: whoever waits for an acknowledgement gets its error. */
  rejectWaiters(error: Error): void {
    const waiters = this.acknowledgedWaiters;
    this.acknowledgedWaiters = [];
    for (const waiter of waiters) waiter.reject(error);
  }

  private get broken(): Error | undefined {
    return this.host.broken();
  }

  private fail(error: unknown): void {
    this.host.fail(error);
  }

  private wakeQuietWaiters(): void {
    this.host.wakeQuietWaiters();
  }
}

/** Freeze a running usage summary and its per-model list (entries carried over from the last one are frozen already). */
const freezeUsage = (usage: UsageSummary): void => {
  if (usage.models !== undefined) {
    for (const entry of usage.models) Object.freeze(entry);
    Object.freeze(usage.models);
  }
  Object.freeze(usage);
};
