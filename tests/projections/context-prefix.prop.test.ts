import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContextProjected } from '../../models/context.records.js';
import type { ModelMessage } from '../../models/model-contract.js';
import { projectModelInput, type ModelInputProjection, type PolicyInput } from '../../src/projections/context-policy.js';
import { contextProjection } from '../../src/projections/context.view.js';
import { rebuildView } from '../../src/projections/projection.js';
import { estimateTokenCounter } from '../../src/projections/token-counter.js';
import { toolCallArbitrary } from '../support/tool-call-arbitrary.js';
import { LogBuilder, lines } from '../support/log-builder.js';
import { propertyRuns } from '../support/temp-dir.js';
import { assertPaired } from '../support/message-pairs.js';

const tools = [{ name: 'read', description: 'Read a file.', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } }];

const project = (builder: LogBuilder, options: PolicyInput['options'] = {}, compactionLevel = 0): ModelInputProjection =>
  projectModelInput({ view: rebuildView(contextProjection(), builder.records), actor: 'root', systemPrompt: 'You are a careful agent.', tools, counter: estimateTokenCounter, options, now: 1_000, compactionLevel });

/** Record a projection as the runtime does (`context.projected`), so the next round's view knows its layout. */
const record = (builder: LogBuilder, projection: ModelInputProjection, turn: number): void => {
  const { messages: _messages, ...ledger } = projection;
  builder.push('context.projected', ContextProjected.parse({ ...ledger, effectId: `root:p${turn}`, turn, attempt: 1, input: 'artifact://blake3/x' }));
};

/** The stable part of an input: every message up to its last cache breakpoint. */
const stablePart = (projection: ModelInputProjection): ModelMessage[] => projection.messages.slice(0, (projection.cacheBreakpoints.at(-1) ?? 0) + 1);

const startsWith = (messages: readonly ModelMessage[], prefix: readonly ModelMessage[]): boolean => prefix.every((message, index) => JSON.stringify(messages[index]) === JSON.stringify(message));

