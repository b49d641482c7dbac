import { describe, expect, it } from 'vitest';
import { checkMachine } from 'rein/testing';
import { maxCutContinuations, maxOutputCorrections, maxStopContinuations, sessionMachine, type SessionEvent } from '../../machines/session.machine.js';
import { baseCallSpec } from './turn.fixtures.js';
import { createMachine, type SnapshotFrom } from 'xstate';
import type { DelegatedTask } from '../../models/delegation.records.js';
import type { DelegationInput } from '../../machines/delegation.machine.js';
import { poolOf, shareBudgets } from '../../machines/delegation/budget-share.js';
import { testerTask } from '../support/delegation-fixtures.js';
import { budgets, call, events, input, usage, type Snapshot } from './session.fixtures.js';

const pendingCallIds = (snapshot: Snapshot): string[] => Object.values(snapshot.context.approvals).map((approval) => approval.callId);
const outstandingCallIds = (snapshot: Snapshot): string[] => Object.values(snapshot.context.outstanding).flatMap((effect) => (effect.callId ? [effect.callId] : []));

const isFinal = (snapshot: Snapshot) => snapshot.status === 'done';

/** The event is the current turn actor's done event (its output names the open turn). */
const isTurnDone = (event: SessionEvent, snapshot: Snapshot): boolean => {
  const turn = snapshot.context.lastTurn;
  return turn?.status === 'open' && event.type === `xstate.done.actor.${turn.path}` && (event as { output?: { turnId?: string } }).output?.turnId === turn.turnId;
};

const endedData = (actions: ReadonlyArray<{ type: string; params?: unknown }>) =>
  actions.filter((action) => action.type === 'emitRecord' && (action.params as { type: string }).type === 'session.ended').map((action) => (action.params as { data: { status: string; reason?: string; caveats?: Array<{ kind: string; detail: string }> } }).data);

/** What a final reply leaves open is on `session.ended`, never hidden behind a bare `completed` (trial5 E4, E6). */
const endingInvariants = {
  'a reply cut at max_tokens is continued while below the bound, and never ends the session as a clean completion': ({ from, event, to, actions }: { from: Snapshot; event: SessionEvent; to: Snapshot; actions: ReadonlyArray<{ type: string; params?: unknown }> }) => {
    if (!(from.matches({ running: 'awaitingModel' }) && event.type === 'model.responded' && event.effectId === from.context.awaitingModel && event.stopReason === 'max_tokens' && event.toolCalls.length === 0)) return true;
    if (to.matches('completed')) return from.context.tally.cutReplies >= maxCutContinuations && endedData(actions).some((data) => data.caveats?.some((caveat) => caveat.kind === 'reply_cut') && (data.reason ?? '').length > 0);
    return true;
  },
  'a stop hook that still objects past its bound ends the session with its objection': ({ from, event, to, actions }: { from: Snapshot; event: SessionEvent; to: Snapshot; actions: ReadonlyArray<{ type: string; params?: unknown }> }) => {
    if (!(from.matches({ running: 'awaitingModel' }) && event.type === 'model.responded' && event.effectId === from.context.awaitingModel && event.continuation !== undefined && event.toolCalls.length === 0)) return true;
    if (!to.matches('completed')) return true;
    return from.context.tally.stopContinuations >= maxStopContinuations && endedData(actions).some((data) => data.caveats?.some((caveat) => caveat.kind === 'stop_hook_objected' && caveat.detail === 'tests still fail') === true);
  },
  'only a completion carries caveats, and a clean final answer none': ({ event, actions }: { event: SessionEvent; actions: ReadonlyArray<{ type: string; params?: unknown }> }) =>
    endedData(actions).every((data) => data.caveats === undefined || (data.status === 'completed' && event.type === 'model.responded' && (event.stopReason === 'max_tokens' || event.continuation !== undefined))),
};

