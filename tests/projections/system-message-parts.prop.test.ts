import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inputPieces, messageJson, sealSystemMessage } from '../../src/projections/message-memo.js';
import { propertyRuns } from '../support/temp-dir.js';

/** Texts with what JSON escapes: quotes, backslashes, controls, lone and paired surrogates, multi-byte characters. */
const text = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom('"', '\\', '\n', '\u0001', '\ud800', '\udc00', '\ud83d', '\ude00', '😀', 'é', '</system-rules>'),
);

const joined = (pieces: ReturnType<typeof inputPieces>['pieces']): string =>
  pieces.map((piece) => (typeof piece === 'string' ? piece : piece.parts.slice(0, piece.count).join(piece.separator))).join('');

describe('a system message sealed as a shared head and its own rest', () => {
  it('serialises to exactly JSON.stringify of the whole message, alone and inside the stored input, whatever the texts (split surrogate pairs included)', () => {
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 4 }), fc.array(text, { maxLength: 4 }), (headParts, restParts) => {
        const head = headParts.join('');
        const rest = restParts.join('');
        const content = head + rest;
        const message = sealSystemMessage(content, head, rest);
        expect(message).toEqual({ role: 'system', content });
        expect(messageJson(message)).toBe(JSON.stringify({ role: 'system', content }));
        const user = { role: 'user' as const, content: rest };
        const { pieces } = inputPieces([message, user], '[]', 1);
        expect(joined(pieces)).toBe(JSON.stringify({ messages: [message, user], tools: [] }));
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('shares the head: two agents with one head hand the hasher the same opening string, and their own rests', () => {
    const head = `<system-rules trust="trusted">\n${'rules '.repeat(500)}\n</system-rules>`;
    const first = inputPieces([sealSystemMessage(`${head}\n<task>a</task>`, head, '\n<task>a</task>')], '[]', 1).pieces;
    const second = inputPieces([sealSystemMessage(`${head}\n<task>b</task>`, head, '\n<task>b</task>')], '[]', 1).pieces;
    expect(first[1]).toBe(second[1]);
    expect(first[2]).not.toBe(second[2]);
    expect(String(first[2]).length).toBeLessThan(40);
  });
});
