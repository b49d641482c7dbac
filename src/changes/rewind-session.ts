import type { FactDraft, RecordDraft, RecordEnvelope } from '../../models/envelope.js';
import { isDerivedType, recordVersion } from '../../models/records.js';
import type { WorkspaceCaptured, WorkspaceChanged, WorkspaceRewindStarted } from '../../models/workspace.records.js';
import type { EventStore } from '../../stores/event-store.js';
import { ReinError } from '../host/host-errors.js';
import { createIdGenerator } from '../host/record-ids.js';
import { rootPath } from '../host/root-path.js';
import { checkForkPoint, forkSession } from '../session/fork-session.js';
import { readSessionRecords } from '../session/read-session.js';
import { verifyStreamChain } from '../session/verify-session.js';
import { CaptureFilter } from './capture-rules.js';
import { fileChangesOf, type FileChange } from './file-change.js';
import { treeChanges } from './tree-changes.js';
import { applyRewind, type RewindOperation } from './rewind-apply.js';
import { scanWorkspace } from './scan-workspace.js';
import { loggedTree } from './tree-manifest.js';

/** Where and what `rewindSession` restores. */
export interface RewindOptions {
  /** The seq to go back to: the workspace as it was once this record was durable; the conversation up to its step. */
  to: number;
  /** Restore the workspace (both when neither `code` nor `conversation` is given). */
  code?: boolean;
  /** Fork the conversation at `to` (the end of its step); no model is called. */
  conversation?: boolean;
  /** Overwrite paths changed outside rein since the log's last capture, and leave unrestorable ones as they are. */
  force?: boolean;
  /** Asked with the plan before any file is touched; false leaves everything as it was (`declined`). */
  confirm?: (plan: RewindPlan) => boolean | Promise<boolean>;
  /** Told once the rewind is recorded and files are about to change. */
  onStart?: (plan: RewindPlan) => void;
  clock?: () => number;
}

/** What a code rewind will do, shown before it does it. */
export interface RewindPlan {
  sessionId: string;
  toSeq: number;
  /** Each path's change, from the workspace now to the workspace at `toSeq`. */
  changes: FileChange[];
  /** Paths changed outside rein since the log's last record of them (recorded before the rewind as `outside`). */
  outside: FileChange[];
  /** Outside changes the rewind would overwrite: refused unless `force`. */
  conflicts: string[];
  /** Files whose content at `toSeq` was never stored (above the size cap): left as they are. */
  unrestorable: string[];
}

/** How a rewind went. */
export interface RewindResult {
  sessionId: string;
  toSeq: number;
  /** An interrupted rewind this call finished first (its target seq and paths). */
  finished?: { toSeq: number; paths: number };
  code?: {
    plan: RewindPlan;
    /** True when the answer to `confirm` was no: nothing changed. */
    declined?: boolean;
    /** The workspace's digest after the rewind, and whether a scan found exactly the tree recorded at `toSeq`. */
    tree?: string;
    verified?: boolean;
    /** Folders kept because they still hold files the capture leaves out, and unrestorable files. */
    kept?: string[];
    /** Nothing was captured in this session: there is nothing to restore. */
    uncaptured?: boolean;
  };
  conversation?: {
    /** The fork's id, the seq it ends at (the end of the step holding `toSeq`) and the command that continues it. */
    sessionId: string;
    atSeq: number;
    command: string;
  };
}

/** The workspace a rewind works in: its root and the paths never captured (its protected paths). */
export interface RewindWorkspace {
  root: string;
  never: readonly string[];
}

/** The seq ending the step that holds `seq` (the last record before the next input or fact). */
const stepEnd = (records: readonly RecordEnvelope[], seq: number): number => {
  let end = seq;
  for (const record of records) if (record.seq > end && record.seq === end + 1 && isDerivedType(record.type)) end = record.seq;
  return end;
};

