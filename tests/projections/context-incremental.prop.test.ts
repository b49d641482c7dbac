import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContextProjected } from '../../models/context.records.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import { countInput, projectModelInput, type ModelInputProjection, type PolicyInput } from '../../src/projections/context-policy.js';
import { contextProjection, type ContextView, type ContextViewOptions } from '../../src/projections/context.view.js';
import { inputPieces, messagesJson } from '../../src/projections/message-memo.js';
import { rebuildView, reducerOf } from '../../src/projections/projection.js';
import { toolsJson } from '../../src/projections/tools-json.js';
import { estimateTokenCounter } from '../../src/projections/token-counter.js';
import { toolCallArbitrary } from '../support/tool-call-arbitrary.js';
import { LogBuilder } from '../support/log-builder.js';
import { propertyRuns } from '../support/temp-dir.js';

const tools = [{ name: 'read', description: 'Read a file.', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } }];

const projectOn = (view: ContextView, options: PolicyInput['options'], compactionLevel: number): ModelInputProjection =>
  projectModelInput({ view, actor: 'root', systemPrompt: 'You are a careful agent.', tools, counter: estimateTokenCounter, options, now: 1_000, compactionLevel });

/** The model input's text as the host stores it (`inputPieces`, joined), and as a plain `JSON.stringify` of a projection made from scratch. */
const incrementalInput = (projection: ModelInputProjection): string =>
  inputPieces(projection.messages, toolsJson(tools), (projection.cacheBreakpoints.at(-1) ?? -1) + 1)
    .pieces.map((piece) => (typeof piece === 'string' ? piece : piece.parts.slice(0, piece.count).join(piece.separator)))
    .join('');
const scratchInput = (projection: ModelInputProjection): string => JSON.stringify({ messages: projection.messages, tools });

const call = toolCallArbitrary;
const step = fc.oneof(
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('user' as const), text: fc.constantFrom('Please continue.', 'Why?', 'Do not touch b.ts.') }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('turn' as const), text: fc.string({ maxLength: 30 }), calls: fc.array(call, { maxLength: 3 }) }) },
  // The provider said the input is too long: the session raises the compaction level (`compact()`).
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('compact' as const) }) },
);

describe('the context projection is incremental (issue 26, decision 3)', () => {
  it('for any session (compactions, evictions, results settling one by one): the incremental projection equals one from scratch, byte for byte', () => {
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: 45 }),
        fc.integer({ min: 2_000, max: 30_000 }),
        fc.integer({ min: 2, max: 12 }),
        fc.integer({ min: 4, max: 40 }),
        fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
        (steps, window, tailEvents, recentCapacity, midTurn) => {
          const viewOptions: ContextViewOptions = { recentCapacity };
          const options = { contextWindow: window, reservedOutput: 0, tailEvents };
          const builder = new LogBuilder('Fix the bug.').user('Fix the bug.');
          const reduce = reducerOf(contextProjection(viewOptions));
          // The live view: folded record by record, as the host does, so its items are shared from round to round.
          let live = contextProjection(viewOptions).initial();
          let folded = 0;
          const catchUp = (records: readonly RecordEnvelope[]): void => {
            for (; folded < records.length; folded++) live = reduce(live, records[folded]!);
          };
          let level = 0;
          const compare = (records: readonly RecordEnvelope[]): ModelInputProjection => {
            catchUp(records);
            const incremental = projectOn(live, options, level);
            // From scratch: a view rebuilt from the log has fresh items, so nothing rendered before is reused.
            const scratch = projectOn(rebuildView(contextProjection(viewOptions), records), options, level);
            expect(incremental).toEqual(scratch);
            expect(incrementalInput(incremental)).toBe(scratchInput(scratch));
            expect(messagesJson(incremental.messages)).toBe(JSON.stringify(scratch.messages));
            expect(incremental.estimatedTokens).toBe(countInput(scratch.messages, tools, estimateTokenCounter));
            return incremental;
          };
          steps.forEach((entry, index) => {
            if (entry.kind === 'compact') {
              level = Math.min(3, level + 1);
              return;
            }
            if (entry.kind === 'user') builder.user(entry.text);
            else builder.turn(entry.text, entry.calls);
            // Sometimes also project in the middle of the step (a reply whose results have not all settled).
            if (midTurn[index % midTurn.length] && entry.kind === 'turn' && entry.calls.length > 0) {
              const reply = builder.records.findLastIndex((record) => record.type === 'model.responded');
              compare(builder.records.slice(0, reply + 1 + (index % 2) * 2));
            }
            const projection = compare(builder.records);
            // Recorded as the runtime does (`context.projected`): the next round keeps its layout while it fits.
            const { messages: _messages, ...ledger } = projection;
            builder.push('context.projected', ContextProjected.parse({ ...ledger, effectId: `root:p${index}`, turn: index + 1, attempt: 1, input: 'artifact://blake3/x' }));
          });
        },
      ),
      { numRuns: propertyRuns(60) },
    );
  });

  it('for any order the live states are projected in (older ones again, after newer ones): each projection equals one from scratch', () => {
    // The history's and the summary's memos decide what changed by the actor's edits (renderHistory, renderSummary):
    // a state older than the one a memo was last rendered from must still render as if from scratch.
    fc.assert(
      fc.property(
        fc.array(step.filter((entry) => entry.kind !== 'compact'), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1_500, max: 12_000 }),
        fc.integer({ min: 4, max: 24 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 25 }),
        (steps, window, recentCapacity, order) => {
          const viewOptions: ContextViewOptions = { recentCapacity };
          const options = { contextWindow: window, reservedOutput: 0, tailEvents: 4 };
          const builder = new LogBuilder('Fix the bug.').user('Fix the bug.');
          for (const entry of steps) {
            if (entry.kind === 'user') builder.user(entry.text);
            else if (entry.kind === 'turn') builder.turn(entry.text, entry.calls);
          }
          const records = builder.records;
          const reduce = reducerOf(contextProjection(viewOptions));
          const states: ContextView[] = [];
          let live = contextProjection(viewOptions).initial();
          for (const record of records) states.push((live = reduce(live, record)));
          for (const pick of order) {
            const at = pick % states.length;
            const incremental = projectOn(states[at]!, options, 0);
            const scratch = projectOn(rebuildView(contextProjection(viewOptions), records.slice(0, at + 1)), options, 0);
            expect(incremental).toEqual(scratch);
            expect(incrementalInput(incremental)).toBe(scratchInput(scratch));
          }
        },
      ),
      { numRuns: propertyRuns(60) },
    );
  });
});
