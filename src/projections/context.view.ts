import { posix } from 'node:path';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { ContextProjected, HistoryLayout } from '../../models/context.records.js';
import type { ModelMessageToolCall } from '../../models/model-contract.js';
import type { ModelResponded } from '../../models/model.records.js';
import type { SessionCreated, UserMessage } from '../../models/session.records.js';
import type { CommandExecution, ToolSettled, Truncation } from '../../models/tool.records.js';
import type { VerificationRecorded } from '../../models/verification.records.js';
import type { DelegatedTask, DelegationJoined, DelegationStarted, ReportRejected } from '../../models/delegation.records.js';
import { extractConstraints, type Constraint } from './constraints.js';
import { PersistentReadonlyMap } from './persistent-map.js';
import type { HookDecided } from '../../models/hook.records.js';
import { prepend, type PersistentList } from './persistent-list.js';
import type { Projection, ViewState } from './projection.js';
import { patchPaths } from '../tools/patch/patch-paths.js';
import { foldEntries } from '../host/step-record.js';

/** Points whose `additionalContext` the model is shown (with the result, or with the next user message). */
const hookContextPoints: ReadonlySet<string> = new Set(['postToolUse', 'userPromptSubmit', 'sessionStart']);

export interface UserItem {
  kind: 'user';
  seq: number;
  text: string;
  /** Context hooks added to this message (`userPromptSubmit`, `sessionStart`, a `stop` continuation): shown untrusted. */
  hookContext?: string;
}

export interface ToolResultItem {
  callId: string;
  name: string;
  seq: number;
  status: 'ok' | 'error';
  errorCode?: string;
  observation: string;
  truncated?: Truncation;
  /** How the command a call ran ended (`bash`): history summaries say `exit 1`, not `ok`. */
  execution?: CommandExecution;
  /** What `postToolUse` hooks added for the model about this result: shown after it, untrusted. */
  hookContext?: string;
}

/** One model reply with its tool calls and, as they settle, their results (kept together: providers need pairs). */
export interface TurnItem {
  kind: 'turn';
  seq: number;
  turn: number;
  text: string;
  toolCalls: readonly ModelMessageToolCall[];
  results: readonly ToolResultItem[];
}

export type ConversationItem = UserItem | TurnItem;

/** The last successful read of a file: evidence the policy may show again once it left the tail, until it is stale. */
export interface EvidenceItem {
  path: string;
  seq: number;
  callId: string;
  observation: string;
  truncated?: Truncation;
}

/** Where the history shown in full starts, as the last projection recorded it, with the evidence it pinned. */
export interface PinnedLayout extends HistoryLayout {
  /** The reads `evidence` names, kept as they were when pinned (a later read of the file does not replace them). */
  pinned: readonly EvidenceItem[];
}

/** Counts of the conversation items that fell out of `recent` (the policy summarises them in one line). */
export interface OlderItems {
  items: number;
  turns: number;
  users: number;
  firstSeq: number;
  lastSeq: number;
  calls: Readonly<Record<string, { ok: number; error: number }>>;
}

/**
 * What a child agent's context knows of its task: the package as its parent resolved it, whom it reports to, and
 * (context mode `summary`) its parent's context as it was when the child started — shared, not copied.
 */
export interface ChildTask {
  callId: string;
  parent: string;
  task: DelegatedTask;
  seq: number;
  parentView?: ActorContext;
  parentGoal?: string;
}

/** What one actor's model needs next, folded from its records with bounded structures only. */
export interface ActorContext {
  actor: string;
  /** A child agent's own goal: its objective (the session's goal is the root agent's). */
  goal?: { text: string; seq: number };
  /** A child agent's task package. */
  delegated?: ChildTask;
  users: PersistentList<UserItem> | undefined;
  constraints: PersistentList<Constraint> | undefined;
  recent: readonly ConversationItem[];
  older: OlderItems;
  reads: readonly EvidenceItem[];
  modified: ReadonlyArray<{ path: string; seq: number }>;
  lastMutationSeq: number;
  verification?: { seq: number; status: 'passed' | 'failed' | 'inconclusive'; name: string; summary: string };
  compactionLevel: number;
  /** The history layout the last projection chose (absent before the first one): the next keeps it while it fits. */
  layout?: PinnedLayout;
  turns: number;
  /** Hook context recorded before the message or result it belongs to arrived (same batch): attached when it does. */
  pendingHooks?: ReadonlyArray<{ callId?: string; text: string }>;
  /** The items of `recent` replaced so far (absent before the first): how the history's renderer knows what changed. */
  edits?: RecentEdits;
}

