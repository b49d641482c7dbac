import { describe, expect, it } from 'vitest';
import type { SnapshotFrom } from 'xstate';
import { checkMachine } from 'rein/testing';
import { turnMachine, type TurnEvent, type TurnInput } from '../../machines/turn.machine.js';
import type { UseRow } from '../../models/turn.records.js';
import { turnInput } from './turn.fixtures.js';

type Snapshot = SnapshotFrom<typeof turnMachine>;

type Variant = 'ok' | 'invalid' | 'stale' | 'cancelled' | 'truncated-no-artifact' | 'denied' | 'hidden' | 'no-evidence';

const failures: Partial<Record<Variant, { errorCode: string; failedStage?: string }>> = {
  invalid: { errorCode: 'InvalidInput', failedStage: 'schema' },
  stale: { errorCode: 'InvalidInput', failedStage: 'runtime-validation' },
  cancelled: { errorCode: 'Cancelled' },
  denied: { errorCode: 'Denied', failedStage: 'permission' },
  hidden: { errorCode: 'Denied', failedStage: 'visibility' },
};

/** A result in one of its shapes; a shell call that ran carries boundary evidence unless it is `no-evidence`. */
const settled = (callId: string, name: string, variant: Variant): TurnEvent => {
  const failure = failures[variant];
  const ran = failure?.failedStage === undefined;
  return {
    type: 'tool.settled',
    callId,
    name,
    status: failure ? 'error' : 'ok',
    ...(failure ?? {}),
    observation: variant === 'ok' ? 'fine' : `${variant}: details`,
    ...(variant === 'truncated-no-artifact' ? { truncated: { omittedBytes: 10, artifact: 'nowhere' } } : {}),
    ...(name === 'bash' && ran && variant !== 'no-evidence' ? { provenance: { route: 'shell', workdir: '/w', sandboxProfile: 'default', commandDigest: 'b3:c' } } : {}),
  };
};

/**
 * Every event a turn can meet, including adversarial ones: duplicates, unknown ids, early, bad and missing uses.
 * With `denials`, results also come back denied (by permission, or hidden at visibility) and — for a shell call —
 * ran without boundary evidence; the single-call variants use it, so the two-call graphs stay their size.
 */
const eventsOf = (denials: boolean) => (snapshot: Snapshot): TurnEvent[] => {
  const context = snapshot.context;
  const list: TurnEvent[] = [];
  for (const callId of context.outstanding) {
    const name = context.toolCalls.find((call) => call.callId === callId)?.name ?? 'read';
    list.push(settled(callId, name, 'ok'), settled(callId, name, 'invalid'), settled(callId, name, 'stale'), settled(callId, name, 'cancelled'));
    if (denials) list.push(settled(callId, name, 'denied'), settled(callId, name, 'hidden'), ...(name === 'bash' ? [settled(callId, name, 'no-evidence')] : []));
  }
  if (context.results.length <= context.requests.length) {
    list.push(settled('ghost', 'read', 'ok'));
    const first = context.results[0];
    if (first) list.push(settled(first.callId, first.name, 'ok'));
  }
  if (snapshot.matches('toolResults') && context.results.length > 0) list.push({ type: 'turn.uses', uses: [] });
  if (snapshot.matches('toolUse')) {
    const complete: UseRow[] = context.results.map((row) => (row.errorCode === 'Cancelled' ? { callId: row.callId, disposition: 'discarded_with_reason', reason: 'cancelled' } : { callId: row.callId, disposition: 'consumed', ref: 'synthesis:root:e1' }));
    list.push({ type: 'turn.uses', uses: complete });
    list.push({ type: 'turn.uses', uses: complete.slice(1) });
    list.push({ type: 'turn.uses', uses: [...complete, { callId: 'ghost', disposition: 'consumed', ref: 'x' }] });
    list.push({ type: 'turn.uses', uses: complete.map((use) => ({ callId: use.callId, disposition: 'consumed' as const })) });
  }
  return list;
};

