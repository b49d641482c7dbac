import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { enforcedClasses, type FailClosedClass } from '../../../models/fail-closed.js';
import type { UseRow } from '../../../models/turn.records.js';
import { turnMachine, type TurnEvent, type TurnInput } from '../../../machines/turn.machine.js';
import { closeJoin } from '../../../machines/typestate/join.js';
import { baseCallSpec, turnInput } from '../turn.fixtures.js';

type Settle = Partial<Extract<TurnEvent, { type: 'tool.settled' }>>;

/** Drive a turn: settle each call (in `order`), then declare uses (default: every result consumed). */
const runTurn = (input: TurnInput, options: { settle?: (index: number) => Settle; order?: number[]; uses?: (callIds: string[]) => UseRow[]; extra?: TurnEvent[] } = {}) => {
  const actor = createActor(turnMachine, { input }).start();
  const order = options.order ?? input.toolCalls.map((_, index) => index);
  for (const index of order) {
    const call = input.toolCalls[index]!;
    actor.send({ type: 'tool.settled', callId: call.callId, name: call.name, status: 'ok', observation: 'fine', ...options.settle?.(index) } as TurnEvent);
  }
  for (const event of options.extra ?? []) actor.send(event);
  const callIds = input.toolCalls.map((call) => call.callId);
  if (actor.getSnapshot().matches('toolUse')) actor.send({ type: 'turn.uses', uses: options.uses ? options.uses(callIds) : callIds.map((callId) => ({ callId, disposition: 'consumed' as const, ref: 'synthesis' })) });
  const snapshot = actor.getSnapshot();
  return { value: snapshot.value, classes: snapshot.context.findings.map((finding) => finding.class) };
};

/** One trigger per enforced class: each must block the turn with that class. */
const triggers: Record<string, () => { value: unknown; classes: FailClosedClass[] }> = {
  'tool.schema_invalid': () => runTurn(turnInput({ names: ['read'] }), { settle: () => ({ status: 'error', errorCode: 'InvalidInput', failedStage: 'schema', observation: 'InvalidInput: path missing' }) }),
  'tool.unknown_or_disallowed': () => runTurn(turnInput({ names: ['teleport'] })),
  'tool.result_missing': () => {
    const outcome = closeJoin({ turnId: 't', callSpec: baseCallSpec(), stopReason: 'tool_use', requests: [{ callId: 'a', name: 'read', argumentsDigest: 'x' }], results: [], uses: [] });
    return { value: 'closeJoin', classes: outcome.ok ? [] : outcome.findings.map((finding) => finding.class) };
  },
  'tool.result_orphan': () => runTurn(turnInput({ names: ['read', 'read'] }), { order: [0], extra: [{ type: 'tool.settled', callId: 'ghost', name: 'read', status: 'ok', observation: 'boo' }] }),
  'tool.join_incomplete': () => runTurn(turnInput({ names: ['read', 'read'] }), { order: [0], extra: [{ type: 'turn.uses', uses: [] }] }),
  'tool.use_missing': () => runTurn(turnInput({ names: ['read', 'read'] }), { uses: (ids) => [{ callId: ids[0]!, disposition: 'consumed', ref: 'synthesis' }] }),
  'tool.use_unknown_result': () => runTurn(turnInput({ names: ['read'] }), { uses: (ids) => [{ callId: ids[0]!, disposition: 'consumed', ref: 's' }, { callId: 'ghost', disposition: 'observed_only' }] }),
  'tool.use_without_result': () => {
    const outcome = closeJoin({ turnId: 't', callSpec: baseCallSpec(), stopReason: 'tool_use', requests: [{ callId: 'a', name: 'read', argumentsDigest: 'x' }], results: [], uses: [{ callId: 'a', disposition: 'consumed', ref: 's' }] });
    return { value: 'closeJoin', classes: outcome.ok ? [] : outcome.findings.map((finding) => finding.class) };
  },
  'tool.parallel_policy_violation': () => runTurn(turnInput({ callSpec: { parallelPolicy: { allowed: false, maxBranches: 1, strictOrder: false } } })),
  'tool.response_truncation_policy_violation': () => runTurn(turnInput({ names: ['read'] }), { settle: () => ({ truncated: { omittedBytes: 5, artifact: 'lost' } }) }),
  'protocol.stop_reason_unhandled': () => runTurn(turnInput({ names: ['read'], stopReason: 'max_tokens' })),
  'protocol.parallel_transport_order_invalid': () => runTurn(turnInput({ callSpec: { parallelPolicy: { allowed: true, maxBranches: 4, strictOrder: true } } }), { order: [1, 0] }),
  'runtime.shell_boundary_violation': () => runTurn(turnInput({ names: ['bash'] })),
  'governance.guardrail_stage_missing': () => runTurn(turnInput({ names: ['read'], callSpec: { guardrailStages: ['pre_flight', 'input', 'output'] } }), { settle: () => ({ guardrails: [{ stage: 'input', verdict: 'pass' }] }) }),
  'governance.guardrail_stage_order_invalid': () =>
    runTurn({ ...turnInput({ names: ['read'], callSpec: { guardrailStages: ['input', 'output'] } }) }, { settle: () => ({ guardrails: [{ stage: 'output', verdict: 'pass' }, { stage: 'input', verdict: 'pass' }] }) }),
  'mutation.policy_digest_mismatch': () => runTurn(turnInput({ names: ['read'], activeMutationPolicyDigest: 'b3:changed' })),
  'mutation.capability_claim_missing': () => runTurn(turnInput({ names: ['read'], requiredClaims: ['governance.write'] })),
  'mutation.use_evidence_missing': () => runTurn(turnInput({ names: ['read'] }), { uses: (ids) => [{ callId: ids[0]!, disposition: 'consumed' }] }),
};