/** The last rewind the log started and never finished, if any. */
const pendingRewind = (records: readonly RecordEnvelope[]): RecordEnvelope | undefined => {
  const started = records.filter((record) => record.type === 'workspace.rewind-started');
  const last = started[started.length - 1];
  if (!last) return undefined;
  return records.some((record) => record.seq > last.seq && record.type === 'workspace.changed' && record.cause === last.id) ? undefined : last;
};

/** The paths whose last recorded change was made outside rein. */
const outsideSince = (records: readonly RecordEnvelope[]): string[] => {
  const last = new Map<string, WorkspaceChanged['source']>();
  for (const record of records) {
    if (record.type !== 'workspace.changed') continue;
    const data = record.data as WorkspaceChanged;
    for (const change of data.changes) last.set(change.path, data.source);
  }
  return [...last].filter(([, source]) => source === 'outside').map(([path]) => path);
};

const planBytes = (operations: readonly RewindOperation[]): Uint8Array => Buffer.from(JSON.stringify({ operations }), 'utf8');

/** Appends to a held session's log, at its head, synced. */
class HeldLog {
  private readonly newId = createIdGenerator();
  constructor(
    private readonly store: EventStore,
    private readonly sessionId: string,
    private records: RecordEnvelope[],
    private readonly clock: () => number,
  ) {}

  get all(): readonly RecordEnvelope[] {
    return this.records;
  }

  async append(facts: readonly FactDraft[], options: { blobs?: Uint8Array[]; cause?: string } = {}): Promise<RecordEnvelope[]> {
    const last = this.records[this.records.length - 1]!;
    const drafts = facts.map((fact): RecordDraft => ({ id: this.newId(), v: recordVersion(fact.type), actor: rootPath, ...(options.cause ? { cause: options.cause } : {}), type: fact.type, data: fact.data, at: Math.max(last.at, this.clock()) }));
    const stored = await this.store.append(this.sessionId, drafts, { expectedSeq: last.seq, sync: true, ...(options.blobs && options.blobs.length > 0 ? { blobs: options.blobs } : {}) });
    this.records = [...this.records, ...stored];
    return stored;
  }
}

/** Carry out a started rewind (from its plan blob) and record its end; idempotent, so a crash in it is finished by the next call. */
const finishRewind = async (log: HeldLog, store: EventStore, sessionId: string, workspace: RewindWorkspace, started: RecordEnvelope, rules: CaptureFilter): Promise<{ tree: string; verified: boolean; kept: string[]; changes: number }> => {
  const data = started.data as WorkspaceRewindStarted;
  const read = (ref: string) => store.readBlob(sessionId, ref);
  const operations = (JSON.parse(Buffer.from(await read(data.plan)).toString('utf8')) as { operations: RewindOperation[] }).operations;
  const { kept } = await applyRewind(workspace.root, operations, started.id, read);
  const before = (await loggedTree(log.all, read, started.seq))!.tree;
  const { tree: found } = await scanWorkspace(workspace.root, rules);
  const changes = treeChanges(before, found);
  const tree = found.digest();
  // The record says what the workspace holds now: the target, or less where folders were kept.
  await log.append([{ type: 'workspace.changed', data: { source: 'rewind', toSeq: data.toSeq, changes, tree } satisfies WorkspaceChanged }], { cause: started.id });
  return { tree, verified: tree === data.to, kept, changes: changes.length };
};

const filterOf = (records: readonly RecordEnvelope[], workspace: RewindWorkspace): CaptureFilter | undefined => {
  const captured = records.find((record) => record.type === 'workspace.captured');
  if (!captured) return undefined;
  const rules = (captured.data as WorkspaceCaptured).rules;
  // The rules the session captured with, and what it never captured then or would not now.
  return new CaptureFilter(workspace.root, { gitignore: rules.gitignore, exclude: rules.exclude, include: rules.include, maxFileMb: rules.maxFileBytes / 1024 / 1024 }, [...rules.never, ...workspace.never]);
};

