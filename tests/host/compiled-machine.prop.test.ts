import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor, type ActorScope, type AnyActorRef, type AnyMachineSnapshot, type AnyStateMachine, type EventObject } from 'xstate';
import { recordClassOf } from '../../models/records.js';
import { SessionCreated } from '../../models/session.records.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import { childSessionMachine, sessionMachine, type SessionEvent } from '../../machines/session.machine.js';
import { turnMachine, type TurnContext, type TurnEvent } from '../../machines/turn.machine.js';
import { compiledOf, compileRefusalOf } from '../../src/host/compiled-machine.js';
import { definitionOf, interpretedOf, standInFor } from '../../src/host/machine-stand-ins.js';
import { createSessionTree } from '../../src/host/session-tree.js';
import { upcastLegacySteps } from '../../src/host/step-record.js';
import { graphableMachines } from '../../src/cli/commands/graph.action.js';
import { parseFixture } from '../../scripts/fixtures/fixture-format.js';
import { runBenchSession } from '../../scripts/bench/bench-support.js';
import { runDelegation } from '../../scripts/bench/delegation.bench.js';
import { createMemoryEventStore } from '../../stores/index.js';
import { makeTempDir, propertyRuns } from '../support/temp-dir.js';
import { events as sessionEventsIn, input as sessionInput, type Snapshot as SessionSnapshot } from '../machines/session.fixtures.js';
import { turnInput } from '../machines/turn.fixtures.js';

/*
 * The compiled form of the machines (src/host/compiled-machine.ts) against xstate's own `transition`, its oracle: random
 * event sequences from each machine's event alphabet with generated payloads, and the inputs of recorded sessions (the
 * golden logs and a bench session) through whole trees. After every event: the state value, context, status, output,
 * error, children (their ids, sources, system ids and machines), the active state nodes, and every action handed to
 * the executor (type, params, the context and event it saw) — what the host derives its records from — are equal; for
 * trees, the derived drafts byte for byte and the persisted snapshot of every actor.
 */

const isRef = (value: object): value is AnyActorRef => 'sessionId' in value && 'send' in value && 'src' in value;

/** A value with refs named (id, source, system id, machine) and functions marked: what two runs can be compared by. */
const plain = (value: unknown, depth = 0): unknown => {
  if (typeof value === 'function') return '[function]';
  if (value === null || typeof value !== 'object' || depth > 40) return value;
  if (isRef(value)) {
    const ref = value as AnyActorRef & { _syncSnapshot?: boolean; systemId?: string };
    return { ref: ref.id, src: ref.src, systemId: ref.systemId, syncSnapshot: ref._syncSnapshot, machine: definitionOf(ref)?.id };
  }
  if (value instanceof Error) return { error: value.message };
  if (Array.isArray(value)) return value.map((each) => plain(each, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, each]) => [key, plain(each, depth + 1)]));
};

const viewOf = (snapshot: AnyMachineSnapshot) => ({
  value: snapshot.value,
  status: snapshot.status,
  context: plain(snapshot.context),
  output: plain(snapshot.output),
  error: snapshot.error === undefined ? undefined : String(snapshot.error),
  children: plain(snapshot.children),
  nodes: ((snapshot as unknown as { _nodes: Array<{ id: string }> })._nodes ?? []).map((node) => node.id).sort(),
  historyValue: snapshot.historyValue,
});

/** One side of a comparison: a machine's logic, an actor scope whose executor logs every action, the snapshot. */
interface Side {
  logic: { getInitialSnapshot(scope: unknown, input: unknown): AnyMachineSnapshot; transition(snapshot: AnyMachineSnapshot, event: EventObject, scope: unknown): AnyMachineSnapshot };
  scope: ActorScope<AnyMachineSnapshot, EventObject>;
  log: unknown[];
  snapshot: AnyMachineSnapshot;
}