describe('session.machine model check', () => {
  const result = checkMachine({
    machine: sessionMachine,
    input,
    events,
    stateInvariants: {
      'completed has nothing outstanding': (snapshot) => !snapshot.matches('completed') || Object.keys(snapshot.context.outstanding).length === 0,
      'awaiting the model means exactly that call is outstanding': (snapshot) =>
        !snapshot.matches({ running: 'awaitingModel' }) || (snapshot.context.awaitingModel !== null && snapshot.context.outstanding[snapshot.context.awaitingModel]?.kind === 'callModel'),
      'running tools means only tool calls are outstanding': (snapshot) =>
        !snapshot.matches({ running: 'runningTools' }) || (Object.keys(snapshot.context.outstanding).length > 0 && Object.values(snapshot.context.outstanding).every((effect) => effect.kind === 'executeTool')),
      'idle has nothing outstanding': (snapshot) => !snapshot.matches('idle') || Object.keys(snapshot.context.outstanding).length === 0,
      'turns stay within budget': (snapshot) => snapshot.context.usage.turns <= budgets.maxTurns,
      'tool calls stay within budget': (snapshot) => snapshot.context.usage.toolCalls <= budgets.maxToolCalls,
      'every final state says why it ended unless completed': (snapshot) => !isFinal(snapshot) || snapshot.matches('completed') || snapshot.context.endReason !== null,
      'awaiting approval means questions pending and no effect outstanding': (snapshot) =>
        !snapshot.matches({ running: 'awaitingApproval' }) || (Object.keys(snapshot.context.approvals).length > 0 && Object.keys(snapshot.context.outstanding).length === 0),
      'approvals are pending only while tools run or wait': (snapshot) =>
        Object.keys(snapshot.context.approvals).length === 0 || isFinal(snapshot) || snapshot.matches({ running: 'runningTools' }) || snapshot.matches({ running: 'awaitingApproval' }),
      'completed has no pending approvals': (snapshot) => !snapshot.matches('completed') || Object.keys(snapshot.context.approvals).length === 0,
      'a call waiting for approval is not also running': (snapshot) => pendingCallIds(snapshot).every((callId) => !outstandingCallIds(snapshot).includes(callId)),
      'every pending approval has its permission actor': (snapshot) => isFinal(snapshot) || Object.keys(snapshot.context.approvals).every((approvalId) => Object.hasOwn(snapshot.children, approvalId)),
      'completed never rests on an open turn': (snapshot) => !snapshot.matches('completed') || snapshot.context.lastTurn === null || snapshot.context.lastTurn.status !== 'open',
      'completed over a blocked turn says so': (snapshot) => !snapshot.matches('completed') || snapshot.context.lastTurn?.status !== 'blocked' || (snapshot.context.endReason?.startsWith(`answered over turn ${snapshot.context.lastTurn.turnId}`) ?? false),
      'joining a turn means every call has settled': (snapshot) => !snapshot.matches({ running: 'joiningTurn' }) || (Object.keys(snapshot.context.outstanding).length === 0 && snapshot.context.lastTurn?.status === 'open'),
      'an open turn has its turn actor': (snapshot) => isFinal(snapshot) || snapshot.context.lastTurn?.status !== 'open' || Object.hasOwn(snapshot.children, snapshot.context.lastTurn.path),
    },
    transitionInvariants: {
      'final states request no effects': ({ to, actions }) => !isFinal(to) || actions.every((action) => action.type !== 'requestEffect'),
      'every requested effect is new and tracked': ({ from, to, actions }) =>
        actions
          .filter((action) => action.type === 'requestEffect')
          .every((action) => {
            const effectId = (action.params as { effectId: string }).effectId;
            return !Object.hasOwn(from.context.outstanding, effectId) && Object.hasOwn(to.context.outstanding, effectId);
          }),
      'entering a final state records session.ended once': ({ from, to, actions }) =>
        isFinal(from) || !isFinal(to) || actions.filter((action) => action.type === 'emitRecord' && (action.params as { type: string }).type === 'session.ended').length === 1,
      // Fail closed on side effects, not on speech: the model may always answer; a completion over a blocked turn
      // carries exactly that turn's findings, and any other end carries none.
      'session.ended carries the findings a completion leaves standing, and only those': ({ to, actions }) =>
        actions
          .filter((action) => action.type === 'emitRecord' && (action.params as { type: string }).type === 'session.ended')
          .every((action) => {
            const data = (action.params as { data: { status: string; unresolved?: { turnId: string; findings: Array<{ class: string }> } } }).data;
            const turn = to.context.lastTurn;
            const expected = data.status === 'completed' && turn?.status === 'blocked' && turn.findings.length > 0;
            if (!expected) return data.unresolved === undefined;
            return data.unresolved?.turnId === turn.turnId && JSON.stringify(data.unresolved.findings) === JSON.stringify(turn.findings);
          }),
      'a final answer with nothing outstanding completes': ({ from, event, to }) =>
        !(from.matches({ running: 'awaitingModel' }) && event.type === 'model.responded' && event.effectId === from.context.awaitingModel && event.toolCalls.length === 0 && event.stopReason !== 'pause_turn' && Object.keys(from.context.outstanding).length === 1 && !from.context.tally.unseenMessage) ||
        (event.type === 'model.responded' && event.continuation !== undefined && from.context.tally.stopContinuations < maxStopContinuations) ||
        (event.type === 'model.responded' && event.stopReason === 'max_tokens' && from.context.tally.cutReplies < maxCutContinuations) ||
        to.matches('completed') ||
        to.matches('budgetExhausted'),
      ...endingInvariants,
      'a model call that failed once the wall time was spent ends the session budget-exhausted, before that failed': ({ from, event, to }) =>
        !(from.matches({ running: 'awaitingModel' }) && event.type === 'model.failed' && event.effectId === from.context.awaitingModel) ||
        to.matches(event.elapsedMs >= budgets.maxWallTimeMs ? 'budgetExhausted' : 'failed'),
      'a message the model call in flight did not see gets its own call before the session may complete': ({ from, event, to, actions }) =>
        !(from.matches({ running: 'awaitingModel' }) && from.context.tally.unseenMessage && event.type === 'model.responded' && event.effectId === from.context.awaitingModel && Object.keys(from.context.outstanding).length === 1) ||
        (!to.matches('completed') && (to.matches('budgetExhausted') || to.matches('failed') || to.matches({ running: 'runningTools' }) || actions.some((action) => action.type === 'requestEffect' && (action.params as { kind: string }).kind === 'callModel'))),
      'every proposed call gets its effect, and only as many run as the tool-call budget has left': ({ from, event, to, actions }) => {
        if (!(from.matches({ running: 'awaitingModel' }) && event.type === 'model.responded' && event.effectId === from.context.awaitingModel && event.toolCalls.length > 0 && to.matches({ running: 'runningTools' }))) return true;
        const requests = actions.filter((action) => action.type === 'requestEffect').map((action) => (action.params as { args: { callId: string; budget?: unknown } }).args);
        const left = budgets.maxToolCalls - from.context.usage.toolCalls;
        const allowed = requests.filter((args) => args.budget === undefined);
        return (
          JSON.stringify(requests.map((args) => args.callId)) === JSON.stringify(event.toolCalls.map((call) => call.callId)) &&
          allowed.length === Math.min(left, event.toolCalls.length) &&
          requests.slice(0, allowed.length).every((args) => args.budget === undefined) &&
          (to.context.tally.toolCallBudgetSpent !== null) === allowed.length < requests.length
        );
      },
      'a turn with calls refused for the tool-call budget ends the session budget-exhausted once it joins': ({ from, event, to }) =>
        !(from.matches({ running: 'joiningTurn' }) && from.context.tally.toolCallBudgetSpent !== null && isTurnDone(event, from)) || to.matches('budgetExhausted') || to.matches('failed') || to.matches('completed'),
      'unknown effect ids change nothing': ({ from, to, event }) =>
        !('effectId' in event) || event.effectId !== 'root:e999' || JSON.stringify(from.value) === JSON.stringify(to.value),
      'a forged approval id changes nothing': ({ from, to, event }) =>
        !(event.type === 'approval.requested' || event.type.startsWith('xstate.done.actor.')) || !JSON.stringify(event).includes('approval-999') || JSON.stringify(from.context) === JSON.stringify(to.context),
      'no synthesis (model call) while a turn is open': ({ to, actions }) =>
        actions.every((action) => action.type !== 'requestEffect' || (action.params as { kind: string }).kind !== 'callModel' || to.context.lastTurn?.status !== 'open'),
      'a turn that did not close its join fails the session': ({ from, event, to }) => {
        const turn = from.context.lastTurn;
        const output = (event as { output?: { turnId?: string; joinClosed?: boolean } }).output;
        const closesOpenTurn = turn?.status === 'open' && from.matches({ running: 'joiningTurn' }) && event.type === `xstate.done.actor.${turn.path}` && output?.turnId === turn.turnId;
        return !closesOpenTurn || output?.joinClosed !== false || to.matches('failed');
      },
      'an answered approval requests its call again, once, with the answer': ({ from, to, event, actions }) => {
        if (!event.type.startsWith('xstate.done.actor.') || typeof (event as { output?: { approvalId?: unknown } }).output?.approvalId !== 'string') return true;
        const answered = Object.keys(from.context.approvals).filter((approvalId) => !Object.hasOwn(to.context.approvals, approvalId));
        const requests = actions.filter((action) => action.type === 'requestEffect');
        if (answered.length === 0) return requests.length === 0;
        const args = (requests[0]?.params as { args?: { callId?: string; approval?: { decision?: string } } } | undefined)?.args;
        return answered.length === 1 && requests.length === 1 && args?.callId === from.context.approvals[answered[0]!]!.callId && args.approval?.decision !== undefined;
      },
      'asking spawns exactly one permission actor': ({ from, to, event }) =>
        event.type !== 'approval.requested' || Object.keys(to.children).length - Object.keys(from.children).length === (Object.keys(to.context.approvals).length - Object.keys(from.context.approvals).length),
    },
  });

  it('holds every invariant on every reachable state and edge', () => {
    expect(result.violations).toEqual([]);
  });

  it('reaches every state of the lifecycle', () => {
    expect(result.stateValues).toEqual(
      ['"budgetExhausted"', '"cancelled"', '"completed"', '"failed"', '"idle"', '{"running":"awaitingApproval"}', '{"running":"awaitingModel"}', '{"running":"joiningTurn"}', '{"running":"runningTools"}'].sort(),
    );
  });

  it('keeps the size of the state graph under review', () => {
    expect({ states: result.states, transitions: result.transitions }).toMatchSnapshot();
  });
});

