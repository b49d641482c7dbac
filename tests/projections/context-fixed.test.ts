import { describe, expect, it } from 'vitest';
import { fixedBlocks } from '../../src/projections/context-fixed.js';
import { contextProjection } from '../../src/projections/context.view.js';
import { rebuildView } from '../../src/projections/projection.js';
import { estimateTokenCounter } from '../../src/projections/token-counter.js';
import { LogBuilder } from '../support/log-builder.js';

const tools = [{ name: 'read', description: 'Read a file.', inputSchema: { type: 'object', properties: {} } }];

const blocksOf = (builder: LogBuilder, systemPrompt = 'Be careful.', environment?: { text: string }) => {
  const view = rebuildView(contextProjection(), builder.records);
  const actor = view.actors.get('root')!;
  return fixedBlocks({ view, actor, systemPrompt, tools, counter: estimateTokenCounter, phase: 'diagnosing', level: 0, ...(environment ? { environment } : {}) });
};

describe('the fixed blocks are kept while their inputs are the same', () => {
  it('a round with the same inputs gets the same system text; a new user message, prompt or environment renders it again', () => {
    const builder = new LogBuilder('Fix the bug.').user('Fix the bug.');
    const view = rebuildView(contextProjection(), builder.records);
    const actor = view.actors.get('root')!;
    const input = { view, actor, systemPrompt: 'Be careful.', tools, counter: estimateTokenCounter, phase: 'diagnosing' as const, level: 0 };
    const first = fixedBlocks(input);
    // The same view again: the kept text itself (what lets the assembly find its sealed message).
    expect(fixedBlocks({ ...input, level: 1 }).system).toBe(first.system);
    // A constraint from a new user message, another prompt, an environment: each is in the system text at once.
    builder.user('Do not touch b.ts.');
    const constrained = blocksOf(builder);
    expect(constrained.system).toContain('Do not touch b.ts.');
    expect(constrained.tokens).toBeGreaterThan(first.tokens);
    expect(blocksOf(builder, 'Be brief.').system).toContain('Be brief.');
    expect(blocksOf(builder, 'Be brief.', { text: 'OS: linux' }).system).toContain('OS: linux');
    // Equal to what a fresh rendering gives (another tool list: nothing kept).
    const fresh = fixedBlocks({ ...input, tools: [...tools] });
    expect(fresh).toEqual(first);
  });
});