/**
 * The replacements of items in an actor's `recent` (a settled result replaces its turn; appends and evictions at the
 * front replace nothing): how many so far, and the seqs of the items the latest ones replaced (at most
 * `keptEdits`, oldest first). A reader that noted `count` then knows, while at most that many replacements followed,
 * that every item it saw is unchanged but those — without comparing them (`renderHistory`).
 */
export interface RecentEdits {
  count: number;
  seqs: readonly number[];
}

/** Replacements whose items `RecentEdits` names (a round trip makes one per tool call settled). */
export const keptEdits = 8;

const editedOnce = (edits: RecentEdits | undefined, seq: number): RecentEdits => {
  if (edits === undefined) return { count: 1, seqs: [seq] };
  const seqs = edits.seqs.length < keptEdits ? edits.seqs.slice() : edits.seqs.slice(1);
  seqs.push(seq);
  return { count: edits.count + 1, seqs };
};

/** The context view of a session: the goal and, per actor path, what its next model input is built from. */
export interface ContextView extends ViewState {
  goal?: { text: string; seq: number };
  workspace?: string;
  /**
   * Per actor path (a Map: each record copies it, and a map copies in microseconds where an object with a thousand
   * agents' keys takes a millisecond — a delegation of many children must not make every record cost O(children)).
   */
  actors: ReadonlyMap<string, ActorContext>;
}

export interface ContextViewOptions {
  /** Conversation items kept in full for the history and its summary (default 128); older ones are only counted. */
  recentCapacity?: number;
  /** Distinct files whose last read is kept as evidence (default 16). */
  evidenceCapacity?: number;
  /** Tools whose successful call with a `path` argument changes that file (default write, edit, edit_lines, apply_patch — whose patch names its files —, delete). */
  mutatingTools?: readonly string[];
  /** Tools whose successful call with a `path` argument is a read of that file (default read). */
  readTools?: readonly string[];
}

const emptyOlder: OlderItems = { items: 0, turns: 0, users: 0, firstSeq: 0, lastSeq: 0, calls: {} };

/** The context of an actor that has no records yet. */
export const emptyActorContext = (actor: string): ActorContext => ({
  actor,
  users: undefined,
  constraints: undefined,
  recent: [],
  older: emptyOlder,
  reads: [],
  modified: [],
  lastMutationSeq: 0,
  compactionLevel: 0,
  turns: 0,
});

/** Count one more item among those no longer kept in full (the history summary's line of counts). */
export const countOlder = (older: OlderItems, item: ConversationItem): OlderItems => {
  const calls = { ...older.calls };
  if (item.kind === 'turn') {
    for (const result of item.results) {
      const counts = calls[result.name] ?? { ok: 0, error: 0 };
      calls[result.name] = result.status === 'ok' ? { ok: counts.ok + 1, error: counts.error } : { ok: counts.ok, error: counts.error + 1 };
    }
  }
  return {
    items: older.items + 1,
    turns: older.turns + (item.kind === 'turn' ? 1 : 0),
    users: older.users + (item.kind === 'user' ? 1 : 0),
    firstSeq: older.firstSeq === 0 ? item.seq : older.firstSeq,
    lastSeq: item.seq,
    calls,
  };
};

const normalisedPath = (path: string): string => posix.normalize(path.replace(/\\/g, '/'));

/**
 * The files a call names, normalised (`./src/a.ts` and `src/a.ts` are the same file for freshness): its `path`
 * argument, or for `apply_patch` the files its patch text names (a patch has no `path`).
 */