describe('session.machine model check: cut replies and stop-hook continuations up to and past their bounds', () => {
  // Only final replies, with enough turns to pass both bounds: the rest of the machine is checked above (with these
  // events there the graph grows several times over, for paths this smaller graph already covers).
  const long = { ...input, budgets: { ...budgets, maxTurns: maxCutContinuations + maxStopContinuations + 2, maxTokens: 1_000_000 } };
  const finals = (snapshot: Snapshot): SessionEvent[] => {
    const { awaitingModel } = snapshot.context;
    if (!awaitingModel) return snapshot.matches('idle') ? [{ type: 'user.message', text: 'go' }] : [];
    const reply = { effectId: awaitingModel, turn: snapshot.context.usage.turns, text: 'ok', stopReason: 'end_turn' as const, usage, elapsedMs: 1, toolCalls: [] };
    return [
      { type: 'model.responded', ...reply },
      { type: 'model.responded', ...reply, stopReason: 'max_tokens' },
      { type: 'model.responded', ...reply, continuation: { reason: 'tests still fail', by: 'command:Stop#1' } },
      // A cut reply with a continuation (the stop hook is asked once the cut bound is reached), and a message mid-call.
      { type: 'model.responded', ...reply, stopReason: 'max_tokens', continuation: { reason: 'tests still fail', by: 'command:Stop#1' } },
      ...(snapshot.context.tally.unseenMessage ? [] : [{ type: 'user.message', text: 'also this' } as SessionEvent]),
    ];
  };
  const result = checkMachine({
    machine: sessionMachine,
    input: long,
    events: finals,
    stateInvariants: {
      'stop-hook continuations never exceed their bound': (snapshot) => snapshot.context.tally.stopContinuations <= maxStopContinuations,
      // XState copies the context with Object.assign on every assign; V8 makes such a copy a slow dictionary-mode
      // object from 20 properties on (see SessionTally).
      'the context keeps at most 19 top-level fields': (snapshot) => Object.keys(snapshot.context).length <= 19,
    },
    transitionInvariants: endingInvariants,
  });

  it('holds every invariant on every reachable state and edge, and reaches a completion past each bound', () => {
    expect(result.violations).toEqual([]);
    expect(result.stateValues).toContain('"completed"');
  });
});

