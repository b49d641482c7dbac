import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import { StepDerived } from '../../models/step.records.js';
import { createEntryReader, derivedViewsOf, draftOfEntry, entriesOf, entriesOfDrafts, entryOf, flattenRecords, foldEntries, requestsOf, resolveEntry, seqsOf, sessionEndedIn, stepDataOf, upcastLegacySteps, type DerivedDraft } from '../../src/host/step-record.js';
import { propertyRuns } from '../support/temp-dir.js';

const envelope = (seq: number, type: string, data: unknown, extra: Partial<RecordEnvelope> = {}): RecordEnvelope => ({ stream: 's', seq, id: `r${seq}`, type, v: 1, at: 1_000 + seq, actor: 'root', data, ...extra });

const transition: DerivedDraft = { type: 'actor.transitioned', actor: 'root', data: { actor: 'root', event: 'model.responded', from: { running: 'awaitingModel' }, to: { running: 'runningTools' } } };
const intent: DerivedDraft = { type: 'effect.requested', actor: 'root', data: { effectId: 'root:e2', kind: 'executeTool', args: { callId: 'root:e1.0', name: 'read', arguments: { path: 'a' } } }, corr: 'root:e1.0' };
const witness: DerivedDraft = { type: 'turn.requests', actor: 'root/turn-1', data: { turnId: 'root:e1', requests: [{ callId: 'root:e1.0', name: 'read', argumentsDigest: 'b3:x' }], multisetDigest: 'b3:y' } };
const ended: DerivedDraft = { type: 'session.ended', actor: 'root', data: { status: 'completed' } };
const diff0 = (child: string): DerivedDraft => ({ type: 'capability.diff', actor: `root/d/${child}`, data: { effectId: `root/d/${child}:e1`, turn: 1, added: [], removed: [], changed: [], visible: 0, deferred: 0, digest: 'sha256:e', inputs: {} } });