const sideOf = (definition: AnyStateMachine, compiled: boolean, input: unknown): Side => {
  const machine = interpretedOf(definition);
  const registry = new Map<string, AnyActorRef>();
  let ids = 0;
  const system = {
    _bookId: () => `t:${ids++}`,
    _register: (sessionId: string) => sessionId,
    _unregister: () => {},
    _set: (systemId: string, ref: AnyActorRef) => void registry.set(systemId, ref),
    get: (systemId: string) => registry.get(systemId),
    getAll: () => Object.fromEntries(registry),
    _sendInspectionEvent: () => {},
    _relay: () => {},
    scheduler: { schedule: () => {}, cancel: () => {}, cancelAll: () => {} },
    inspect: () => ({ unsubscribe() {} }),
    start: () => {},
    _clock: { setTimeout: () => 0, clearTimeout: () => {} },
    _logger: () => {},
    getSnapshot: () => ({ _scheduledEvents: {} }),
    _snapshot: { _scheduledEvents: {} },
  };
  const self = createActor(standInFor(definition), { id: 'root' }) as unknown as AnyActorRef;
  (self as { system: unknown }).system = system;
  const log: unknown[] = [];
  const scope = {
    self,
    id: 'root',
    sessionId: self.sessionId,
    logger: () => {},
    defer: () => {},
    system,
    stopChild: () => {},
    emit: () => {},
    actionExecutor: (action: { type: string; params?: unknown; info?: { context?: unknown; event?: EventObject } }) =>
      log.push({ type: action.type, params: plain(action.params), context: plain(action.info?.context), event: action.info?.event?.type }),
  } as unknown as ActorScope<AnyMachineSnapshot, EventObject>;
  const logic = (compiled ? compiledOf(machine)! : machine) as unknown as Side['logic'];
  return { logic, scope, log, snapshot: logic.getInitialSnapshot(scope, input) };
};

/** Deliver one event to both sides and compare everything the host reads and records. */
const step = (oracle: Side, compiled: Side, event: EventObject | undefined): void => {
  const contexts = [oracle.snapshot.context, compiled.snapshot.context];
  if (event) {
    let thrown: unknown;
    let compiledThrown: unknown;
    try {
      oracle.snapshot = oracle.logic.transition(oracle.snapshot, event, oracle.scope);
    } catch (error) {
      thrown = error;
    }
    try {
      compiled.snapshot = compiled.logic.transition(compiled.snapshot, event, compiled.scope);
    } catch (error) {
      compiledThrown = error;
    }
    expect(String(compiledThrown)).toBe(String(thrown));
    // A new context object is what makes the host record a transition (pure-tree.ts `record`): it changes when xstate's does.
    expect(compiled.snapshot.context !== contexts[1]).toBe(oracle.snapshot.context !== contexts[0]);
  }
  expect(viewOf(compiled.snapshot)).toEqual(viewOf(oracle.snapshot));
  expect(compiled.log).toEqual(oracle.log);
  oracle.log.length = 0;
  compiled.log.length = 0;
};

const runs = propertyRuns(150);