describe('session.machine model check: typed final answers and conversations', () => {
  const long = { ...input, budgets: { ...budgets, maxTurns: maxOutputCorrections + 3, maxTokens: 1_000_000 } };
  const answers = (snapshot: Snapshot): SessionEvent[] => {
    const { awaitingModel } = snapshot.context;
    if (!awaitingModel) return snapshot.matches('idle') ? [{ type: 'user.message', text: 'go' }] : [];
    const reply = { effectId: awaitingModel, turn: snapshot.context.usage.turns, text: '{}', stopReason: 'end_turn' as const, usage, elapsedMs: 1, toolCalls: [] };
    return [
      { type: 'model.responded', ...reply, output: { ok: true, value: { answer: 42 } } },
      { type: 'model.responded', ...reply, output: { ok: false, errors: ['answer: Required'] } },
      { type: 'model.responded', ...reply },
    ];
  };
  const answerInvariants = {
    'a refused answer goes back to the model while corrections are left, then fails the session naming its errors': ({ from, event, to, actions }: { from: Snapshot; event: SessionEvent; to: Snapshot; actions: ReadonlyArray<{ type: string; params?: unknown }> }) => {
      if (!(from.matches({ running: 'awaitingModel' }) && event.type === 'model.responded' && event.effectId === from.context.awaitingModel && event.output?.ok === false)) return true;
      if ((from.context.tally.outputCorrections ?? 0) < maxOutputCorrections) return !isFinal(to) || to.matches('budgetExhausted');
      const ended = actions.filter((action) => action.type === 'emitRecord' && (action.params as { type: string }).type === 'session.ended').map((action) => (action.params as { data: { status: string; reason?: string; outputErrors?: string[] } }).data);
      return to.matches('failed') && ended.length === 1 && ended[0]!.outputErrors?.[0] === 'answer: Required' && (ended[0]!.reason ?? '').startsWith('OUTPUT_INVALID');
    },
    'a completion carries the validated answer as its output, and only then': ({ event, actions }: { event: SessionEvent; actions: ReadonlyArray<{ type: string; params?: unknown }> }) =>
      endedData(actions).every((data) => {
        const output = (data as { output?: unknown }).output;
        const valid = data.status === 'completed' && event.type === 'model.responded' && event.output?.ok === true;
        return valid ? JSON.stringify(output) === '{"answer":42}' : output === undefined;
      }),
  };

  it('a typed session: refused answers are corrected up to the bound, a valid one completes with its output', () => {
    const result = checkMachine({ machine: sessionMachine, input: long, events: answers, transitionInvariants: answerInvariants });
    expect(result.violations).toEqual([]);
    expect(result.stateValues).toEqual(expect.arrayContaining(['"completed"', '"failed"']));
  });

  it('a conversation goes back to idle after each final answer and never completes by answering', () => {
    const result = checkMachine({
      machine: sessionMachine,
      input: { ...long, conversation: true },
      events: answers,
      transitionInvariants: {
        'a final answer of a conversation returns to idle': ({ from, event, to }) =>
          !(from.matches({ running: 'awaitingModel' }) && event.type === 'model.responded' && event.effectId === from.context.awaitingModel && event.output === undefined) || to.matches('idle') || to.matches('budgetExhausted'),
      },
      stateInvariants: { 'a conversation never completes': (snapshot) => !snapshot.matches('completed') },
    });
    expect(result.violations).toEqual([]);
    expect(result.stateValues).toContain('"idle"');
  });
});

