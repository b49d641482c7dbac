import type { RecordEnvelope } from '../../models/envelope.js';
import type { FileWritten } from '../../models/tool.records.js';
import type { EventStore } from '../../stores/event-store.js';
import { upcastRecords } from '../../stores/upcasters.js';
import { sessionStatusOf } from '../host/session-status.js';
import { toArray } from '../projections/persistent-list.js';
import { rebuildTraceView } from '../projections/rebuild.js';
import type { TraceTurn } from '../projections/trace.view.js';
import { traceOutcomeOf } from '../trace/trace-analyzer.js';
import type { TraceOutcome } from '../trace/trace-types.js';
import { turnsOf } from '../trace/trace-evidence.js';
import { callLabel as callSummary } from '../trace/call-label.js';
import { readSession } from './session-records.js';
import { fileChangesOf, type ChangeKind } from '../changes/file-change.js';
import { treeChanges } from '../changes/tree-changes.js';
import { loggedTree } from '../changes/tree-manifest.js';
import type { WorkspaceChanged } from '../../models/workspace.records.js';
import { spanMs, spanOf } from './session-span.js';

/** One side of a comparison: how the session ended as the trace judges it, and what it cost and changed. */
export interface ComparedSession {
  sessionId: string;
  status: string;
  outcome: TraceOutcome;
  turns: number;
  toolCalls: number;
  tokens: { input: number; output: number };
  durationMs: number;
  verifications: Array<{ seq: number; name: string; status: string; command?: string }>;
  /**
   * Paths the session changed in its workspace, sorted: the net change its recorded workspace changes make (after the
   * fork point when the two are aligned at one), whatever made them — or, for a session that recorded none (made
   * before the capture existed), the paths its file tools wrote (`file.written`).
   */
  filesChanged: string[];
  /** The same net change with how each path changed (absent for a session that recorded no workspace change). */
  changes?: Array<{ path: string; kind: ChangeKind; from?: string }>;
  /** The workspace tree's digest at the session's last record (absent: it never captured its workspace). */
  tree?: string;
}

/** Two sessions side by side, aligned at the fork point when one is a fork of the other, else turn by turn. */
export interface SessionComparison {
  a: ComparedSession;
  b: ComparedSession;
  alignment: 'fork' | 'turns';
  /** The seq the fork copied up to: both sessions are the same through it. */
  forkSeq?: number;
  /** The first root turn (after the fork point) whose reply or calls differ, with each side's text; absent when none does. */
  firstDifference?: { turn: number; a?: { seq: number; text: string }; b?: { seq: number; text: string } };
  /** Whether both sessions left the workspace tree the same (absent unless both captured it). */
  sameTree?: boolean;
}

const sideOf = (sessionId: string, records: readonly RecordEnvelope[]): { side: ComparedSession; turns: TraceTurn[] } => {
  const view = rebuildTraceView(records);
  const tokens = { input: 0, output: 0 };
  let toolCalls = 0;
  let turns = 0;
  const files = new Set<string>();
  for (const record of records) {
    if (record.type === 'model.responded') {
      const usage = (record.data as { usage?: { inputTokens?: number; outputTokens?: number } }).usage;
      tokens.input += usage?.inputTokens ?? 0;
      tokens.output += usage?.outputTokens ?? 0;
      turns += 1;
    } else if (record.type === 'tool.settled') toolCalls += 1;
    else if (record.type === 'file.written') files.add((record.data as FileWritten).path);
  }
  const verifications = toArray(view.verifications)
    .map((verification) => ({ seq: verification.seq, name: verification.name, status: verification.status, ...(verification.command ? { command: verification.command } : {}) }))
    .sort((left, right) => left.seq - right.seq);
  return {
    side: { sessionId, status: sessionStatusOf(records) ?? 'active', outcome: traceOutcomeOf(view), turns, toolCalls, tokens, durationMs: spanMs(spanOf(records)), verifications, filesChanged: [...files].sort() },
    turns: turnsOf(view)
      .filter((turn) => turn.actor === 'root')
      .sort((left, right) => left.requested.seq - right.requested.seq),
  };
};

/** What a turn did, as compared: its reply and each call it made. */
const turnText = (turn: TraceTurn): string => [turn.response?.text ?? (turn.failure ? `${turn.failure.code}: ${turn.failure.message}` : ''), ...turn.actions.map((action) => callSummary(action.name, action.arguments))].join('\n');

/**
 * Compare two stored sessions (read-only): each one's trace outcome, verifications, tokens, time, turns and the files
 * its tools wrote, and the first root turn where they part. A fork and its parent (either way round) are aligned at
 * the fork point (the turns before it are the same records); any other two sessions turn by turn.
 * `SESSION_NOT_FOUND` when either has no record. `filesChanged` is exact where the sessions captured their workspace
 * (every change, whatever made it, up to a later rewind of the session), and `sameTree` says whether they left it the same.
 */