describe('the compiled machines', () => {
  it('are the machines `rein graph` draws, every one of them compiled (none falls back to xstate)', () => {
    for (const definition of [...(Object.values(graphableMachines) as AnyStateMachine[]), childSessionMachine as AnyStateMachine]) {
      const machine = interpretedOf(definition);
      expect(compileRefusalOf(machine)).toBeUndefined();
      const compiled = compiledOf(machine)!;
      // Derived from the same objects: the interpreted machine is the definition with stand-in children, the same config.
      expect(compiled.machine).toBe(machine);
      expect(machine.config).toBe(definition.config);
    }
  });

  it('refuse at compile time what they do not implement', async () => {
    const { createMachine } = await import('xstate');
    const parallel = createMachine({ id: 'p', type: 'parallel', states: { a: {}, b: {} } });
    expect(compileRefusalOf(parallel)).toMatch(/'p' cannot be compiled: state 'p' is a parallel state/);
    expect(compiledOf(parallel)).toBeUndefined();
    const delayed = createMachine({ id: 'd', initial: 'a', states: { a: { after: { 10: 'b' } }, b: {} } });
    expect(compileRefusalOf(delayed)).toMatch(/delayed transitions/);
    const exits = createMachine({ id: 'x', initial: 'a', states: { a: { exit: () => {} } } });
    expect(compileRefusalOf(exits)).toMatch(/exit actions/);
  });

  it('take the turn machine through every event sequence as xstate does', () => {
    const variants = ['ok', 'NotFound', 'InvalidInput', 'Cancelled', 'Denied', 'Timeout'] as const;
    const turnEvent = fc.oneof(
      fc.record({ kind: fc.constant('settle' as const), call: fc.nat(6), variant: fc.constantFrom(...variants), observation: fc.string({ maxLength: 12 }), truncated: fc.boolean() }),
      fc.record({ kind: fc.constant('uses' as const), drop: fc.nat(3), discard: fc.boolean() }),
    );
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('read', 'write', 'bash', 'rm_rf'), { minLength: 0, maxLength: 4 }),
        fc.constantFrom('json', 'text'),
        fc.constantFrom('tool_use', 'end_turn'),
        fc.array(turnEvent, { maxLength: 12 }),
        (names, actionMode, stopReason, recipes) => {
          const input = turnInput({ names, callSpec: { actionMode: actionMode as 'json' }, stopReason });
          const oracle = sideOf(turnMachine, false, input);
          const compiled = sideOf(turnMachine, true, input);
          step(oracle, compiled, undefined);
          for (const recipe of recipes) {
            const context = oracle.snapshot.context as TurnContext;
            let event: TurnEvent;
            if (recipe.kind === 'settle') {
              const call = input.toolCalls[recipe.call];
              const errorCode = recipe.variant === 'ok' ? undefined : recipe.variant;
              event = {
                type: 'tool.settled',
                callId: call?.callId ?? `root:e1.${recipe.call}`,
                name: call?.name ?? 'read',
                status: errorCode ? 'error' : 'ok',
                ...(errorCode ? { errorCode } : {}),
                ...(errorCode === 'InvalidInput' ? { failedStage: 'schema' } : {}),
                observation: recipe.observation,
                ...(recipe.truncated ? { truncated: { omittedBytes: 10, artifact: 'a' } } : {}),
              };
            } else {
              const rows = context.results.slice(recipe.drop);
              event = { type: 'turn.uses', uses: rows.map((row) => (recipe.discard ? { callId: row.callId, disposition: 'discarded_with_reason' as const, reason: 'cancelled' as const } : { callId: row.callId, disposition: 'consumed' as const, ref: 'synthesis' })) };
            }
            step(oracle, compiled, event);
          }
        },
      ),
      { numRuns: runs },
    );
  });

  it('take the session machine through every event sequence as xstate does', () => {
    const choice = fc.record({ pick: fc.nat(), elapsedMs: fc.option(fc.nat(6_000), { nil: undefined }), tokens: fc.option(fc.nat(1_200), { nil: undefined }) });
    fc.assert(
      fc.property(fc.array(choice, { maxLength: 30 }), fc.boolean(), (choices, conversation) => {
        const input = { ...sessionInput, ...(conversation ? { conversation: true } : {}) };
        const oracle = sideOf(sessionMachine, false, input);
        const compiled = sideOf(sessionMachine, true, input);
        step(oracle, compiled, undefined);
        for (const { pick, elapsedMs, tokens } of choices) {
          if (oracle.snapshot.status !== 'active') break;
          const alphabet = sessionEventsIn(oracle.snapshot as unknown as SessionSnapshot);
          let event = alphabet[pick % alphabet.length]! as SessionEvent & { elapsedMs?: number; usage?: unknown };
          if (elapsedMs !== undefined && 'elapsedMs' in event) event = { ...event, elapsedMs };
          if (tokens !== undefined && 'usage' in event) event = { ...event, usage: { inputTokens: tokens, outputTokens: 10 } };
          step(oracle, compiled, event as EventObject);
        }
        // And the end: a stop, as the host sends it to a stopped actor.
        if (oracle.snapshot.status === 'active') step(oracle, compiled, { type: 'xstate.stop' });
      }),
      { numRuns: runs },
    );
  });
});

