import type { StateValue } from '../../models/actor.records.js';
import type { EffectKind } from '../../models/effect.records.js';
import type { RecordDraft, RecordEnvelope } from '../../models/envelope.js';
import { isDerivedType, recordClassOf, recordVersion } from '../../models/record-kinds.js';
import type { StepDerived, StepEntry, StepFact } from '../../models/step.records.js';

/** The record type of a step's derived record (README: *Record types*). */
export const stepRecordType = 'step.derived';

/** A record a machine (or the capability deriver) derived in a step, before it is compacted into the step record. */
export interface DerivedDraft {
  type: string;
  actor: string;
  data: Record<string, unknown>;
  corr?: string;
}

/** A fact folded into a step record, with its own time. */
export interface FoldedFact {
  type: string;
  data: Record<string, unknown>;
  corr?: string;
  at: number;
}

/** `running.awaitingModel` for `{ running: 'awaitingModel' }`; the value itself where a path would not read back the same. */
const pathOfState = (value: StateValue | null): StateValue | null => {
  if (value === null || typeof value === 'string') return value;
  const parts: string[] = [];
  let current: StateValue = value;
  while (typeof current !== 'string') {
    const keys: string[] = Object.keys(current);
    if (keys.length !== 1 || keys[0]!.includes('.') || keys[0] === '') return value;
    parts.push(keys[0]!);
    current = current[keys[0]!]!;
  }
  if (current.includes('.')) return value;
  parts.push(current);
  return parts.join('.');
};

/** The state value a stored path stands for (the inverse of `pathOfState`). */
const stateOfPath = (stored: StateValue | null): StateValue | null => {
  if (typeof stored !== 'string' || !stored.includes('.')) return stored;
  const parts = stored.split('.');
  let value: StateValue = parts[parts.length - 1]!;
  for (let index = parts.length - 2; index >= 0; index--) value = { [parts[index]!]: value };
  return value;
};

/**
 * What a typestate witness keeps in a step record: its lists are left out where the inputs hold them (the CallSpec and
 * the requests are in `model.responded`, the results in the `tool.settled` records, the uses follow from the results),
 * their digests stay. Other records are kept whole.
 */
const compactData = (type: string, data: Record<string, unknown>): Record<string, unknown> => {
  switch (type) {
    case 'turn.call-spec': {
      const { callSpec: _callSpec, ...kept } = data;
      return kept;
    }
    case 'turn.requests': {
      const { requests: _requests, ...kept } = data;
      return kept;
    }
    case 'turn.results': {
      const { rows: _rows, ...kept } = data;
      return kept;
    }
    case 'turn.uses': {
      const { uses: _uses, ...kept } = data;
      return kept;
    }
    default:
      return data;
  }
};

/**
 * One derived draft as a step entry. `whole`: keep a witness's lists (the trail upcaster does, so replay checks an old
 * log's witnesses as strictly as they were written).
 */
export const entryOf = (draft: DerivedDraft, whole = false): StepEntry => {
  if (draft.type === 'actor.transitioned') {
    const data = draft.data as { event: string; from: StateValue | null; to: StateValue };
    return [0, draft.actor, data.event, pathOfState(data.from), pathOfState(data.to) as StateValue];
  }
  if (draft.type === 'effect.requested') {
    const data = draft.data as { effectId: string; kind: EffectKind; args: Record<string, unknown> };
    return draft.corr === undefined ? [1, draft.actor, data.effectId, data.kind, data.args] : [1, draft.actor, data.effectId, data.kind, data.args, draft.corr];
  }
  const data = whole ? draft.data : compactData(draft.type, draft.data);
  return draft.corr === undefined ? [2, draft.actor, draft.type, data] : [2, draft.actor, draft.type, data, draft.corr];
};

/** The step entries of a step's derived drafts, in order (`whole`: see `entryOf`), every entry whole (none `sameAs`). */
export const entriesOfDrafts = (drafts: readonly DerivedDraft[], whole = false): StepEntry[] => drafts.map((draft) => entryOf(draft, whole));