const pathsOf = (call: ModelMessageToolCall | undefined): string[] => {
  if (typeof call?.arguments.path === 'string') return [normalisedPath(call.arguments.path)];
  return call?.name === 'apply_patch' ? patchPaths(call.arguments.input).map(normalisedPath) : [];
};

/** Build the context projection; the options are part of the view's definition (live and rebuilt must match). */
export const contextProjection = (options: ContextViewOptions = {}): Projection<ContextView> => {
  const capacity = options.recentCapacity ?? 128;
  const evidenceCapacity = options.evidenceCapacity ?? 16;
  const mutating = new Set(options.mutatingTools ?? ['write', 'edit', 'edit_lines', 'apply_patch', 'delete']);
  const reading = new Set(options.readTools ?? ['read']);

  /** Append an item (evicting the oldest into the counts once full), with the actor's turn count as given. */
  const push = (actor: ActorContext, item: ConversationItem, turns = actor.turns): ActorContext => {
    if (actor.recent.length < capacity) {
      const recent = actor.recent.slice();
      recent.push(item);
      return { ...actor, recent, turns };
    }
    // One copy without the evicted item (not a copy with it, then a shift).
    const recent = actor.recent.slice(1);
    recent.push(item);
    return { ...actor, recent, turns, older: countOlder(actor.older, actor.recent[0]!) };
  };

  const settle = (actor: ActorContext, settled: ToolSettled, seq: number): ActorContext => {
    const index = actor.recent.findLastIndex((item) => item.kind === 'turn' && item.toolCalls.some((call) => call.callId === settled.callId));
    const turn = actor.recent[index] as TurnItem | undefined;
    if (!turn) return actor;
    const hook = actor.pendingHooks?.find((pending) => pending.callId === settled.callId);
    // Built key by key (same keys, same order): conditional spreads took V8's slow path on every settled call.
    const result: ToolResultItem = { callId: settled.callId, name: settled.name, seq, status: settled.status, observation: settled.observation };
    if (settled.errorCode) result.errorCode = settled.errorCode;
    if (settled.truncated) result.truncated = settled.truncated;
    if (settled.execution) result.execution = settled.execution;
    if (hook) result.hookContext = hook.text;
    const recent = actor.recent.slice();
    const results = turn.results.slice();
    results.push(result);
    recent[index] = { ...turn, results };
    let next: ActorContext = { ...actor, recent };
    next.edits = editedOnce(actor.edits, turn.seq);
    if (hook) next.pendingHooks = actor.pendingHooks!.filter((pending) => pending !== hook);
    const paths = pathsOf(turn.toolCalls.find((call) => call.callId === settled.callId));
    const path = paths[0];
    if (settled.status !== 'ok' || path === undefined) return next;
    if (reading.has(settled.name)) {
      const reads = [...actor.reads.filter((read) => read.path !== path), { path, seq, callId: settled.callId, observation: settled.observation, ...(settled.truncated ? { truncated: settled.truncated } : {}) }];
      next = { ...next, reads: reads.length > evidenceCapacity ? reads.slice(reads.length - evidenceCapacity) : reads };
    } else if (mutating.has(settled.name)) {
      const modified = [...actor.modified.filter((entry) => !paths.includes(entry.path)), ...paths.map((changed) => ({ path: changed, seq }))];
      next = { ...next, modified: modified.length > 64 ? modified.slice(modified.length - 64) : modified, lastMutationSeq: seq };
    }
    return next;
  };

  const applyToActor = (actor: ActorContext, record: RecordEnvelope): ActorContext => {
    switch (record.type) {
      case 'user.message': {
        const text = (record.data as UserMessage).text;
        const hooks = actor.pendingHooks?.filter((pending) => pending.callId === undefined) ?? [];
        const item: UserItem = { kind: 'user', seq: record.seq, text, ...(hooks.length > 0 ? { hookContext: hooks.map((pending) => pending.text).join('\n\n') } : {}) };
        let constraints = actor.constraints;
        for (const constraint of extractConstraints(record.seq, text)) constraints = prepend(constraints, constraint);
        const rest = hooks.length > 0 ? actor.pendingHooks!.filter((pending) => pending.callId !== undefined) : actor.pendingHooks;
        return push({ ...actor, users: prepend(actor.users, item), constraints, ...(rest === actor.pendingHooks ? {} : { pendingHooks: rest }) }, item);
      }
      case 'model.responded': {
        const reply = record.data as ModelResponded;
        const toolCalls = reply.toolCalls.map(({ callId, name, arguments: args }) => ({ callId, name, arguments: args }));
        const next = push(actor, { kind: 'turn', seq: record.seq, turn: reply.turn, text: reply.text, toolCalls, results: [] }, actor.turns + 1);
        // The output limit cut the reply: the model reads that it was cut, and continues it (or answers a later message knowing it).
        const cut = reply.stopReason === 'max_tokens' && reply.toolCalls.length === 0
          ? push(next, { kind: 'user', seq: record.seq, text: '[harness] Your previous reply was cut off at the output token limit (max_tokens). Continue exactly where it stopped, without repeating what you already wrote; keep the rest short.' })
          : next;
        // A final answer the output schema refused: the model reads the errors and answers again.
        if (reply.output?.ok === false) return push(cut, { kind: 'user', seq: record.seq, text: `[harness] Your final answer does not validate against the required output schema:\n${reply.output.errors.map((error) => `- ${error}`).join('\n')}\nReply again with only the corrected JSON value.` });
        // A stop hook asked the model to go on: it reads why, as untrusted context, in place of the user's next word.
        if (!reply.continuation) return cut;
        return push(cut, { kind: 'user', seq: record.seq, text: '[harness] A stop hook asked you to continue before ending.', hookContext: reply.continuation.reason });
      }
      case 'hook.decided': {
        const decided = record.data as HookDecided;
        if (!decided.additionalContext || !hookContextPoints.has(decided.point)) return actor;
        return { ...actor, pendingHooks: [...(actor.pendingHooks ?? []), { ...(decided.callId ? { callId: decided.callId } : {}), text: decided.additionalContext }] };
      }
      case 'tool.settled':
        return settle(actor, record.data as ToolSettled, record.seq);
      case 'verification.recorded': {
        const data = record.data as VerificationRecorded;
        return { ...actor, verification: { seq: record.seq, status: data.status, name: data.name, summary: data.summary } };
      }
      case 'context.projected': {
        const data = record.data as ContextProjected;
        const level = data.compactionLevel === actor.compactionLevel ? actor : { ...actor, compactionLevel: data.compactionLevel };
        if (!data.history) return level;
        const previous = actor.layout?.pinned ?? [];
        const pinned = data.history.evidence.flatMap((seq) => {
          const read = previous.find((item) => item.seq === seq) ?? actor.reads.find((item) => item.seq === seq);
          return read ? [read] : [];
        });
        return { ...level, layout: { ...data.history, pinned } };
      }
      case 'report.rejected': {
        // A reply without a report: the child reads the harness's note (an invalid report already has its observation).
        const rejected = record.data as ReportRejected;
        if (rejected.reason !== 'missing' || rejected.final) return actor;
        return push(actor, { kind: 'user', seq: record.seq, text: `[harness] Your reply did not call submit_report. Your task ends only with submit_report carrying a valid ${rejected.format}; this is your one correction.` });
      }
      default:
        return actor;
    }
  };

  const relevant = new Set(['user.message', 'model.responded', 'tool.settled', 'verification.recorded', 'context.projected', 'report.rejected', 'hook.decided']);

  /**
   * A child's first context, by its task's context mode: `clean` — the task alone; `summary` — the task and a brief
   * of the parent's context as it is now (shared, rendered by the policy); `fork` — the task after the parent's recent
   * conversation, evidence and changed files. The parent's user constraints carry over in every mode (they bind the
   * whole session). The objective is the child's goal and first message. Nothing is copied from the parent's messages.
   */
  const seedChild = (view: ContextView, started: DelegationStarted, seq: number): ActorContext => {
    const parent = view.actors.get(started.parent) ?? emptyActorContext(started.parent);
    const objective: UserItem = { kind: 'user', seq, text: started.task.objective };
    const delegated: ChildTask = { callId: started.callId, parent: started.parent, task: started.task, seq };
    const child: ActorContext = { ...emptyActorContext(started.child), goal: { text: started.task.objective, seq }, users: prepend(undefined, objective), constraints: parent.constraints, delegated };
    if (started.task.contextMode === 'clean') return { ...child, recent: [objective] };
    if (started.task.contextMode === 'summary') return { ...child, recent: [objective], delegated: { ...delegated, parentView: parent, ...(view.goal && started.parent === 'root' ? { parentGoal: view.goal.text } : parent.goal ? { parentGoal: parent.goal.text } : {}) } };
    const forked = parent.recent.length + 1 > capacity ? parent.recent.slice(parent.recent.length + 1 - capacity) : parent.recent;
    return { ...child, recent: [...forked, objective], older: parent.older, reads: parent.reads, modified: parent.modified, ...(parent.verification ? { verification: parent.verification } : {}) };
  };

  // The actors map is persistent: a record costs the same with one agent and with a thousand children.
  const actorsOf = (view: ContextView): PersistentReadonlyMap<ActorContext> => (view.actors instanceof PersistentReadonlyMap ? view.actors : [...view.actors].reduce((map, [key, value]) => map.set(key, value), PersistentReadonlyMap.empty<ActorContext>()));
  const withActor = (view: ContextView, actor: ActorContext): ContextView => ({ ...view, actors: actorsOf(view).set(actor.actor, actor) });

  const applyDelegation = (view: ContextView, record: RecordEnvelope): ContextView => {
    if (record.type === 'delegation.started') return withActor(view, seedChild(view, record.data as DelegationStarted, record.seq));
    if (record.type === 'delegation.joined') {
      // The join is the parent's delegate_task result: only the structured reports enter its context.
      const joined = record.data as DelegationJoined;
      const parent = view.actors.get(joined.parent);
      if (!parent) return view;
      return withActor(view, settle(parent, { effectId: '', callId: joined.callId, name: 'delegate_task', status: 'ok', observation: joined.observation, elapsedMs: 0 }, record.seq));
    }
    // A child that ended leaves the view: nothing reads its context again (`rein context` rebuilds from the log).
    const child = (record.data as { child: string }).child;
    if (!view.actors.has(child)) return view;
    return { ...view, actors: actorsOf(view).delete(child) };
  };

  const delegationTypes = new Set(['delegation.started', 'delegation.joined', 'delegation.completed', 'delegation.failed']);

  const applyRecord = (view: ContextView, record: RecordEnvelope): ContextView => {
    if (record.type === 'session.created') {
      const created = record.data as SessionCreated;
      return { ...view, goal: { text: created.task, seq: record.seq }, workspace: created.workspace };
    }
    if (delegationTypes.has(record.type)) return applyDelegation(view, record);
    if (!relevant.has(record.type)) return view;
    const actor = view.actors.get(record.actor) ?? emptyActorContext(record.actor);
    const next = applyToActor(actor, record);
    return next === actor ? view : withActor(view, next);
  };

  return {
    name: 'context',
    initial: () => ({ seq: 0, actors: PersistentReadonlyMap.empty<ActorContext>() }),
    apply(view, record) {
      // A step record: its folded `context.projected` and derived delegation and report records, as those records.
      return foldEntries(view, record, applyRecord, wanted);
    },
  };
};

/** What the context projection reads, by type (the rest of a step record is not even built). */
const contextTypes = new Set(['session.created', 'user.message', 'model.responded', 'tool.settled', 'verification.recorded', 'context.projected', 'report.rejected', 'hook.decided', 'delegation.started', 'delegation.joined', 'delegation.completed', 'delegation.failed']);
const wanted = (type: string): boolean => contextTypes.has(type);

/** Whether the context projection reads records of `type` (the same answer for a type every time: `foldEntries`). */
export const wantsContextType: (type: string) => boolean = wanted;