describe('session.machine model check: delegated children draw from the session budgets (trial5 E38)', () => {
  // The delegation actor is a stand-in that keeps its input and never ends by itself: its join is injected, its
  // children spending nothing or everything the delegation machine gives them from that input's ceiling (a real
  // child cannot spend past its own budget: the graph above checks the guards).
  const standIn = createMachine({ id: 'delegation-stand-in', context: ({ input }: { input: DelegationInput }) => ({ input }) });
  const machine = sessionMachine.provide({ actors: { delegation: standIn as never } });
  type DelegatingSnapshot = SnapshotFrom<typeof machine>;
  const tight = { maxTurns: 4, maxToolCalls: 4, maxTokens: 1_000, maxWallTimeMs: 1_000 };
  const wants = { maxTurns: 3, maxToolCalls: 3, maxTokens: 600, maxWallTimeMs: 60_000 };
  const task = (taskId: string): DelegatedTask => testerTask(taskId, wants);
  const delegate = (index: number, tasks: number) => ({ callId: `d${index}`, name: 'delegate_task', arguments: { tasks: Array.from({ length: tasks }, (_, at) => ({ id: `t${at}` })) } });
  const small = { inputTokens: 50, outputTokens: 50 };

  const delegatingEvents = (snapshot: DelegatingSnapshot): SessionEvent[] => {
    const { awaitingModel, outstanding } = snapshot.context;
    const list: SessionEvent[] = [];
    if (snapshot.matches('idle')) list.push({ type: 'user.message', text: 'go' });
    if (awaitingModel) {
      const reply = { effectId: awaitingModel, turn: snapshot.context.usage.turns, text: 'ok', stopReason: 'tool_use' as const, usage: small, elapsedMs: 1, callSpec: baseCallSpec({ callId: awaitingModel }) };
      list.push(
        { type: 'model.responded', ...reply, toolCalls: [], stopReason: 'end_turn' },
        { type: 'model.responded', ...reply, toolCalls: [call(1), call(2)] },
        { type: 'model.responded', ...reply, toolCalls: [delegate(1, 2)] },
        // Two delegations in one reply: the second one's children share only what the first one's did not take.
        { type: 'model.responded', ...reply, toolCalls: [delegate(1, 1), delegate(2, 3)] },
      );
    }
    for (const [effectId, effect] of Object.entries(outstanding)) {
      if (effect.kind !== 'executeTool' || !effect.callId) continue;
      if (effect.delegation) {
        const given = (snapshot.children as unknown as Record<string, { getSnapshot(): { context: { input: DelegationInput } } }>)[effect.delegation]!.getSnapshot().context.input;
        const most = poolOf(shareBudgets(given.plan.tasks.map((task) => task.budgets), given.ceiling));
        const join = (share: number) => ({
          type: `xstate.done.actor.${effect.delegation}`,
          output: {
            kind: 'delegation.join',
            callId: effect.callId,
            outcome: 'satisfied',
            observation: '{}',
            usage: { turns: most.turns * share, toolCalls: most.toolCalls * share, inputTokens: most.tokens * share, outputTokens: 0 },
          },
        }) as unknown as SessionEvent;
        list.push(join(0), join(1));
      } else if (effect.callId.startsWith('d')) {
        list.push({ type: 'delegation.accepted', effectId, callId: effect.callId, plan: { tasks: Array.from({ length: effect.callId === 'd2' ? 3 : 2 }, (_, at) => task(`t${at}`)), join: { policy: 'all' }, observationLimit: 4_000 }, elapsedMs: 1 });
      } else {
        list.push({ type: 'tool.settled', effectId, callId: effect.callId, name: 'read', status: 'ok', observation: 'fine', elapsedMs: 2 });
      }
    }
    const turn = snapshot.context.lastTurn;
    if (turn?.status === 'open' && snapshot.matches({ running: 'joiningTurn' })) {
      list.push({ type: `xstate.done.actor.${turn.path}`, output: { turnId: turn.turnId, status: 'mutation-ready', joinClosed: true, joinDigest: 'b3:join', findings: [] } } as SessionEvent);
    }
    return list;
  };

  const reservedOf = (snapshot: DelegatingSnapshot) =>
    Object.values(snapshot.context.outstanding).reduce((sum, effect) => ({ turns: sum.turns + (effect.reserved?.turns ?? 0), toolCalls: sum.toolCalls + (effect.reserved?.toolCalls ?? 0), tokens: sum.tokens + (effect.reserved?.tokens ?? 0) }), { turns: 0, toolCalls: 0, tokens: 0 });
  const tokensOf = (snapshot: DelegatingSnapshot) => snapshot.context.usage.inputTokens + snapshot.context.usage.outputTokens;

  const result = checkMachine({
    machine,
    input: { ...input, budgets: tight },
    events: delegatingEvents,
    stateInvariants: {
      'own and delegated turns, with what open delegations hold, stay within the turn budget': (snapshot) =>
        snapshot.context.usage.turns + snapshot.context.tally.delegated.turns + reservedOf(snapshot).turns <= tight.maxTurns,
      'own and delegated tool calls, with what open delegations hold, stay within the tool-call budget': (snapshot) =>
        snapshot.context.usage.toolCalls + snapshot.context.tally.delegated.toolCalls + reservedOf(snapshot).toolCalls <= tight.maxToolCalls,
      'what open delegations hold for their children never exceeds the tokens left': (snapshot) => reservedOf(snapshot).tokens === 0 || tokensOf(snapshot) + reservedOf(snapshot).tokens <= tight.maxTokens,
      'a turn always stays for the parent to read a join': (snapshot) => reservedOf(snapshot).turns === 0 || snapshot.context.usage.turns + snapshot.context.tally.delegated.turns + reservedOf(snapshot).turns < tight.maxTurns,
    },
    transitionInvariants: {
      'a join charges exactly what its children spent and releases what was held for them': ({ from, event, to }) => {
        const output = (event as { output?: { kind?: string; usage?: { turns: number; toolCalls: number; inputTokens: number; outputTokens: number } } }).output;
        if (output?.kind !== 'delegation.join' || Object.keys(from.context.outstanding).length === Object.keys(to.context.outstanding).length) return true;
        return (
          to.context.tally.delegated.turns - from.context.tally.delegated.turns === output.usage!.turns &&
          to.context.tally.delegated.toolCalls - from.context.tally.delegated.toolCalls === output.usage!.toolCalls &&
          tokensOf(to) - tokensOf(from) === output.usage!.inputTokens + output.usage!.outputTokens &&
          Object.values(to.context.outstanding).every((effect) => !effect.delegation || Object.values(from.context.outstanding).some((before) => before.delegation === effect.delegation))
        );
      },
      'calls past what the session and its children left are refused for the budget, saying how many the children made': ({ from, event, actions }) => {
        if (!(from.matches({ running: 'awaitingModel' }) && event.type === 'model.responded' && event.effectId === from.context.awaitingModel && event.toolCalls.length > 0)) return true;
        const requests = actions.filter((action) => action.type === 'requestEffect').map((action) => (action.params as { args: { budget?: { left: number; delegated?: number } } }).args);
        const left = Math.max(0, tight.maxToolCalls - from.context.usage.toolCalls - from.context.tally.delegated.toolCalls);
        return (
          requests.filter((args) => args.budget === undefined).length === Math.min(left, requests.length) &&
          requests.every((args) => !args.budget || (args.budget.left === left && (args.budget.delegated ?? 0) === from.context.tally.delegated.toolCalls))
        );
      },
    },
  });

  it('holds every invariant on every reachable state and edge, and reaches the ends a spent budget leads to', () => {
    expect(result.violations).toEqual([]);
    expect(result.stateValues).toEqual(expect.arrayContaining(['"budgetExhausted"', '"completed"', '{"running":"runningTools"}']));
    expect(result.states).toBeGreaterThan(20);
  });
});