/** Apply a recorded session's inputs to a compiled tree and an xstate one; compare after every input. */
const compareTrees = (inputs: readonly RecordEnvelope[]): number => {
  const [created, ...rest] = inputs;
  const data = SessionCreated.parse(created!.data);
  const a = createSessionTree(data, { compiled: true });
  const b = createSessionTree(data, { compiled: false });
  expect(JSON.stringify(a.drafts)).toBe(JSON.stringify(b.drafts));
  let compared = 0;
  for (const record of rest) {
    let compiledDrafts: unknown;
    let oracleDrafts: unknown;
    try {
      compiledDrafts = a.tree.apply(record);
    } catch (error) {
      compiledDrafts = String(error);
    }
    try {
      oracleDrafts = b.tree.apply(record);
    } catch (error) {
      oracleDrafts = String(error);
    }
    expect(JSON.stringify(compiledDrafts)).toBe(JSON.stringify(oracleDrafts));
    expect(a.tree.value).toEqual(b.tree.value);
    expect(a.tree.done).toBe(b.tree.done);
    expect(a.tree.actorCount()).toBe(b.tree.actorCount());
    expect(a.tree.agents()).toEqual(b.tree.agents());
    expect(a.tree.pendingApprovals()).toEqual(b.tree.pendingApprovals());
    expect(a.tree.drainStopped()).toEqual(b.tree.drainStopped());
    expect(plain(a.tree.persisted())).toEqual(plain(b.tree.persisted()));
    compared++;
  }
  a.tree.stop();
  b.tree.stop();
  return compared;
};

const inputsOf = (records: readonly RecordEnvelope[]): RecordEnvelope[] => [...upcastLegacySteps(records)].filter((record) => recordClassOf(record.type) === 'input');

describe('the compiled trees', () => {
  it('derive the golden logs’ drafts and snapshots exactly as xstate does, input by input', async () => {
    const directory = fileURLToPath(new URL('../fixtures/logs/', import.meta.url));
    let compared = 0;
    for (const file of (await readdir(directory)).filter((name) => name.endsWith('.ndjson')).sort()) {
      const fixture = parseFixture(await readFile(join(directory, file), 'utf8'), file);
      const records = fixture.records.map((record) => ({ ...record, stream: fixture.stream }) as RecordEnvelope);
      const inputs = inputsOf(records);
      if (inputs[0]?.type !== 'session.created') continue;
      compared += compareTrees(inputs);
    }
    expect(compared).toBeGreaterThan(100);
  });

  it('keep what they cache bounded: a session of more turns adds no entries (the done events of its turns name new actors)', async () => {
    const cached = (): number => compiledOf(interpretedOf(sessionMachine))!.cachedEventTypes + compiledOf(interpretedOf(turnMachine))!.cachedEventTypes;
    const replay = async (roundTrips: number): Promise<void> => {
      const run = await runBenchSession({ roundTrips, durability: 'memory' });
      try {
        const [created, ...rest] = inputsOf(await run.store.read(run.sessionId));
        const made = createSessionTree(SessionCreated.parse(created!.data));
        for (const record of rest) made.tree.apply(record);
        made.tree.stop();
      } finally {
        await run.cleanup();
      }
    };
    await replay(5);
    const after5 = cached();
    await replay(40);
    expect(cached()).toBe(after5);
  });

  it('derive a bench session’s drafts and snapshots exactly as xstate does, input by input', async () => {
    const run = await runBenchSession({ roundTrips: 30, durability: 'memory' });
    try {
      const inputs = inputsOf(await run.store.read(run.sessionId));
      expect(compareTrees(inputs)).toBeGreaterThan(60);
    } finally {
      await run.cleanup();
    }
  });

  it('derive a delegation’s drafts and snapshots exactly as xstate does: its children map, changed in place as each child stops, stays xstate’s', async () => {
    const workspace = await makeTempDir();
    const store = createMemoryEventStore();
    try {
      await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
      await runDelegation(24, store, workspace.path);
      const [stream] = await store.streams();
      const inputs = inputsOf(await store.read(stream!.stream));
      expect(inputs.filter((record) => record.type === 'model.responded').length).toBe(26);
      expect(compareTrees(inputs)).toBeGreaterThan(50);
    } finally {
      await store.close();
      await workspace.remove();
    }
  });
});
