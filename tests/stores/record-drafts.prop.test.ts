import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RecordEnvelope } from '../../models/envelope.js';
import type { RecordDraft } from '../../models/envelope.js';
import { prepareBatch } from '../../stores/record-drafts.js';

const runs = Number(process.env.FC_RUNS ?? 50);

const text = fc.oneof(fc.constant(''), fc.string({ maxLength: 6 }), fc.constantFrom('root', 'root/child-2'));
const typeName = fc.oneof(
  fc.constantFrom('tool.settled', 'actor.transitioned', 'a.b.c', 'tool-call.started', 'Tool.settled', 'tool', 'tool.', '.tool', 'tool..x', '1tool.x', 'tool.x-1'),
  fc.string({ maxLength: 8 }),
);
const number = fc.oneof(
  fc.integer({ min: -2, max: 3 }),
  fc.constantFrom(1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, 1_700_000_000_000),
  fc.double(),
);
const optionalText = fc.option(text, { nil: undefined });
const field = <T>(valid: fc.Arbitrary<T>): fc.Arbitrary<T | number | null | undefined> =>
  fc.oneof({ weight: 6, arbitrary: valid }, { weight: 1, arbitrary: fc.constantFrom(null, undefined, 7) });

const draftLike = fc.record({
  id: field(text),
  type: field(typeName),
  v: number,
  at: number,
  actor: field(text),
  cause: field(optionalText),
  corr: field(optionalText),
  data: fc.jsonValue(),
});

describe('prepareBatch validation', () => {
  it('accepts exactly the drafts the RecordEnvelope schema accepts', () => {
    fc.assert(
      fc.property(draftLike, (candidate) => {
        const accepted = RecordEnvelope.safeParse({ ...candidate, stream: 'prop', seq: 1 }).success;
        let prepared = true;
        try {
          prepareBatch('prop', 1, [candidate as RecordDraft]);
        } catch (error) {
          expect(error).toMatchObject({ code: 'STORE_INVALID_ARGUMENT' });
          prepared = false;
        }
        expect(prepared).toBe(accepted);
      }),
      { numRuns: runs * 20 },
    );
  }, 120_000);
});