const diffType = 'capability.diff';

/** Plain JSON values equal member by member (arrays in order; objects by their keys, in any order). */
const sameJson = (left: unknown, right: unknown): boolean => {
  if (Object.is(left, right)) return true;
  if (typeof left !== 'object' || typeof right !== 'object' || left === null || right === null) return false;
  if (Array.isArray(left)) {
    if (!Array.isArray(right) || left.length !== right.length) return false;
    for (let index = 0; index < left.length; index++) if (!sameJson(left[index], right[index])) return false;
    return true;
  }
  if (Array.isArray(right)) return false;
  const leftKeys = Object.keys(left);
  if (leftKeys.length !== Object.keys(right).length) return false;
  for (const key of leftKeys) if (!Object.hasOwn(right, key) || !sameJson((left as Record<string, unknown>)[key], (right as Record<string, unknown>)[key])) return false;
  return true;
};

/** Two `capability.diff` data equal in every member but `effectId` (sibling children with the same tools and mode). */
const sameDiff = (left: Record<string, unknown>, right: Record<string, unknown>): boolean => {
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  for (const key of keys) if (key !== 'effectId' && (!Object.hasOwn(right, key) || !sameJson(left[key], right[key]))) return false;
  return true;
};

/** How many distinct whole diffs of one step a later diff is compared with (a delegation's children have one or a few). */
const diffBases = 4;

/**
 * The step entries of a step record: as `entriesOfDrafts`, except that a `capability.diff` equal in every member but
 * `effectId` to an earlier one of the same step is stored as `{ effectId, sameAs }`, `sameAs` the index of that whole
 * entry in `derived` — the diffs of the children one delegation spawns, one per child, are mostly the same set
 * (`resolveEntry` and `draftOfEntry(entry, derived)` put it back).
 */
export const stepEntriesOf = (drafts: readonly DerivedDraft[]): StepEntry[] => {
  const entries: StepEntry[] = new Array(drafts.length);
  let bases: number[] | undefined;
  for (let index = 0; index < drafts.length; index++) {
    const draft = drafts[index]!;
    if (draft.type === diffType) {
      const found = bases?.find((base) => sameDiff((entries[base] as [2, string, string, Record<string, unknown>])[3], draft.data));
      if (found !== undefined) {
        const shared: Record<string, unknown> = { effectId: draft.data.effectId, sameAs: found };
        entries[index] = draft.corr === undefined ? [2, draft.actor, diffType, shared] : [2, draft.actor, diffType, shared, draft.corr];
        continue;
      }
      if ((bases ??= []).length < diffBases) bases.push(index);
    }
    entries[index] = entryOf(draft);
  }
  return entries;
};

/**
 * An entry of a step record's `derived` whole: a `capability.diff` stored as `{ effectId, sameAs }` gets the members of
 * the earlier entry it names (and its own `effectId`); any other entry is returned as it is. A `sameAs` that names no
 * whole `capability.diff` is left as stored (replay then reports it as different content).
 */
export const resolveEntry = (entry: StepEntry, derived: readonly StepEntry[]): StepEntry => {
  if (entry[0] !== 2 || entry[2] !== diffType) return entry;
  const data = entry[3];
  const at = data.sameAs;
  if (typeof at !== 'number') return entry;
  const base = derived[at];
  if (base === undefined || base[0] !== 2 || base[2] !== diffType || base[3].sameAs !== undefined) return entry;
  const whole = { ...base[3], effectId: data.effectId };
  return entry[4] === undefined ? [2, entry[1], diffType, whole] : [2, entry[1], diffType, whole, entry[4]];
};

/**
 * The data of a step's record: its derived drafts compacted (`stepEntriesOf`), and the facts folded into it (their
 * times as offsets from the record's `at`).
 */