export const compareSessions = async (store: Pick<EventStore, 'read' | 'info' | 'readBlob'>, a: string, b: string): Promise<SessionComparison> => {
  const [recordsA, recordsB] = await Promise.all([readSession(store, a), readSession(store, b)]);
  const [infoA, infoB] = await Promise.all([store.info(a), store.info(b)]);
  const left = sideOf(a, upcastRecords(recordsA));
  const right = sideOf(b, upcastRecords(recordsB));
  const forkSeq = infoB?.forkedFrom?.stream === a ? infoB.forkedFrom.seq : infoA?.forkedFrom?.stream === b ? infoA.forkedFrom.seq : undefined;
  // After the fork point: every turn settled (or still open) after it; a turn the fork point cut is compared whole.
  const after = (turns: TraceTurn[]) => (forkSeq === undefined ? turns : turns.filter((turn) => (turn.response?.seq ?? turn.failure?.seq ?? Number.POSITIVE_INFINITY) > forkSeq));
  const turnsA = after(left.turns);
  const turnsB = after(right.turns);
  let firstDifference: SessionComparison['firstDifference'];
  for (let index = 0; index < Math.max(turnsA.length, turnsB.length); index++) {
    const turnA = turnsA[index];
    const turnB = turnsB[index];
    const textA = turnA ? turnText(turnA) : undefined;
    const textB = turnB ? turnText(turnB) : undefined;
    if (textA === textB) continue;
    firstDifference = {
      turn: (turnA ?? turnB)!.turn,
      ...(turnA && textA !== undefined ? { a: { seq: turnA.requested.seq, text: textA } } : {}),
      ...(turnB && textB !== undefined ? { b: { seq: turnB.requested.seq, text: textB } } : {}),
    };
    break;
  }
  const [workspaceA, workspaceB] = await Promise.all([workspaceSide(store, a, recordsA, forkSeq ?? 0), workspaceSide(store, b, recordsB, forkSeq ?? 0)]);
  const sides = { a: { ...left.side, ...workspaceA }, b: { ...right.side, ...workspaceB } };
  const sameTree = workspaceA?.tree !== undefined && workspaceB?.tree !== undefined ? workspaceA.tree === workspaceB.tree : undefined;
  return { ...sides, alignment: forkSeq === undefined ? 'turns' : 'fork', ...(forkSeq === undefined ? {} : { forkSeq }), ...(firstDifference ? { firstDifference } : {}), ...(sameTree === undefined ? {} : { sameTree }) };
};

/**
 * The seq the session's work ends at, for its workspace change (undefined: its head): the record before a later rewind
 * of it and before the look for outside changes that rewind made first — or before such a look left at the end of the
 * log by a refused rewind (older logs have them): changes found outside rein then are not the session's.
 */
const workEnd = (records: readonly RecordEnvelope[], fromSeq: number): number | undefined => {
  const rewound = records.findIndex((record) => record.seq > fromSeq && record.type === 'workspace.rewind-started');
  let end = rewound === -1 ? records.length : rewound;
  const outsideLook = (record: RecordEnvelope) => record.seq > fromSeq && record.type === 'workspace.changed' && (record.data as WorkspaceChanged).source === 'outside';
  while (end > 0 && outsideLook(records[end - 1]!)) end -= 1;
  return end === records.length ? undefined : (records[end - 1]?.seq ?? 0);
};

/**
 * A side's workspace change after `fromSeq` (0: the whole session), from its recorded workspace changes: the tree the
 * log holds at `fromSeq` against the one the session's work left — its end, or the record before a later rewind of it
 * (a rewind undoes the work being compared, it is not part of it). Undefined for a session that never captured.
 */
const workspaceSide = async (store: Pick<EventStore, 'readBlob'>, sessionId: string, records: readonly RecordEnvelope[], fromSeq: number): Promise<Pick<ComparedSession, 'filesChanged' | 'changes' | 'tree'> | undefined> => {
  const read = (ref: string) => store.readBlob(sessionId, ref);
  const last = await loggedTree(records, read, workEnd(records, fromSeq));
  if (!last) return undefined;
  const first = await loggedTree(records, read, fromSeq === 0 ? last.capturedSeq : fromSeq);
  const changes = fileChangesOf(treeChanges(first!.tree, last.tree)).map((change) => ({ path: change.path, kind: change.kind, ...(change.from !== undefined ? { from: change.from } : {}) }));
  return { filesChanged: changes.map((change) => change.path), changes, tree: last.tree.digest() };
};
