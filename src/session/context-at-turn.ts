import type { RecordEnvelope } from '../../models/envelope.js';
import { ContextProjected, isPartialLedger } from '../../models/context.records.js';
import type { EffectRequested } from '../../models/effect.records.js';
import type { ModelMessage, ModelToolDescription } from '../../models/model-contract.js';
import { SessionCreated } from '../../models/session.records.js';
import type { EventStore } from '../../stores/event-store.js';
import type { CapabilityDiff } from '../../models/capability.records.js';
import { projectModelInput, type ContextPolicyOptions } from '../projections/context-policy.js';
import { contextProjection } from '../projections/context.view.js';
import { memoryProjection } from '../projections/memory.view.js';
import { ProjectionError } from '../projections/projection-errors.js';
import { rebuildView } from '../projections/projection.js';
import { tokenCounterFor } from '../projections/token-counter.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import { defaultSystemPrompt, promptFlavorOf } from './system-prompt.js';
import { blobText } from './session-records.js';
import { canonicalEqual } from '../host/canonical-equal.js';
import { flattenRecords } from '../host/step-record.js';
import type { EnvironmentCaptured, InstructionsLoaded } from '../../models/instructions.records.js';
import type { EnvironmentPart } from '../projections/context-fixed.js';
import type { ProjectInstructionsPart } from '../projections/context-policy.js';

/** What the model saw at one turn: the recorded ledger and exact input, or a reconstruction for old logs. */
export interface ContextAtTurn {
  turn: number;
  seq: number | undefined;
  reconstructed: boolean;
  ledger: Omit<ContextProjected, 'input'> & { input?: string };
  /**
   * The ledger's lists were rebuilt from the log (the session recorded their sizes only): `matches` when the rebuilt
   * messages are exactly the recorded input's, so the rebuilt lists explain what the model saw.
   */
  rebuilt?: { matches: boolean };
  input: { messages: ModelMessage[]; tools: ModelToolDescription[] };
  /** The actor's visible set for the turn as its `capability.diff` records define it (absent for a session without a catalog). */
  capabilities?: { visible: string[]; deferred: number; diffSeq: number };
}

/** The visible set in force when `request` asked for the model call: every `capability.diff` of the actor up to it. */
const visibleSetAt = (records: readonly RecordEnvelope[], actor: string, request: RecordEnvelope): ContextAtTurn['capabilities'] => {
  const visible = new Set<string>();
  let last: { seq: number; deferred: number } | undefined;
  for (const record of records) {
    if (record.seq > request.seq) break;
    if (record.type !== 'capability.diff' || record.actor !== actor) continue;
    const diff = record.data as CapabilityDiff;
    for (const entry of diff.removed) visible.delete(entry.name);
    for (const entry of diff.added) visible.add(entry.name);
    last = { seq: record.seq, deferred: diff.deferred };
  }
  return last ? { visible: [...visible].sort(), deferred: last.deferred, diffSeq: last.seq } : undefined;
};

/**
 * Find what the model of `actor` saw at `turn` (default: its last turn): the `context.projected` record of the
 * turn's last attempt (or `attempt`) and the exact input blob it references. A turn recorded before rein wrote
 * `context.projected` is reconstructed from the log prefix with today's policy and default system prompt, and
 * says so. Read-only. `ACTOR_NOT_FOUND` when the session has no such actor, `TURN_NOT_FOUND` when the actor had no
 * such turn; `CONTEXT_NOT_RECORDED` when the input blob
 * is gone.
 */