export const stepDataOf = (drafts: readonly DerivedDraft[], facts: readonly FoldedFact[], at: number): StepDerived => {
  const derived = stepEntriesOf(drafts);
  if (facts.length === 0) return { derived };
  return {
    derived,
    facts: facts.map((fact): StepFact => {
      const offset = Math.min(0, Math.round(fact.at - at));
      if (offset !== 0) return [fact.type, fact.data, fact.corr ?? null, offset];
      return fact.corr === undefined ? [fact.type, fact.data] : [fact.type, fact.data, fact.corr];
    }),
  };
};

/** The step record that follows `input` in its batch: what applying it derived, nothing folded (`at`: the input's). */
export const stepDraftOf = (id: string, input: Pick<RecordDraft, 'id' | 'actor' | 'at'>, drafts: readonly DerivedDraft[]): RecordDraft => ({
  id,
  type: stepRecordType,
  v: recordVersion(stepRecordType),
  at: input.at,
  actor: input.actor,
  cause: input.id,
  data: stepDataOf(drafts, [], input.at),
});

/**
 * The type, actor, corr and data an entry stands for (the record it replaced). With `derived` (the step record's list
 * the entry is in), a `capability.diff` stored by reference is put back whole (`resolveEntry`); without it, as stored.
 */
export const draftOfEntry = (stored: StepEntry, derived?: readonly StepEntry[]): DerivedDraft => {
  const entry = derived === undefined ? stored : resolveEntry(stored, derived);
  switch (entry[0]) {
    case 0:
      return { type: 'actor.transitioned', actor: entry[1], data: { actor: entry[1], event: entry[2], from: stateOfPath(entry[3]), to: stateOfPath(entry[4]) as StateValue } };
    case 1:
      return { type: 'effect.requested', actor: entry[1], data: { effectId: entry[2], kind: entry[3], args: entry[4] }, ...(entry[5] === undefined ? {} : { corr: entry[5] }) };
    default:
      return { type: entry[2], actor: entry[1], data: entry[3], ...(entry[4] === undefined ? {} : { corr: entry[4] }) };
  }
};

/**
 * The effects a record asks for, as `effect.requested` records: a step record's intents (each with the step record's
 * id, the `cause` its settlement carries), or a legacy `effect.requested` record itself. What the host starts once
 * the record is written, and what resume finds in doubt.
 */
export const requestsOf = (record: RecordEnvelope): RecordEnvelope[] => {
  if (record.type === 'effect.requested') return [record];
  if (record.type !== stepRecordType) return [];
  const requests: RecordEnvelope[] = [];
  for (const entry of (record.data as StepDerived).derived) if (entry[0] === 1) requests.push(viewOf(record, draftOfEntry(entry)));
  return requests;
};

/** The envelope of one entry of a step record: the record's own envelope with the entry's type, actor, corr and data. */
const viewOf = (step: RecordEnvelope, draft: DerivedDraft, extra: { cause?: string | undefined; at?: number } = {}): RecordEnvelope => {
  const view = { stream: step.stream, seq: step.seq, id: step.id, type: draft.type, v: recordVersion(draft.type), at: extra.at ?? step.at, actor: draft.actor } as RecordEnvelope;
  const cause = 'cause' in extra ? extra.cause : step.cause;
  if (cause !== undefined) view.cause = cause;
  if (draft.corr !== undefined) view.corr = draft.corr;
  view.data = draft.data;
  return view;
};

/**
 * The plain facts a folded read-only `tool.started` stands for: its validation (`validated: true`) and the mode's
 * plain allow (`permission`), which the pipeline folds into it instead of writing records of their own.
 */