describe('the step record', () => {
  it('stores transitions, intents and derived records compactly and reads them back as the records they stand for', () => {
    const data = stepDataOf([transition, witness, intent, ended], [{ type: 'model.attempted', data: { effectId: 'root:e1', attempt: 1 }, at: 990 }], 1_000);
    expect(StepDerived.parse(data)).toEqual(data);
    expect(data.derived[0]).toEqual([0, 'root', 'model.responded', 'running.awaitingModel', 'running.runningTools']);
    // A witness keeps its digest; its list is in the inputs.
    expect(data.derived[1]).toEqual([2, 'root/turn-1', 'turn.requests', { turnId: 'root:e1', multisetDigest: 'b3:y' }]);
    expect(data.facts).toEqual([['model.attempted', { effectId: 'root:e1', attempt: 1 }, null, -10]]);
    expect(draftOfEntry(data.derived[0]!)).toEqual(transition);
    expect(draftOfEntry(data.derived[2]!)).toEqual(intent);
    const step = envelope(2, 'step.derived', data, { cause: 'r1' });
    expect(entriesOf(step).map((entry) => [entry.type, entry.seq, entry.id, entry.at])).toEqual([
      ['model.attempted', 2, 'r2', 992],
      ['actor.transitioned', 2, 'r2', 1_002],
      ['turn.requests', 2, 'r2', 1_002],
      ['effect.requested', 2, 'r2', 1_002],
      ['session.ended', 2, 'r2', 1_002],
    ]);
    expect(requestsOf(step)).toEqual([{ ...envelope(2, 'effect.requested', intent.data, { cause: 'r1', corr: 'root:e1.0', at: 1_002 }) }]);
    expect(sessionEndedIn(step)?.data).toEqual({ status: 'completed' });
    expect(sessionEndedIn(step, 'root/child')).toBeUndefined();
  });

  it('keeps a state value whole where a dotted path would not read back the same', () => {
    const odd: DerivedDraft = { type: 'actor.transitioned', actor: 'root', data: { actor: 'root', event: 'e', from: null, to: { 'a.b': 'c', d: 'e' } } };
    expect(entryOf(odd)[4]).toEqual({ 'a.b': 'c', d: 'e' });
    expect(draftOfEntry(entryOf(odd))).toEqual(odd);
  });

  it('round-trips any derived draft through its entry (witness lists aside)', () => {
    const stateValue = fc.letrec<{ value: unknown }>((tie) => ({ value: fc.oneof({ depthSize: 'small' }, fc.stringMatching(/^[a-z]{1,6}$/), fc.dictionary(fc.stringMatching(/^[a-z.]{1,5}$/), tie('value'), { minKeys: 1, maxKeys: 2 })) })).value;
    const draft = fc.oneof(
      fc.record({ actor: fc.constantFrom('root', 'root/turn-1'), event: fc.string({ minLength: 1 }), from: fc.option(stateValue, { nil: null }), to: stateValue }).map(({ actor, event, from, to }) => ({ type: 'actor.transitioned', actor, data: { actor, event, from, to } }) as DerivedDraft),
      fc.record({ effectId: fc.string({ minLength: 1 }), args: fc.dictionary(fc.string(), fc.jsonValue()), corr: fc.option(fc.string(), { nil: undefined }) }).map(({ effectId, args, corr }) => ({ type: 'effect.requested', actor: 'root', data: { effectId, kind: 'callModel', args }, ...(corr === undefined ? {} : { corr }) }) as DerivedDraft),
      fc.record({ type: fc.constantFrom('session.ended', 'delegation.started', 'capability.diff'), data: fc.dictionary(fc.string(), fc.jsonValue()) }).map(({ type, data }) => ({ type, actor: 'root', data }) as DerivedDraft),
    );
    fc.assert(
      fc.property(draft, (value) => {
        expect(draftOfEntry(entryOf(value))).toEqual(value);
      }),
      { numRuns: propertyRuns(200) },
    );
  });

  it('stores a capability.diff equal but for its effectId to an earlier one of the step by reference, and reads it back whole', () => {
    // A few bodies, so that steps repeat some (a delegation's children) and differ in others; keys in any order.
    const bodies: Array<Record<string, unknown>> = [
      { turn: 1, added: [{ name: 'read', reason: 'initial', schemaDigest: 'b3:r' }], removed: [], changed: [], visible: 1, deferred: 0, digest: 'sha256:a', inputs: { mode: 'default', servers: {} } },
      { turn: 1, added: [{ name: 'read', reason: 'initial', schemaDigest: 'b3:r' }, { name: 'submit_report', reason: 'initial', schemaDigest: 'contract' }], removed: [], changed: [], visible: 2, deferred: 0, digest: 'sha256:b', inputs: { mode: 'default', servers: {} } },
      { inputs: { servers: {}, mode: 'default' }, digest: 'sha256:b', deferred: 0, visible: 2, changed: [], removed: [], added: [{ schemaDigest: 'b3:r', reason: 'initial', name: 'read' }, { name: 'submit_report', reason: 'initial', schemaDigest: 'contract' }], turn: 1 },
      { turn: 2, added: [], removed: [{ name: 'read', reason: 'deferred' }], changed: [], visible: 0, deferred: 1, digest: 'sha256:c', inputs: { mode: 'plan', servers: { s: 'ready' } } },
      { turn: 1, added: [], removed: [], changed: [], visible: 0, deferred: 0, digest: 'sha256:d', inputs: { mode: 'default', servers: {}, skill: 's' } },
      { turn: 1, added: [], removed: [], changed: [], visible: 0, deferred: -0, digest: 'sha256:d', inputs: { mode: 'default', servers: {}, skill: 's' } },
    ];
    // The bodies the same set stands for: the 2nd and 3rd differ only in key order; -0 is not 0.
    const groupOf = new Map(bodies.map((value, index) => [value, [0, 1, 1, 2, 3, 4][index]!]));
    const body = fc.constantFrom(...bodies);
    const group = new Map<Record<string, unknown>, number>();
    const diff = fc.record({ child: fc.integer({ min: 0, max: 9 }), body, corr: fc.option(fc.constant('root:e1.0'), { nil: undefined }) }).map(({ child, body: data, corr }): DerivedDraft => {
      const draft: DerivedDraft = { type: 'capability.diff', actor: `root/d/t${child}`, data: { effectId: `root/d/t${child}:e1`, ...data }, ...(corr === undefined ? {} : { corr }) };
      group.set(draft.data, groupOf.get(data)!);
      return draft;
    });
    const other = fc.constantFrom<DerivedDraft>(transition, intent, witness, { type: 'delegation.started', actor: 'root/d', data: { child: 'root/d/t0' } });
    fc.assert(
      fc.property(fc.array(fc.oneof(diff, diff, other), { maxLength: 24 }), (drafts) => {
        const data = stepDataOf(drafts, [], 1_000);
        expect(StepDerived.parse(data)).toEqual(data);
        const whole = entriesOfDrafts(drafts);
        expect(data.derived.map((entry) => resolveEntry(entry, data.derived))).toEqual(whole);
        expect(data.derived.map((entry) => draftOfEntry(entry, data.derived))).toEqual(drafts.map((draft) => draftOfEntry(entryOf(draft))));
        const step = envelope(2, 'step.derived', data, { cause: 'r1' });
        expect(derivedViewsOf(step).map((view) => view.data)).toEqual(whole.map((entry) => draftOfEntry(entry).data));
        expect(foldEntries<unknown[]>([], step, (seen, entry) => [...seen, entry.data], (type) => type === 'capability.diff')).toEqual(drafts.filter((draft) => draft.type === 'capability.diff').map((draft) => draft.data));
        // Each reference names an earlier whole diff; a body is stored whole once while fewer than 4 bodies are whole.
        const bases = new Set<number>();
        data.derived.forEach((entry, index) => {
          if (entry[0] !== 2 || entry[2] !== 'capability.diff') return;
          const at = entry[3].sameAs;
          if (at === undefined) return void bases.add(index);
          expect(Object.keys(entry[3])).toEqual(['effectId', 'sameAs']);
          expect(bases.has(at as number)).toBe(true);
        });
        const distinct = new Set(drafts.filter((draft) => draft.type === 'capability.diff').map((draft) => group.get(draft.data)));
        if (distinct.size <= 4) expect(bases.size).toBe(distinct.size);
      }),
      { numRuns: propertyRuns(300) },
    );
    // A reference that names no whole capability.diff is left as stored.
    const stored = stepDataOf([diff0('t0'), diff0('t1')], [], 1_000).derived;
    expect(stored[1]![3]).toEqual({ effectId: 'root/d/t1:e1', sameAs: 0 });
    const broken = [transition, diff0('t1')].map((draft) => entryOf(draft));
    broken[1] = [2, 'root/d/t1', 'capability.diff', { effectId: 'root/d/t1:e1', sameAs: 0 }];
    expect(resolveEntry(broken[1], broken)).toBe(broken[1]);
  });

  it('reads a log in the order the runtime produced it: a step\'s folded facts before its input', () => {
    const started = { effectId: 'root:e2', callId: 'c', name: 'read', validated: true, permission: { decision: 'allow', rule: 'mode:default', reason: 'read-only tool', mode: 'default', source: 'mode' } };
    const records = [
      envelope(1, 'session.created', {}),
      envelope(2, 'step.derived', { derived: [] }, { cause: 'r1' }),
      envelope(3, 'tool.settled', { effectId: 'root:e2', callId: 'c' }, { cause: 'r0' }),
      envelope(4, 'step.derived', stepDataOf([transition], [{ type: 'tool.started', data: started, corr: 'c', at: 1_003 }], 1_004), { cause: 'r3' }),
    ];
    const flat = flattenRecords(records);
    expect(flat.map((record) => record.type)).toEqual(['session.created', 'tool.validated', 'permission.decided', 'tool.started', 'tool.settled', 'actor.transitioned']);
    // The folded facts share the input's cause; the derived entries are caused by the input.
    expect(flat.slice(1, 4).map((record) => record.cause)).toEqual(['r0', 'r0', 'r0']);
    expect(flat[5]!.cause).toBe('r3');
    expect(flat[2]!.data).toEqual({ effectId: 'root:e2', callId: 'c', tool: 'read', decision: 'allow', rule: 'mode:default', reason: 'read-only tool', mode: 'default', source: 'mode' });
    // A log written before step records passes through unchanged (nothing is held).
    const legacy = [envelope(1, 'session.created', {}), envelope(2, 'actor.transitioned', transition.data, { cause: 'r1' }), envelope(3, 'user.message', { text: 'x' })];
    const reader = createEntryReader();
    expect(legacy.flatMap((record) => reader.push(record))).toEqual(legacy);
  });

  it('folds only the entries a reader wants', () => {
    const step = envelope(2, 'step.derived', stepDataOf([transition, witness, ended], [], 1_002), { cause: 'r1' });
    expect(foldEntries<string[]>([], step, (seen, entry) => [...seen, entry.type], (type) => type === 'session.ended')).toEqual(['session.ended']);
  });

  it('folds exactly the entries a reader wants, whatever the step holds and the reader reads (a step it wants nothing of is skipped whole)', () => {
    const types = ['actor.transitioned', 'effect.requested', 'turn.requests', 'session.ended', 'delegation.completed', 'capability.diff', 'model.attempted', 'tool.started', 'tool.validated', 'permission.decided', 'context.projected'];
    const byType: Record<string, DerivedDraft> = {
      'actor.transitioned': transition,
      'effect.requested': intent,
      'turn.requests': witness,
      'session.ended': ended,
      'delegation.completed': { type: 'delegation.completed', actor: 'root', data: { child: 'root/child-1' } },
      'capability.diff': { type: 'capability.diff', actor: 'root', data: { added: [] } },
    };
    const started = { effectId: 'root:e2', callId: 'c', name: 'read', validated: true, permission: { decision: 'allow', rule: 'mode:default', reason: 'read-only tool', mode: 'default', source: 'mode' } };
    const facts = { 'model.attempted': { type: 'model.attempted', data: { effectId: 'root:e1', attempt: 1 }, at: 1_000 }, 'tool.started': { type: 'tool.started', data: started, corr: 'c', at: 1_000 }, 'context.projected': { type: 'context.projected', data: { effectId: 'root:e1' }, at: 1_000 } };
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...Object.keys(byType)), { maxLength: 8 }),
        fc.subarray(Object.keys(facts)),
        fc.subarray(types),
        (derived, folded, wanted) => {
          const step = envelope(2, 'step.derived', stepDataOf(derived.map((type) => byType[type]!), folded.map((type) => facts[type as keyof typeof facts]), 1_002), { cause: 'r1' });
          const wantedSet = new Set(wanted);
          const wants = (type: string) => wantedSet.has(type);
          const expected = entriesOf(step).filter((entry) => wantedSet.has(entry.type)).map((entry) => entry.type);
          // Twice: the second fold reads what the first one kept (per predicate, per step).
          expect(foldEntries<string[]>([], step, (seen, entry) => [...seen, entry.type], wants)).toEqual(expected);
          expect(foldEntries<string[]>([], step, (seen, entry) => [...seen, entry.type], wants)).toEqual(expected);
        },
      ),
      { numRuns: propertyRuns(300) },
    );
  });

  it('upcasts a legacy step\'s derived records into one step record, keeping their seqs', () => {
    const legacy = [
      envelope(1, 'model.responded', {}, { cause: 'r0' }),
      envelope(2, 'actor.transitioned', transition.data, { cause: 'r1' }),
      envelope(3, 'tool.validated', {}, { cause: 'rX' }),
      envelope(4, 'effect.requested', intent.data, { cause: 'r1', corr: 'root:e1.0' }),
      envelope(5, 'user.message', { text: 'x' }),
    ];
    const upcast = upcastLegacySteps(legacy);
    expect(upcast.map((record) => [record.seq, record.type])).toEqual([[1, 'model.responded'], [2, 'step.derived'], [3, 'tool.validated'], [5, 'user.message']]);
    expect(seqsOf(upcast[1]!)).toEqual([2, 4]);
    expect((upcast[1]!.data as StepDerived).derived).toEqual([entryOf(transition, true), entryOf(intent, true)]);
    // A log in the step layout passes through as it is.
    const current = [envelope(1, 'user.message', {}), envelope(2, 'step.derived', { derived: [] }, { cause: 'r1' })];
    expect(upcastLegacySteps(current)).toEqual(current);
  });
});
