import { ContextProjected, isPartialLedger } from '../../models/context.records.js';
import type { EventStore } from '../../stores/event-store.js';
import { upcastRecords } from '../../stores/upcasters.js';
import { ProjectionError } from '../projections/projection-errors.js';
import { valuesOf } from '../projections/persistent-map.js';
import { rebuildMemoryView } from '../projections/rebuild.js';
import type { TraceTurn } from '../projections/trace.view.js';
import { contextAtTurn } from '../session/context-at-turn.js';
import { blobText, readSession } from '../session/session-records.js';
import { turnsOf } from '../trace/trace-evidence.js';
import { entriesOf, transitionsOf } from '../host/step-record.js';
import { builtinTools } from '../tools/builtin-tools.js';
import { ToolRegistry } from '../tools/tool-registry.js';
import type { ActorStates, ContextBody, MemoryBody } from './api-schemas.js';
import type { SessionDigest } from './session-digest.js';

type Input = ContextBody['input'];

/** The exact input a turn's last recorded attempt sent (its `context.projected` record, read by seq, and its blob). */
const recordedInput = async (store: EventStore, sessionId: string, turn: TraceTurn): Promise<{ seq: number; ledger: ContextProjected; input: Input } | undefined> => {
  const context = turn.contexts[turn.contexts.length - 1];
  if (!context) return undefined;
  const [record] = await store.read(sessionId, { from: context.seq, to: context.seq });
  if (!record) return undefined;
  // The fact itself, or folded into the step record at that seq.
  const projected = entriesOf(record).find((entry) => entry.type === 'context.projected' && (entry.data as { effectId?: unknown }).effectId === turn.effectId && (entry.data as { attempt?: unknown }).attempt === context.attempt);
  if (!projected) return undefined;
  const ledger = ContextProjected.parse(projected.data);
  const raw = await blobText(store, sessionId)(ledger.input);
  if (raw === undefined) throw new ProjectionError('CONTEXT_NOT_RECORDED', `the model input ${ledger.input} of turn ${turn.turn} is missing from the blob store`);
  return { seq: record.seq, ledger, input: JSON.parse(raw) as Input };
};

/**
 * What the model of `actor` saw at `turn` (default: its last), with the previous turn's input for the diff. A turn
 * with a whole recorded `context.projected` costs two reads whatever the session's length; one recorded with its
 * ledger's sizes only (v2) has its lists rebuilt from the log, as has an old log without one, which is
 * reconstructed from its prefix (`contextAtTurn`, which says so). `TURN_NOT_FOUND` / `ACTOR_NOT_FOUND` as there.
 */
export const contextOfTurn = async (store: EventStore, digest: SessionDigest, options: { actor?: string; turn?: number }): Promise<ContextBody> => {
  const actor = options.actor ?? 'root';
  const turns = turnsOf(digest.view).filter((turn) => turn.actor === actor);
  const index = options.turn === undefined ? turns.length - 1 : turns.findIndex((turn) => turn.turn === options.turn);
  const turn = turns[index];
  const before = turns[index - 1];
  const previousOf = async (): Promise<Pick<ContextBody, 'previous'>> => {
    const previous = before ? await recordedInput(store, digest.id, before).catch(() => undefined) : undefined;
    return previous && before ? { previous: { turn: before.turn, input: previous.input } } : {};
  };
  if (turn) {
    const recorded = await recordedInput(store, digest.id, turn);
    // A ledger recorded with its sizes only (context.projected v2) has its lists rebuilt from the log below.
    if (recorded && !isPartialLedger(recorded.ledger)) {
      const { input: _ref, ...ledger } = recorded.ledger;
      return { actor, turn: turn.turn, seq: recorded.seq, reconstructed: false, ledger: { ...ledger, input: recorded.ledger.input }, input: recorded.input, ...(await previousOf()) };
    }
  }
  const records = await readSession(store, digest.id);
  const shown = await contextAtTurn(store, upcastRecords(records), { registry: new ToolRegistry(builtinTools()), actor, ...(options.turn ? { turn: options.turn } : {}) });
  const previous = turn && shown.turn === turn.turn ? await previousOf() : {};
  return { actor, turn: shown.turn, ...(shown.seq === undefined ? {} : { seq: shown.seq }), reconstructed: shown.reconstructed, ledger: shown.ledger, input: shown.input, ...previous };
};

const STATE_PAGE = 500;
const STATE_PAGES = 8;

/**
 * The state of every actor as of `seq`: the newest transition of each at or before it (in the step records, or the
 * `actor.transitioned` records of older logs), found by reading back
 * from `seq` (at most a few thousand records: an actor quiet for longer than that is left out).
 */
export const actorStatesAt = async (store: EventStore, sessionId: string, seq: number): Promise<ActorStates> => {
  const actors: ActorStates['actors'] = {};
  let to = seq;
  for (let page = 0; page < STATE_PAGES && to >= 1; page++) {
    const records = await store.read(sessionId, { to, reverse: true, limit: STATE_PAGE });
    for (const record of records) {
      // Newest first: a step record's last transition of an actor is the state it is in.
      const moves = transitionsOf(record);
      for (let index = moves.length - 1; index >= 0; index--) {
        const move = moves[index]!;
        if (!(move.actor in actors)) actors[move.actor] = move.to;
      }
    }
    if ('root' in actors || records.length < STATE_PAGE) break;
    to = (records[records.length - 1]?.seq ?? 1) - 1;
  }
  return { seq, actors };
};

/** The session's memory view: its candidate ledger and the records it promoted. */
export const memoryOf = async (store: EventStore, sessionId: string): Promise<MemoryBody> => {
  const view = rebuildMemoryView(upcastRecords(await readSession(store, sessionId)));
  return { candidates: valuesOf(view.candidates), records: valuesOf(view.records), orphans: view.orphans };
};