describe('session.machine model check: raising a budget (session.budgets-raised), spent or in place', () => {
  // Small budgets a few replies spend; a raise is offered in every state while the limits are below a bound (so the
  // graph stays finite), along with raises that must be refused: not above what is spent, not whole, not positive. A
  // spent budget's end is left by a raise; an interrupted session (idle, running) takes one in place.
  const small = { maxTurns: 2, maxToolCalls: 2, maxTokens: 100, maxWallTimeMs: 1_000 };
  const bound = { maxTurns: 4, maxToolCalls: 3, maxTokens: 300 };
  type Raise = { maxTurns?: number; maxToolCalls?: number; maxTokens?: number; maxWallTimeMs?: number };
  const spentOf = (snapshot: Snapshot) => ({
    turns: snapshot.context.usage.turns + snapshot.context.tally.delegated.turns,
    toolCalls: snapshot.context.usage.toolCalls + snapshot.context.tally.delegated.toolCalls,
    tokens: snapshot.context.usage.inputTokens + snapshot.context.usage.outputTokens,
    wallTimeMs: snapshot.context.usage.elapsedMs,
  });
  /** The rule, restated: every given limit is a whole number above what is spent, and one is given. */
  const applies = (snapshot: Snapshot, raise: Raise): boolean => {
    const spent = spentOf(snapshot);
    const given = [[raise.maxTurns, spent.turns], [raise.maxToolCalls, spent.toolCalls], [raise.maxTokens, spent.tokens], [raise.maxWallTimeMs, spent.wallTimeMs]].filter(([limit]) => limit !== undefined) as Array<[number, number]>;
    return given.length > 0 && given.every(([limit, used]) => Number.isSafeInteger(limit) && limit > used);
  };
  /** A spent tool-call budget's end is left only with a tool-call limit. */
  const leavesEnd = (snapshot: Snapshot, raise: Raise): boolean => applies(snapshot, raise) && (snapshot.context.tally.toolCallBudgetSpent === null || raise.maxToolCalls !== undefined);
  const raised = (snapshot: Snapshot, raise: Raise) => ({
    ...snapshot.context.budgets,
    ...(raise.maxTurns === undefined ? {} : { maxTurns: raise.maxTurns }),
    ...(raise.maxToolCalls === undefined ? {} : { maxToolCalls: raise.maxToolCalls }),
    ...(raise.maxTokens === undefined ? {} : { maxTokens: raise.maxTokens }),
    ...(raise.maxWallTimeMs === undefined ? {} : { maxWallTimeMs: raise.maxWallTimeMs }),
  });
  const raiseEvents = (snapshot: Snapshot): SessionEvent[] => {
    const { budgets: current } = snapshot.context;
    const spent = spentOf(snapshot);
    const list: Raise[] = [{ maxTurns: spent.turns }, { maxTokens: spent.tokens }, { maxToolCalls: spent.toolCalls }, { maxTurns: 0 }, { maxTurns: -1 }, { maxTurns: 2.5 }, { maxTokens: Number.NaN }, { maxWallTimeMs: Number.POSITIVE_INFINITY }, {}];
    if (current.maxTurns < bound.maxTurns) list.push({ maxTurns: current.maxTurns + 1 }, { maxTurns: current.maxTurns + 1, maxTokens: spent.tokens });
    if (current.maxTokens < bound.maxTokens) list.push({ maxTokens: current.maxTokens + 100 }, { maxTurns: Math.min(bound.maxTurns, Math.max(current.maxTurns, spent.turns + 1)), maxTokens: current.maxTokens + 100 });
    if (current.maxToolCalls < bound.maxToolCalls) list.push({ maxToolCalls: current.maxToolCalls + 1 });
    return list.map((raise) => ({ type: 'session.budgets-raised', ...raise }) as SessionEvent);
  };
  const raiseSpentEvents = (snapshot: Snapshot): SessionEvent[] => {
    const { awaitingModel, outstanding } = snapshot.context;
    const list: SessionEvent[] = [];
    if (snapshot.matches('idle')) list.push({ type: 'user.message', text: 'go' });
    if (awaitingModel) {
      const reply = { effectId: awaitingModel, turn: snapshot.context.usage.turns, text: 'ok', stopReason: 'end_turn' as const, usage, elapsedMs: 1, callSpec: baseCallSpec({ callId: awaitingModel }) };
      list.push(
        { type: 'model.responded', ...reply, toolCalls: [] },
        { type: 'model.responded', ...reply, toolCalls: [call(1)], stopReason: 'tool_use' },
        { type: 'model.responded', ...reply, toolCalls: [], usage: { inputTokens: 60, outputTokens: 60 } },
      );
    }
    for (const [effectId, effect] of Object.entries(outstanding)) {
      if (effect.kind === 'executeTool') list.push({ type: 'tool.settled', effectId, callId: effect.callId ?? 'c?', name: 'read', status: 'ok', observation: 'fine', elapsedMs: 2 });
    }
    const turn = snapshot.context.lastTurn;
    if (turn?.status === 'open' && snapshot.matches({ running: 'joiningTurn' })) {
      list.push({ type: `xstate.done.actor.${turn.path}`, output: { turnId: turn.turnId, status: 'mutation-ready', joinClosed: true, joinDigest: 'b3:join', findings: [] } } as SessionEvent);
    }
    // Offered in every state: in an end that is final a raise must change nothing.
    return [...list, ...raiseEvents(snapshot)];
  };
  const isRaise = (event: SessionEvent): event is SessionEvent & { type: 'session.budgets-raised' } & Raise => event.type === 'session.budgets-raised';
  const same = (from: Snapshot, to: Snapshot) => JSON.stringify(from.value) === JSON.stringify(to.value) && JSON.stringify(from.context) === JSON.stringify(to.context);
  const effectsOrRecords = (actions: ReadonlyArray<{ type: string }>) => actions.filter((action) => action.type === 'requestEffect' || action.type === 'emitRecord');
  // Edges seen: a spent tool-call budget run again by a tool-call raise, and a raise taken in place while running.
  const seen = { toolCallsRaisedFromEnd: 0, raisedInPlace: 0 };

  const result = checkMachine({
    machine: sessionMachine,
    input: { ...input, budgets: small },
    events: raiseSpentEvents,
    stateInvariants: {
      'turns stay within the turn budget in force': (snapshot) => snapshot.context.usage.turns <= snapshot.context.budgets.maxTurns,
      'a spent budget says why, and is the only end a raise can leave': (snapshot) => !snapshot.matches('budgetExhausted') || (snapshot.status === 'active' && snapshot.context.outcome === 'budget-exhausted' && snapshot.context.endReason !== null),
      'every other end is final': (snapshot) => !(snapshot.matches('completed') || snapshot.matches('failed') || snapshot.matches('cancelled')) || snapshot.status === 'done',
      'limits only rise, and only in steps a raise gave': (snapshot) => snapshot.context.budgets.maxTurns >= small.maxTurns && snapshot.context.budgets.maxTokens >= small.maxTokens && snapshot.context.budgets.maxToolCalls >= small.maxToolCalls && snapshot.context.budgets.maxToolCalls <= bound.maxToolCalls,
      'a running session has no end reason and no outcome': (snapshot) => !snapshot.matches('running') || (snapshot.context.outcome === null && snapshot.context.endReason === null),
    },
    transitionInvariants: {
      'a raise in a final end changes nothing': ({ from, event, to, actions }) => !isRaise(event) || from.status !== 'done' || (same(from, to) && actions.length === 0),
      'a raise that does not apply (not above what is spent, not whole, not positive, none given) changes nothing': ({ from, event, to, actions }) =>
        !isRaise(event) || (from.matches('budgetExhausted') ? leavesEnd(from, event) : applies(from, event)) || (same(from, to) && actions.length === 0),
      'a raise taken while running or waiting replaces exactly its limits in place: same state, no effect, no record': ({ from, event, to, actions }) => {
        if (!isRaise(event) || from.status === 'done' || from.matches('budgetExhausted') || !applies(from, event)) return true;
        const tally = event.maxToolCalls === undefined ? from.context.tally : { ...from.context.tally, toolCallBudgetSpent: null };
        seen.raisedInPlace++;
        return JSON.stringify(to.value) === JSON.stringify(from.value) && JSON.stringify(to.context) === JSON.stringify({ ...from.context, budgets: raised(from, event), tally }) && effectsOrRecords(actions).length === 0;
      },
      'a raise that leaves a spent budget replaces exactly the limits it gives and runs the session again': ({ from, event, to, actions }) => {
        if (!isRaise(event) || !from.matches('budgetExhausted') || !leavesEnd(from, event)) return true;
        if (JSON.stringify(to.context.budgets) !== JSON.stringify(raised(from, event))) return false;
        if (event.maxToolCalls !== undefined && to.context.tally.toolCallBudgetSpent !== null && to.matches({ running: 'awaitingModel' })) return false;
        if (from.context.tally.toolCallBudgetSpent !== null && to.matches({ running: 'awaitingModel' })) seen.toolCallsRaisedFromEnd++;
        const modelCalls = actions.filter((action) => action.type === 'requestEffect' && (action.params as { kind: string }).kind === 'callModel');
        // Either the next turn's model call, or (another budget still spent) straight back to the end, saying so again.
        return to.matches({ running: 'awaitingModel' }) ? modelCalls.length === 1 && to.context.outcome === null : to.matches('budgetExhausted') && modelCalls.length === 0 && endedData(actions).length === 1;
      },
      'entering budgetExhausted records session.ended once, naming the budget': ({ from, to, actions, event }) =>
        !to.matches('budgetExhausted') || (from.matches('budgetExhausted') && (!isRaise(event) || !leavesEnd(from, event))) || (endedData(actions).length === 1 && endedData(actions)[0]!.status === 'budget-exhausted' && /budget exhausted/.test(endedData(actions)[0]!.reason ?? '')),
    },
  });

  it('holds every invariant on every reachable state and edge', () => {
    expect(result.violations).toEqual([]);
  });

  it('reaches a completion and a second spent budget after a raise, and a spent tool-call budget', () => {
    expect(result.stateValues).toEqual(expect.arrayContaining(['"budgetExhausted"', '"completed"', '{"running":"awaitingModel"}', '{"running":"runningTools"}', '{"running":"joiningTurn"}']));
    expect(result.states).toBeGreaterThan(10);
    expect(seen.toolCallsRaisedFromEnd).toBeGreaterThan(0);
    expect(seen.raisedInPlace).toBeGreaterThan(0);
  });
});