/** An independent statement of the MutationReady obligations, to check the machine against. */
const obligationsHold = (snapshot: Snapshot, input: TurnInput): boolean => {
  const { requests, results, uses, callSpec } = snapshot.context;
  const requested = new Set(requests.map((request) => request.callId));
  const resultIds = results.map((result) => result.callId);
  const exactlyOne = requests.every((request) => resultIds.filter((id) => id === request.callId).length === 1) && resultIds.every((id) => requested.has(id));
  const usesOk = resultIds.every((id) => uses.some((use) => use.callId === id)) && uses.every((use) => requested.has(use.callId) && (use.disposition !== 'consumed' || Boolean(use.ref)));
  const hidden = callSpec.toolPolicy.hidden ?? {};
  const isHidden = (name: string) => !callSpec.toolPolicy.allow.includes(name) && Object.hasOwn(hidden, name);
  // A call to a tool the policy hides is allowed to be asked for: it must come back as its denial, nothing else.
  const allowed = requests.every((request) => callSpec.toolPolicy.allow.includes(request.name) || isHidden(request.name));
  const hiddenDenied = results.every((result) => !isHidden(result.name) || (result.errorCode === 'Denied' && result.failedStage === 'visibility'));
  // Boundary evidence is owed by a shell call that ran; a refused one (any failed stage) never ran.
  const shellEvidence = results.every((result) => !input.shellTools.includes(result.name) || (result.status === 'error' && result.failedStage !== undefined) || Boolean(result.provenance?.workdir && result.provenance.sandboxProfile && result.provenance.commandDigest));
  const branches = requests.length <= callSpec.parallelPolicy.maxBranches && (requests.length <= 1 || callSpec.parallelPolicy.allowed);
  const stop = callSpec.protocolStatePolicy.handled.includes(input.stopReason as never);
  const policy = callSpec.mutationPolicyDigest === input.activeMutationPolicyDigest;
  const claims = input.requiredClaims.every((claim) => callSpec.capabilityClaims.includes(claim));
  const schemas = results.every((result) => result.failedStage !== 'schema');
  const truncation = results.every((result) => !result.truncation || result.truncation.artifact.startsWith('artifact://'));
  const textMode = callSpec.actionMode !== 'text' || Boolean(callSpec.normalizerId);
  const arrival = resultIds.map((id) => requests.findIndex((request) => request.callId === id));
  const ordered = !callSpec.parallelPolicy.strictOrder || arrival.every((index, position) => index === position);
  return exactlyOne && usesOk && allowed && hiddenDenied && shellEvidence && branches && stop && policy && claims && schemas && truncation && textMode && ordered;
};

/** Variants whose results also come back denied, hidden, or (shell) without evidence. */
const withDenials = new Set(['one bash call', 'a tool the mode hides', 'a hidden bash call']);

const variants: Record<string, TurnInput> = {
  'two allowed calls': turnInput(),
  'one bash call': turnInput({ names: ['bash'] }),
  'a disallowed tool': turnInput({ names: ['read', 'rm_rf'] }),
  'a tool the mode hides': turnInput({ names: ['write'], callSpec: { toolPolicy: { allow: ['read'], schemaDigests: { read: 'b3:r' }, hidden: { write: 'mode' } } } }),
  'a hidden bash call': turnInput({ names: ['bash'], callSpec: { toolPolicy: { allow: ['read'], schemaDigests: { read: 'b3:r' }, hidden: { bash: 'tool-deny' } } } }),
  'parallel calls not allowed': turnInput({ callSpec: { parallelPolicy: { allowed: false, maxBranches: 1, strictOrder: false } } }),
  'strict transport order': turnInput({ callSpec: { parallelPolicy: { allowed: true, maxBranches: 4, strictOrder: true } } }),
  'unhandled stop reason': turnInput({ names: ['read'], stopReason: 'max_tokens' }),
  'policy digest drift': turnInput({ names: ['read'], activeMutationPolicyDigest: 'b3:new-policy' }),
  'missing capability claim': turnInput({ names: ['read'], requiredClaims: ['memory.promote'] }),
  'text mode without a normaliser': turnInput({ names: ['read'], callSpec: { actionMode: 'text' } }),
};

describe('turn.machine model check', () => {
  const counts: Record<string, { states: number; transitions: number }> = {};
  for (const [name, input] of Object.entries(variants)) {
    it(`${name}: mutationReady only when every obligation holds, blocked whenever one fails`, () => {
      const result = checkMachine({
        machine: turnMachine,
        input,
        events: eventsOf(withDenials.has(name)),
        stateInvariants: {
          'mutationReady implies every obligation': (snapshot) => !snapshot.matches('mutationReady') || obligationsHold(snapshot, input),
          'a final state is mutationReady exactly when every obligation holds': (snapshot) =>
            snapshot.status !== 'done' || snapshot.matches('mutationReady') === obligationsHold(snapshot, input),
          'blocked carries at least one class': (snapshot) => !snapshot.matches('blocked') || snapshot.context.findings.length > 0,
          'no use before every result is in': (snapshot) => snapshot.context.uses.length === 0 || snapshot.context.requests.every((request) => snapshot.context.results.some((row) => row.callId === request.callId)),
        },
        transitionInvariants: {
          'a turn never requests effects (the session runs the calls)': ({ actions }) => actions.every((action) => action.type !== 'requestEffect'),
          'each stage witness is emitted once': ({ from, actions }) => {
            const emitted = actions.filter((action) => action.type === 'emitRecord').map((action) => (action.params as { type: string }).type);
            return from.status === 'done' || new Set(emitted).size === emitted.length;
          },
        },
      });
      expect(result.violations).toEqual([]);
      counts[name] = { states: result.states, transitions: result.transitions };
    });
  }

  it('keeps the size of every variant graph under review', () => {
    expect(counts).toMatchSnapshot();
  });
});