describe('fail-closed classes', () => {
  it('has a trigger for every enforced class', () => {
    expect(Object.keys(triggers).sort()).toEqual([...enforcedClasses].sort());
  });

  for (const [name, trigger] of Object.entries(triggers)) {
    it(`${name} is detected and refuses the mutation`, () => {
      const outcome = trigger();
      expect(outcome.classes).toContain(name);
      expect(outcome.value).not.toBe('mutationReady');
    });
  }

  it('a runtime-validation failure (a stale baseline) is a model-visible observation, not a fail-closed class', () => {
    expect(runTurn(turnInput({ names: ['read'] }), { settle: () => ({ status: 'error', errorCode: 'InvalidInput', failedStage: 'runtime-validation', observation: 'InvalidInput: stale baseline' }) })).toEqual({ value: 'mutationReady', classes: [] });
  });

  it('a denied or hidden call is a Denied outcome, not a violation: a refused shell call owes no boundary evidence, a hidden tool is not unknown', () => {
    const denied = { status: 'error', errorCode: 'Denied', failedStage: 'permission', observation: 'Denied: denied by the rule "deny bash:rm*"' } as const;
    expect(runTurn(turnInput({ names: ['bash'] }), { settle: () => denied })).toEqual({ value: 'mutationReady', classes: [] });
    const hiddenSpec = { toolPolicy: { allow: ['read'], schemaDigests: { read: 'b3:r' }, hidden: { write: 'mode' as const, bash: 'tool-deny' as const } } };
    const hidden = { status: 'error', errorCode: 'Denied', failedStage: 'visibility', observation: 'Denied: plan mode shows read-only tools only' } as const;
    expect(runTurn(turnInput({ names: ['write', 'bash'], callSpec: hiddenSpec }), { settle: () => hidden })).toEqual({ value: 'mutationReady', classes: [] });
    // A hidden tool whose result is anything but its denial ran when it must not have.
    expect(runTurn(turnInput({ names: ['write'], callSpec: hiddenSpec })).classes).toEqual(['tool.unknown_or_disallowed']);
    // A shell call that ran still owes its evidence.
    expect(runTurn(turnInput({ names: ['bash'] }), { settle: () => ({ status: 'error', errorCode: 'Timeout', observation: 'Timeout' }) }).classes).toEqual(['runtime.shell_boundary_violation']);
  });

  it('a shell call cancelled before it started (the wall time was spent) never ran: it owes no boundary evidence, and needs only its input decision', () => {
    const cancelled = { status: 'error', errorCode: 'Cancelled', failedStage: 'cancelled', observation: 'Cancelled: bash was cancelled before it started' } as const;
    expect(runTurn(turnInput({ names: ['bash'] }), { settle: () => cancelled })).toEqual({ value: 'mutationReady', classes: [] });
    const stages = { guardrailStages: ['input', 'output'] as Array<'input' | 'output'> };
    expect(runTurn(turnInput({ names: ['bash'], callSpec: stages }), { settle: () => ({ ...cancelled, guardrails: [{ stage: 'input' as const, verdict: 'pass' as const }] }) })).toEqual({ value: 'mutationReady', classes: [] });
    // Cancelled while it ran, it still owes its evidence.
    expect(runTurn(turnInput({ names: ['bash'] }), { settle: () => ({ status: 'error', errorCode: 'Cancelled', observation: 'Cancelled' }) }).classes).toEqual(['runtime.shell_boundary_violation']);
  });

  it('guardrails: every configured stage a call reached, in order, reaches mutationReady; a missing pre-flight blocks', () => {
    const stages = { guardrailStages: ['pre_flight', 'input', 'output'] as Array<'pre_flight' | 'input' | 'output'> };
    const ran = { guardrails: [{ stage: 'input' as const, verdict: 'pass' as const }, { stage: 'output' as const, verdict: 'pass' as const }] };
    expect(runTurn({ ...turnInput({ names: ['read'], callSpec: stages }), preFlight: { verdict: 'pass' } }, { settle: () => ran })).toEqual({ value: 'mutationReady', classes: [] });
    expect(runTurn(turnInput({ names: ['read'], callSpec: stages }), { settle: () => ran }).classes).toEqual(['governance.guardrail_stage_missing']);
    // A call its input guardrail blocked never ran: it needs no output decision; one refused before validation needs none.
    const blocked = { status: 'error' as const, errorCode: 'Denied', failedStage: 'guardrail', observation: 'Denied: blocked', guardrails: [{ stage: 'input' as const, verdict: 'block' as const }] };
    expect(runTurn({ ...turnInput({ names: ['read'], callSpec: stages }), preFlight: { verdict: 'pass' } }, { settle: () => blocked })).toEqual({ value: 'mutationReady', classes: [] });
    expect(runTurn({ ...turnInput({ names: ['read'], callSpec: stages }), preFlight: { verdict: 'block' } }, { settle: () => ({ status: 'error', errorCode: 'Denied', failedStage: 'pre-flight', observation: 'Denied' }) })).toEqual({ value: 'mutationReady', classes: [] });
  });

  it('a clean turn reaches mutationReady with no class', () => {
    expect(runTurn(turnInput())).toEqual({ value: 'mutationReady', classes: [] });
  });
});