const startedChecks = (record: RecordEnvelope): RecordEnvelope[] => {
  const data = record.data as { effectId: string; callId: string; name: string; validated?: boolean; permission?: Record<string, unknown> };
  const views: RecordEnvelope[] = [];
  if (data.validated === true) views.push({ ...record, type: 'tool.validated', v: recordVersion('tool.validated'), data: { effectId: data.effectId, callId: data.callId, name: data.name, ok: true } });
  if (data.permission) {
    const { target, classes, ...decided } = data.permission as { target?: string; classes?: string[] };
    views.push({ ...record, type: 'permission.decided', v: recordVersion('permission.decided'), data: { effectId: data.effectId, callId: data.callId, tool: data.name, ...(target === undefined ? {} : { target }), ...decided, ...(classes ? { classes } : {}) } });
  }
  return views;
};

/** The facts a step record folded in, as the records they replaced (`input`: the step's input, whose cause they share). */
export const factViewsOf = (step: RecordEnvelope, input?: RecordEnvelope): RecordEnvelope[] => {
  const facts = (step.data as StepDerived).facts;
  if (!facts) return [];
  const views: RecordEnvelope[] = [];
  for (const [type, data, corr, offset] of facts) {
    const view = viewOf(step, { type, actor: step.actor, data, ...(typeof corr === 'string' ? { corr } : {}) }, { cause: input?.cause, at: step.at + (offset ?? 0) });
    if (type === 'tool.started') views.push(...startedChecks(view));
    views.push(view);
  }
  return views;
};

/** The derived entries of a step record, as the records they replaced (`actor.transitioned`, `effect.requested`, …). */
export const derivedViewsOf = (step: RecordEnvelope): RecordEnvelope[] => {
  const derived = (step.data as StepDerived).derived;
  return derived.map((entry) => viewOf(step, draftOfEntry(entry, derived)));
};

/**
 * A record as the records it stands for: a step record's folded facts and derived entries (facts first), a
 * `tool.started` with folded checks as its validation, permission and start; any other record as itself. For reading
 * a log in the order the runtime produced it, use `flattenRecords` or `createEntryReader`, which put a step's facts
 * before its input.
 */
export const entriesOf = (record: RecordEnvelope): RecordEnvelope[] => {
  if (record.type === stepRecordType) return [...factViewsOf(record), ...derivedViewsOf(record)];
  if (record.type === 'tool.started' && ((record.data as { validated?: unknown }).validated === true || (record.data as { permission?: unknown }).permission)) return [...startedChecks(record), record];
  return [record];
};

/**
 * Reads records (in seq order) as the records the runtime produced them as, in that order: a step's folded facts, then
 * its input, then what the step derived — the layout of logs written before step records, which readers that fold a
 * log record by record (spans, the live renderer, the transcript) expect. Once the reader has seen a step record (the
 * log is in the step layout), an input is held until the next record — its step record, written in the same batch;
 * `flush` releases one still held at the end.
 */
export const createEntryReader = () => {
  let held: RecordEnvelope | undefined;
  let stepLayout = false;
  const release = (record: RecordEnvelope): RecordEnvelope[] => {
    if (stepLayout && recordClassOf(record.type) === 'input') {
      held = record;
      return [];
    }
    if (record.type === stepRecordType) stepLayout = true;
    return entriesOf(record);
  };
  return {
    push(record: RecordEnvelope): RecordEnvelope[] {
      const input = held;
      if (!input) return release(record);
      held = undefined;
      if (record.type === stepRecordType && record.cause === input.id) return [...factViewsOf(record, input), input, ...derivedViewsOf(record)];
      return [input, ...release(record)];
    },
    flush(): RecordEnvelope[] {
      const input = held;
      held = undefined;
      return input ? [input] : [];
    },
  };
};

/** Records (in seq order) as the records they stand for, in the order the runtime produced them (see `createEntryReader`). */
export const flattenRecords = (records: Iterable<RecordEnvelope>): RecordEnvelope[] => {
  const reader = createEntryReader();
  const flat: RecordEnvelope[] = [];
  for (const record of records) for (const entry of reader.push(record)) flat.push(entry);
  for (const entry of reader.flush()) flat.push(entry);
  return flat;
};