/**
 * Rewind a stored session (docs/replay.md: *Time travel*). The session must not be running (`store.hold`: `STORE_LOCKED`
 * when another process runs it). An interrupted rewind of it is finished first. With `code`: the workspace is scanned
 * for what changed outside rein since the log's last capture; a rewind that would overwrite such a change, or needs a
 * content never stored, is refused with `REWIND_CONFLICT` unless `force`, appending nothing; `confirm` is asked with
 * the plan; a rewind that goes ahead records the outside changes (`workspace.changed`, `outside`) and itself
 * (`workspace.rewind-started`, synced, with the plan) before any file changes, then carried out and recorded as done (`workspace.changed`, `rewind`), and the
 * workspace is scanned to check it holds the tree recorded at `to`. With `conversation`: a fork ending at the step
 * that holds `to`, and the command that continues it (no model is called; the session itself is untouched).
 */
export const rewindSession = async (store: EventStore, workspace: RewindWorkspace, sessionId: string, options: RewindOptions): Promise<RewindResult> => {
  const both = options.code === undefined && options.conversation === undefined;
  const code = both || options.code === true;
  const conversation = both || options.conversation === true;
  const clock = options.clock ?? Date.now;
  const release = await store.hold?.(sessionId);
  try {
    // A rewind appends to the log: as resume does, never to a log this store's key did not chain.
    await verifyStreamChain(store, sessionId, { allowUnchained: true });
    const records = await readSessionRecords(store, sessionId);
    if (records.length === 0) throw new ReinError('SESSION_NOT_FOUND', `no session ${sessionId} in this store`);
    const head = records[records.length - 1]!.seq;
    const ranIn = (records[0]!.data as { workspace?: unknown }).workspace;
    if (code && ranIn !== workspace.root) throw new ReinError('USAGE', `session ${sessionId} ran in ${String(ranIn)}, not ${workspace.root}: rewind it from its own workspace (--workspace)`);
    if (!Number.isInteger(options.to) || options.to < 1 || options.to > head) throw new ReinError('USAGE', `--to must be a seq between 1 and ${head}`);
    const forkAt = stepEnd(records, options.to);
    if (conversation) await checkForkPoint(store, sessionId, forkAt);
    const log = new HeldLog(store, sessionId, records, clock);
    const result: RewindResult = { sessionId, toSeq: options.to };
    const rules = filterOf(records, workspace);
    const pending = pendingRewind(records);
    if (pending && rules) {
      const finished = await finishRewind(log, store, sessionId, workspace, pending, rules);
      result.finished = { toSeq: (pending.data as WorkspaceRewindStarted).toSeq, paths: finished.changes };
    }
    if (code) result.code = await rewindCode(log, store, sessionId, workspace, rules, options);
    if (conversation) {
      const forkId = await forkSession(store, sessionId, forkAt, { clock });
      result.conversation = { sessionId: forkId, atSeq: forkAt, command: `rein resume ${forkId}` };
    }
    return result;
  } finally {
    await release?.();
  }
};

