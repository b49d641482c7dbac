import { describe, expect, it } from 'vitest';
import { renderTurn } from '../../src/projections/context-sources.js';
import type { TurnItem } from '../../src/projections/context.view.js';
import { estimateTokenCounter, type TokenCounter } from '../../src/projections/token-counter.js';

const turn: TurnItem = {
  kind: 'turn',
  seq: 7,
  turn: 2,
  text: 'reading the file',
  toolCalls: [{ callId: 'e1.0', name: 'read', arguments: { path: 'a.txt' } }],
  results: [{ callId: 'e1.0', name: 'read', seq: 9, status: 'ok', observation: Array.from({ length: 400 }, (_, index) => `line ${index} of the file`).join('\n') }],
};

describe('renderTurn', () => {
  it('gives fresh messages on every call, so a caller that changes them never changes the next projection', () => {
    const first = renderTurn(turn, 2_000, estimateTokenCounter);
    const again = renderTurn(turn, 2_000, estimateTokenCounter);
    expect(again).toEqual(first);
    first.messages[0]!.content = 'changed';
    (first.messages[0] as { toolCalls: Array<{ name: string }> }).toolCalls[0]!.name = 'changed';
    first.messages.push({ role: 'user', content: 'extra' });
    first.modes.push('changed');
    expect(renderTurn(turn, 2_000, estimateTokenCounter)).toEqual(again);
    expect(again.messages[0]!.content).toBe('reading the file');
  });

  it('renders again for another result cap or another counter, exactly as a first rendering would', () => {
    const wide = renderTurn(turn, 2_000, estimateTokenCounter);
    const narrow = renderTurn(turn, 100, estimateTokenCounter);
    expect(narrow.tokens).toBeLessThan(wide.tokens);
    expect(renderTurn({ ...turn }, 100, estimateTokenCounter)).toEqual(narrow);
    const doubled: TokenCounter = { name: 'double', count: (text) => 2 * estimateTokenCounter.count(text) };
    const counted = renderTurn(turn, 2_000, doubled);
    expect(counted).toEqual(renderTurn({ ...turn }, 2_000, doubled));
    expect(counted.tokens).not.toBe(wide.tokens);
    // A third cap evicts the oldest rendering, never a wrong one.
    expect(renderTurn(turn, 2_000, estimateTokenCounter)).toEqual(wide);
  });
});