/** The seqs of the legacy records an upcast step record stands for (undefined for a record that was written as one). */
const legacySeqs = new WeakMap<RecordEnvelope, readonly number[]>();

/** The seqs of the records a step record stands for: its own, or those of the legacy records it was upcast from. */
export const seqsOf = (record: RecordEnvelope): readonly number[] => legacySeqs.get(record) ?? [record.seq];

/** True for a step record the trail upcaster made from legacy records (its witnesses keep their lists). */
export const isUpcastStep = (record: RecordEnvelope): boolean => legacySeqs.has(record);

/**
 * The trail upcaster: a log written before step records, read as one. After each input, the derived records of its step
 * (`actor.transitioned`, `effect.requested`, `turn.*`, `session.ended`, … — those caused by the input, up to the next
 * input) become one `step.derived` in the place of the first of them, with its seq and id; the facts between them stay
 * where they are. Records already in the step layout pass through, so it is safe on any log and on a mix (an old
 * session resumed by this build). `seqsOf` gives an upcast step record's original seqs (replay names them).
 */
export const upcastLegacySteps = (records: readonly RecordEnvelope[]): RecordEnvelope[] => {
  const upcast: RecordEnvelope[] = [];
  let input: RecordEnvelope | undefined;
  let step: { record: RecordEnvelope; entries: StepEntry[]; seqs: number[] } | undefined;
  for (const record of records) {
    const recordClass = recordClassOf(record.type);
    if (recordClass === 'input') {
      input = record;
      step = undefined;
      upcast.push(record);
      continue;
    }
    const legacy = recordClass !== 'effect' || isDerivedType(record.type);
    if (!legacy || record.type === stepRecordType || !input || record.cause !== input.id) {
      upcast.push(record);
      continue;
    }
    const entry = entryOf({ type: record.type, actor: record.actor, data: record.data as Record<string, unknown>, ...(record.corr === undefined ? {} : { corr: record.corr }) }, true);
    if (step) {
      step.entries.push(entry);
      step.seqs.push(record.seq);
      continue;
    }
    const entries = [entry];
    const seqs = [record.seq];
    const stepRecord: RecordEnvelope = { stream: record.stream, seq: record.seq, id: record.id, type: stepRecordType, v: recordVersion(stepRecordType), at: record.at, actor: input.actor, cause: input.id, data: { derived: entries } };
    legacySeqs.set(stepRecord, seqs);
    step = { record: stepRecord, entries, seqs };
    upcast.push(stepRecord);
  }
  return upcast;
};

/** The record type an entry stands for. */
const typeOfEntry = (entry: StepEntry): string => (entry[0] === 0 ? 'actor.transitioned' : entry[0] === 1 ? 'effect.requested' : entry[2]);

/** The entries nearly every step derives (transitions, intents, the turn witnesses): most readers want none of them. */
const commonEntryTypes: readonly string[] = ['actor.transitioned', 'effect.requested', 'turn.call-spec', 'turn.requests', 'turn.results', 'turn.uses', 'turn.join-closed', 'turn.mutation-ready'];
const commonEntryTypeSet: ReadonlySet<string> = new Set(commonEntryTypes);
/** Per `wants` predicate: whether it accepts any common entry type (asked once per predicate, not per record). */
const wantsCommon = new WeakMap<(type: string) => boolean, boolean>();
/** Per step record (its data): the distinct types of its entries other than the common ones — usually none. */
const rareTypes = new WeakMap<StepDerived, readonly string[]>();
const noTypes: readonly string[] = [];

const rareTypesOf = (step: StepDerived): readonly string[] => {
  let types = rareTypes.get(step);
  if (types === undefined) {
    let found: string[] | undefined;
    for (const entry of step.derived) {
      if (entry[0] === 0 || entry[0] === 1 || commonEntryTypeSet.has(entry[2])) continue;
      if (!found) found = [entry[2]];
      else if (!found.includes(entry[2])) found.push(entry[2]);
    }
    types = found ?? noTypes;
    rareTypes.set(step, types);
  }
  return types;
};