export const contextAtTurn = async (
  store: Pick<EventStore, 'readBlob'>,
  records: readonly RecordEnvelope[],
  options: { turn?: number; actor?: string; attempt?: number; registry: ToolRegistry; policy?: ContextPolicyOptions },
): Promise<ContextAtTurn> => {
  const actor = options.actor ?? 'root';
  // The records as those they stand for (a step record's intents, folded context and capability diffs), in log order.
  const flat = flattenRecords(records);
  const requests = flat.filter((record) => record.type === 'effect.requested' && record.actor === actor && (record.data as EffectRequested).kind === 'callModel');
  const turns = requests.map((record) => Number((record.data as EffectRequested).args.turn));
  const turn = options.turn ?? turns[turns.length - 1];
  const request = requests.find((record) => Number((record.data as EffectRequested).args.turn) === turn);
  if (turn === undefined || !request) {
    // An actor the session never had is not a turn problem: say so, with the actors that have model turns.
    const withTurns = [...new Set(flat.filter((record) => record.type === 'effect.requested' && (record.data as EffectRequested).kind === 'callModel').map((record) => record.actor))];
    const actors = `actors with model turns: ${withTurns.join(', ') || 'none'}`;
    if (!flat.some((record) => record.actor === actor)) throw new ProjectionError('ACTOR_NOT_FOUND', `this session has no actor ${actor}; ${actors}`);
    if (turn === undefined) throw new ProjectionError('TURN_NOT_FOUND', `${actor} has no model turn; ${actors}`);
    throw new ProjectionError('TURN_NOT_FOUND', `${actor} has no model turn ${turn}; turns: ${turns.join(', ') || 'none'}`);
  }
  const effectId = (request.data as EffectRequested).effectId;
  const projected = flat.filter((record) => record.type === 'context.projected' && (record.data as { effectId?: unknown }).effectId === effectId && record.actor === actor).map((record) => ({ record, data: ContextProjected.parse(record.data) }));
  const chosen = options.attempt === undefined ? projected[projected.length - 1] : projected.find((entry) => entry.data.attempt === options.attempt);
  const created = SessionCreated.parse(records[0]?.data);
  /**
   * The project instructions and the environment block the projection before `before` (a record of `flat`) saw: the
   * last `instructions.loaded` / `environment.captured` ahead of it (written with the call that first saw them), their
   * text read back from the blob store.
   */
  const instructionsBefore = async (before: RecordEnvelope): Promise<{ instructions?: ProjectInstructionsPart; environment?: EnvironmentPart }> => {
    let loaded: InstructionsLoaded | undefined;
    let captured: EnvironmentCaptured | undefined;
    for (const record of flat) {
      if (record === before) break;
      if (record.type === 'instructions.loaded') loaded = record.data as InstructionsLoaded;
      if (record.type === 'environment.captured') captured = record.data as EnvironmentCaptured;
    }
    const environmentText = captured ? await blobText(store, before.stream)(captured.text) : undefined;
    const environment = captured && environmentText !== undefined ? { environment: { text: environmentText, ref: captured.text } } : {};
    if (!loaded || loaded.files.length === 0) return environment;
    const text = await blobText(store, before.stream)(loaded.text);
    if (text === undefined) return environment;
    return { ...environment, instructions: { text, ref: loaded.text, tokens: loaded.tokens, files: loaded.files.map((file) => file.path), cut: loaded.files.some((file) => file.cut === true) } };
  };
  /** The projection rebuilt from the log up to `through` with today's policy and default system prompt. */
  const rebuild = async (through: number, at: number, before: RecordEnvelope, compactionLevel?: number) => {
    const prefix = records.filter((record) => record.seq <= through);
    const tools = options.registry.describe(created.tools);
    const projection = projectModelInput({
      ...(await instructionsBefore(before)),
      view: rebuildView(contextProjection(), prefix),
      actor,
      memory: rebuildView(memoryProjection, prefix),
      systemPrompt: defaultSystemPrompt(created.workspace, promptFlavorOf(created.provider.name)),
      tools,
      counter: await tokenCounterFor(created.provider.model),
      ...(options.policy ? { options: options.policy } : {}),
      ...(created.provider.model ? { model: created.provider.model } : {}),
      now: at,
      ...(compactionLevel === undefined ? {} : { compactionLevel }),
    });
    return { projection, tools };
  };
  if (chosen) {
    const raw = await blobText(store, chosen.record.stream)(chosen.data.input);
    if (raw === undefined) throw new ProjectionError('CONTEXT_NOT_RECORDED', `the model input ${chosen.data.input} of turn ${turn} is missing from the blob store`);
    const capabilities = visibleSetAt(flat, actor, request);
    const input = JSON.parse(raw) as ContextAtTurn['input'];
    if (!isPartialLedger(chosen.data)) return { turn, seq: chosen.record.seq, reconstructed: false, ledger: chosen.data, input, ...(capabilities ? { capabilities } : {}) };
    // Recorded with its memory and hook decisions only (context.projected v2): the rest of the lists is rebuilt from the
    // log the projection read, and checked against the recorded input — it explains it exactly when the rebuilt messages
    // are the recorded ones (a session that used memory or hooks, or another system prompt, does not match).
    const { projection } = await rebuild(chosen.data.throughSeq, chosen.record.at, chosen.record, chosen.data.compactionLevel);
    const { messages, included, excluded, compacted } = projection;
    const notMemory = (entry: { source: string }) => entry.source !== 'memory' && entry.source !== 'hooks';
    const ledger = { ...chosen.data, included: [...included.filter(notMemory), ...(chosen.data.included ?? [])], excluded: [...excluded.filter(notMemory), ...(chosen.data.excluded ?? [])], compacted };
    return { turn, seq: chosen.record.seq, reconstructed: false, ledger, input, rebuilt: { matches: canonicalEqual(messages, input.messages) }, ...(capabilities ? { capabilities } : {}) };
  }
  if (options.attempt !== undefined) throw new ProjectionError('TURN_NOT_FOUND', `turn ${turn} has no attempt ${options.attempt}`);
  const { projection, tools } = await rebuild(request.seq, request.at, request);
  const { messages, ...ledger } = projection;
  return { turn, seq: undefined, reconstructed: true, ledger: { effectId: String((request.data as EffectRequested).effectId), turn, attempt: 1, ...(created.provider.model ? { model: created.provider.model } : {}), ...ledger }, input: { messages, tools } };
};