const rewindCode = async (log: HeldLog, store: EventStore, sessionId: string, workspace: RewindWorkspace, rules: CaptureFilter | undefined, options: RewindOptions): Promise<NonNullable<RewindResult['code']>> => {
  const empty: RewindPlan = { sessionId, toSeq: options.to, changes: [], outside: [], conflicts: [], unrestorable: [] };
  if (!rules) return { plan: empty, uncaptured: true };
  const read = (ref: string) => store.readBlob(sessionId, ref);
  const known = (await loggedTree(log.all, read))!.tree;
  const stored = new Set(known.list().flatMap(([, entry]) => (entry.type === 'file' ? [entry.content] : [])));
  const { tree: disk, bytes } = await scanWorkspace(workspace.root, rules, { keep: (ref) => !stored.has(ref) });
  const outsideChanges = treeChanges(known, disk);
  const target = (await loggedTree(log.all, read, options.to))!.tree;
  const planned = treeChanges(disk, target);
  // Protected: what changed outside rein now, and what an earlier rewind recorded as changed outside rein and nothing
  // since (a forced rewind overwrote it; an undo brings it back, and a later rewind must not overwrite it silently).
  const touched = new Set([...outsideSince(log.all), ...outsideChanges.map((change) => change.path)]);
  const plan: RewindPlan = {
    sessionId,
    toSeq: options.to,
    changes: fileChangesOf(planned),
    outside: fileChangesOf(outsideChanges),
    conflicts: planned.filter((change) => touched.has(change.path)).map((change) => change.path),
    unrestorable: planned.filter((change) => change.after?.type === 'file' && change.after.unrestorable).map((change) => change.path),
  };
  if (!options.force && (plan.conflicts.length > 0 || plan.unrestorable.length > 0)) {
    const why = [
      ...(plan.conflicts.length > 0 ? [`changed outside rein since the session last recorded them, and the rewind would overwrite them: ${plan.conflicts.join(', ')}`] : []),
      ...(plan.unrestorable.length > 0 ? [`their content at #${options.to} was above the size cap and never stored: ${plan.unrestorable.join(', ')}`] : []),
    ];
    throw new ReinError('REWIND_CONFLICT', `not rewound (nothing changed; --force to go on): ${why.join('; ')}`);
  }
  if (planned.length === 0) return { plan, tree: disk.digest(), verified: disk.digest() === target.digest(), kept: [] };
  if (options.confirm && !(await options.confirm(plan))) return { plan, declined: true };
  // Only a rewind that goes ahead records what changed outside rein (with its contents, so an undo can bring them
  // back): a refused or declined one, or one with nothing to do, leaves the log as it was. The edit stays protected
  // all the same: it is still on disk, so the next look finds it again.
  if (outsideChanges.length > 0) await log.append([{ type: 'workspace.changed', data: { source: 'outside', changes: outsideChanges, tree: disk.digest() } satisfies WorkspaceChanged }], { blobs: [...bytes.values()] });
  const operations: RewindOperation[] = planned.map((change) => ({ path: change.path, ...(change.after ? { after: change.after } : {}) }));
  const planRef = await store.blobs.put(planBytes(operations));
  const started: WorkspaceRewindStarted = {
    toSeq: options.to,
    plan: planRef,
    paths: operations.length,
    from: disk.digest(),
    to: target.digest(),
    ...(plan.conflicts.length > 0 ? { overwritten: plan.conflicts } : {}),
    ...(plan.unrestorable.length > 0 ? { unrestorable: plan.unrestorable } : {}),
  };
  const [record] = await log.append([{ type: 'workspace.rewind-started', data: started }]);
  options.onStart?.(plan);
  const done = await finishRewind(log, store, sessionId, workspace, record!, rules);
  return { plan, tree: done.tree, verified: done.verified, kept: done.kept };
};


/**
 * Finish a rewind of `sessionId` a crash interrupted (its `workspace.rewind-started` has no end), as `rein resume`
 * does before anything else: resolves with what it finished, or undefined when none was pending. The caller holds the
 * session.
 */
export const finishPendingRewind = async (store: EventStore, workspace: RewindWorkspace, sessionId: string, records: readonly RecordEnvelope[], clock: () => number = Date.now): Promise<{ toSeq: number; paths: number; verified: boolean } | undefined> => {
  const pending = pendingRewind(records);
  const rules = filterOf(records, workspace);
  if (!pending || !rules) return undefined;
  const finished = await finishRewind(new HeldLog(store, sessionId, [...records], clock), store, sessionId, workspace, pending, rules);
  return { toSeq: (pending.data as WorkspaceRewindStarted).toSeq, paths: finished.changes, verified: finished.verified };
};