/** Whether `wants` accepts any derived entry of `step`, without building or even typing each entry. */
const wantsDerived = (step: StepDerived, wants: (type: string) => boolean): boolean => {
  let common = wantsCommon.get(wants);
  if (common === undefined) wantsCommon.set(wants, (common = commonEntryTypes.some(wants)));
  if (common) return true;
  for (const type of rareTypesOf(step)) if (wants(type)) return true;
  return false;
};

/** Whether `wants` accepts any of a step's folded facts (a `tool.started` stands for its validation and allow too). */
const wantsFacts = (facts: readonly StepFact[], wants: (type: string) => boolean): boolean => {
  for (const [type] of facts) if (wants(type) || (type === 'tool.started' && (wants('tool.validated') || wants('permission.decided')))) return true;
  return false;
};

/**
 * Fold a step record into a view as the records it stands for, in order (its facts, then what it derived); with
 * `wants`, only the entries of the types it accepts are built and applied (a projection that reads few types pays for
 * those alone), and a step none of whose entries it accepts costs a lookup or two: `wants` must answer the same for a
 * type every time (its answers on the common entry types are kept per predicate). Any other record is applied as itself.
 */
export const foldEntries = <View>(view: View, record: RecordEnvelope, apply: (view: View, entry: RecordEnvelope) => View, wants?: (type: string) => boolean): View => {
  if (record.type !== stepRecordType) {
    if (record.type === 'tool.started') {
      let next = view;
      for (const entry of entriesOf(record)) if (!wants || wants(entry.type)) next = apply(next, entry);
      return next;
    }
    return !wants || wants(record.type) ? apply(view, record) : view;
  }
  const step = record.data as StepDerived;
  let next = view;
  if (step.facts && (!wants || wantsFacts(step.facts, wants))) {
    for (const entry of factViewsOf(record)) if (!wants || wants(entry.type)) next = apply(next, entry);
  }
  if (wants && !wantsDerived(step, wants)) return next;
  for (const entry of step.derived) {
    if (wants && !wants(typeOfEntry(entry))) continue;
    next = apply(next, viewOf(record, draftOfEntry(entry, step.derived)));
  }
  return next;
};

/**
 * The `session.ended` a record holds for `actor` (default the root agent): the record itself, or the entry of a step
 * record (as that record) — what a live subscriber waits for, found without building the step's other entries.
 */
export const sessionEndedIn = (record: RecordEnvelope, actor = 'root'): RecordEnvelope | undefined => {
  if (record.type === 'session.ended') return record.actor === actor ? record : undefined;
  if (record.type !== stepRecordType) return undefined;
  const step = record.data as StepDerived;
  // Most steps end nothing: known from the step's rare entry types (kept per step), without a look at each entry.
  if (!rareTypesOf(step).includes('session.ended')) return undefined;
  for (const entry of step.derived) if (entry[0] === 2 && entry[2] === 'session.ended' && entry[1] === actor) return viewOf(record, draftOfEntry(entry));
  return undefined;
};

/** One actor transition as the viewer reads it: the actor and the state it entered. */
export interface ActorMove {
  actor: string;
  to: StateValue;
}

/**
 * The actor transitions a record holds, in the order they happened: a step record's transition entries, a legacy
 * `actor.transitioned` record itself, nothing for any other record. What "the state of every actor at seq" reads.
 */
export const transitionsOf = (record: Pick<RecordEnvelope, 'type' | 'data'>): ActorMove[] => {
  if (record.type === 'actor.transitioned') {
    const data = record.data as { actor: string; to: StateValue };
    return [{ actor: data.actor, to: data.to }];
  }
  if (record.type !== stepRecordType) return [];
  const moves: ActorMove[] = [];
  for (const entry of (record.data as StepDerived).derived) if (entry[0] === 0) moves.push({ actor: entry[1], to: stateOfPath(entry[4]) as StateValue });
  return moves;
};
