import type { RecordEnvelope } from '../../models/envelope.js';
import type { ChangeSource, WorkspaceChanged } from '../../models/workspace.records.js';
import type { EventStore } from '../../stores/event-store.js';
import { ReinError } from '../host/host-errors.js';
import { readSession } from '../session/session-records.js';
import { fileChangesOf, type FileChange } from './file-change.js';
import { treeChanges } from './tree-changes.js';
import { loggedTree } from './tree-manifest.js';

/** What `diffSession` shows: every step's changes (default), one step's (`at`), one call's (`call`), or the net change. */
export interface DiffOptions {
  /** The step of this seq: the changes of the call its record settles or starts, or the change record at it. */
  at?: number;
  /** One call's changes, by effect id (`root:e4`) or call id (`root:e3.0`). */
  call?: string;
  /** The session's net change: the first captured tree against the last. */
  net?: boolean;
}

/** The changes of one change record: who made them, where, and the tree after. */
export interface StepChanges {
  seq: number;
  at: number;
  actor: string;
  source: ChangeSource;
  effectId?: string;
  callId?: string;
  tool?: string;
  /** For a rewind: the seq the workspace was restored to. */
  toSeq?: number;
  files: FileChange[];
  /** The tree's digest after these changes. */
  tree: string;
}

/** A session's workspace changes, as `rein diff` prints them. */
export interface SessionDiff {
  sessionId: string;
  /** The seq of the session's first capture (absent: it never captured, so nothing is known to have changed). */
  capturedSeq?: number;
  /** The change records selected, in log order (a file created and later deleted appears twice). */
  steps: StepChanges[];
  /** With `net`: each path whose entry differs between the first captured tree and the last. */
  net?: FileChange[];
}

const stepOf = (record: RecordEnvelope): StepChanges => {
  const data = record.data as WorkspaceChanged;
  return {
    seq: record.seq,
    at: record.at,
    actor: record.actor,
    source: data.source,
    ...(data.effectId ? { effectId: data.effectId } : {}),
    ...(data.callId ? { callId: data.callId } : {}),
    ...(data.tool ? { tool: data.tool } : {}),
    ...(data.toSeq !== undefined ? { toSeq: data.toSeq } : {}),
    files: fileChangesOf(data.changes),
    tree: data.tree,
  };
};

/** The call a record belongs to (its effect id), when it has one. */
const effectOf = (record: RecordEnvelope | undefined): string | undefined => {
  const effectId = (record?.data as { effectId?: unknown } | undefined)?.effectId;
  return typeof effectId === 'string' ? effectId : undefined;
};

/** The changes a session's log holds, selected by `options`, from its records. */
export const diffRecords = async (sessionId: string, records: readonly RecordEnvelope[], read: (ref: string) => Promise<Uint8Array>, options: DiffOptions = {}): Promise<SessionDiff> => {
  const changed = records.filter((record) => record.type === 'workspace.changed');
  const captured = records.find((record) => record.type === 'workspace.captured');
  const base = { sessionId, ...(captured ? { capturedSeq: captured.seq } : {}) };
  if (options.at !== undefined) {
    const record = records.find((candidate) => candidate.seq === options.at);
    if (!record) throw new ReinError('USAGE', `--at ${options.at}: session ${sessionId} has no record with that seq (its head is ${records[records.length - 1]?.seq ?? 0})`);
    if (record.type === 'workspace.changed') return { ...base, steps: [stepOf(record)] };
    const effectId = effectOf(record);
    return { ...base, steps: effectId === undefined ? [] : changed.filter((entry) => (entry.data as WorkspaceChanged).effectId === effectId).map(stepOf) };
  }
  if (options.call !== undefined) {
    const call = options.call;
    return { ...base, steps: changed.filter((entry) => (entry.data as WorkspaceChanged).effectId === call || (entry.data as WorkspaceChanged).callId === call).map(stepOf) };
  }
  const steps = changed.map(stepOf);
  if (!options.net) return { ...base, steps };
  if (!captured) return { ...base, steps, net: [] };
  const first = await loggedTree(records, read, captured.seq);
  const last = await loggedTree(records, read);
  return { ...base, steps, net: fileChangesOf(treeChanges(first!.tree, last!.tree)) };
};

/**
 * What a stored session changed in its workspace (read-only): every change record in log order, or one step's
 * (`at`), one call's (`call`), and with `net` the session's net change. `SESSION_NOT_FOUND` when it has no record.
 */
export const diffSession = async (store: Pick<EventStore, 'read' | 'readBlob'>, sessionId: string, options: DiffOptions = {}): Promise<SessionDiff> =>
  diffRecords(sessionId, await readSession(store, sessionId), (ref) => store.readBlob(sessionId, ref), options);