describe('a prefix the provider can cache', () => {
  it('without compaction, every round repeats the previous round\'s stable part byte for byte and only the volatile part comes after it', () => {
    const builder = new LogBuilder('Fix the failing parser test').user('Fix the failing parser test. Never edit dist/.');
    let previous: ModelInputProjection | undefined;
    for (let turn = 1; turn <= 40; turn++) {
      const projection = project(builder, { contextWindow: 200_000 });
      expect(projection.history.from).toBe(0);
      if (previous) {
        expect(startsWith(projection.messages, stablePart(previous))).toBe(true);
        expect(previous.messages.at(-1)!.content).toMatch(/^<turn-context /);
      }
      expect(projection.messages.at(-1)!.content).toContain(`model turns so far: ${turn - 1}`);
      expect(projection.messages[0]!.content).not.toContain('model turns so far');
      expect(projection.cacheBreakpoints[0]).toBe(0);
      record(builder, projection, turn);
      builder.turn(`Step ${turn}.`, [{ name: 'read', arguments: { path: `src/module-${turn}.ts` }, observation: lines(30, `module-${turn}`) }]);
      previous = projection;
    }
  });

  it('a compaction moves the history once; from there the prefix is stable again until the next one', () => {
    const builder = new LogBuilder('Refactor the parser').user('Refactor the parser.');
    let previous: ModelInputProjection | undefined;
    let compactions = 0;
    let breaks = 0;
    for (let turn = 1; turn <= 60; turn++) {
      const projection = project(builder, { contextWindow: 9_000, reservedOutput: 0 });
      assertPaired(projection.messages);
      if (previous) {
        const moved = projection.history.from !== previous.history.from;
        const kept = startsWith(projection.messages, stablePart(previous));
        if (moved) compactions++;
        if (!kept) breaks++;
        // A prefix breaks only where the history moved.
        if (!moved) expect(kept).toBe(true);
        if (moved) {
          expect(projection.messages[1]!.content).toMatch(/^<session-context [\s\S]*<history-summary replaces="#\d+\.\.#\d+"/);
          expect(projection.cacheBreakpoints).toHaveLength(3);
        }
      }
      expect(projection.overBudget).toBe(false);
      record(builder, projection, turn);
      builder.turn(`Step ${turn}.`, [{ name: 'read', arguments: { path: `src/module-${turn}.ts` }, observation: lines(40, `module-${turn}`) }]);
      previous = projection;
    }
    expect(compactions).toBeGreaterThan(0);
    expect(breaks).toBe(compactions);
    // Compactions are rare: each one frees room for many rounds.
    expect(compactions).toBeLessThan(15);
  });

  it('for any session: while the layout and the system message stay the same, the stable part is kept byte for byte', () => {
    const call = toolCallArbitrary;
    const step = fc.oneof(
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('user' as const), text: fc.constantFrom('Please continue.', 'Why?', 'Do not touch b.ts.') }) },
      { weight: 6, arbitrary: fc.record({ kind: fc.constant('turn' as const), text: fc.string({ maxLength: 30 }).map((text) => text.replace(/</g, '')), calls: fc.array(call, { minLength: 1, maxLength: 3 }) }) },
    );
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), fc.integer({ min: 2_000, max: 30_000 }), fc.integer({ min: 2, max: 12 }), (steps, window, tailEvents) => {
        const builder = new LogBuilder('Fix the bug.').user('Fix the bug.');
        let previous: ModelInputProjection | undefined;
        steps.forEach((entry, index) => {
          if (entry.kind === 'user') builder.user(entry.text);
          else builder.turn(entry.text, entry.calls);
          const projection = project(builder, { contextWindow: window, reservedOutput: 0, tailEvents });
          assertPaired(projection.messages);
          expect(projection.cacheBreakpoints.length).toBeLessThanOrEqual(3);
          if (previous && JSON.stringify(previous.history) === JSON.stringify(projection.history) && previous.messages[0]!.content === projection.messages[0]!.content) {
            expect(startsWith(projection.messages, stablePart(previous))).toBe(true);
          }
          record(builder, projection, index + 1);
          previous = projection;
        });
      }),
      {
        numRuns: propertyRuns(60),
        // Found by a run: the latest observation squeezed below the per-result cap was marked stable, and the next
        // round (a user message after it) rendered those results at the cap.
        examples: [
          [
            [
              { kind: 'turn', text: '', calls: [{ name: 'list_dir', arguments: { path: 'a.ts' }, status: 'error', observation: '' }, { name: 'read', arguments: { path: 'a.ts' }, status: 'ok', observation: '' }] },
              { kind: 'turn', text: '', calls: [{ name: 'write', arguments: { path: 'a.ts' }, status: 'ok', observation: '' }, { name: 'read', arguments: { path: 'a.ts' }, status: 'error', observation: '' }] },
              { kind: 'user', text: 'Do not touch b.ts.' },
              { kind: 'turn', text: '', calls: [{ name: 'list_dir', arguments: { path: 'a.ts' }, status: 'ok', observation: '' }, { name: 'read', arguments: { path: 'a.ts' }, status: 'ok', observation: '' }] },
              { kind: 'turn', text: ' ', calls: [{ name: 'list_dir', arguments: { path: 'a.ts' }, status: 'error', observation: lines(23, 'out-1000000000') }, { name: 'list_dir', arguments: { path: 'a.ts' }, status: 'ok', observation: lines(23, 'out-1000000000') }, { name: 'write', arguments: { path: 'a.ts' }, status: 'ok', observation: lines(103, 'out-1000000000') }] },
              { kind: 'user', text: 'Please continue.' },
              { kind: 'turn', text: '', calls: [{ name: 'read', arguments: { path: 'a.ts' }, status: 'ok', observation: '' }] },
            ],
            2_008,
            8,
          ],
        ],
      },
    );
  });
});
