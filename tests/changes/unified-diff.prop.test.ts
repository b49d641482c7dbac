import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lineCounts, unifiedHunks } from '../../src/changes/unified-diff.js';
import { propertyRuns } from '../support/temp-dir.js';

/** Apply unified hunks to `before` (checking every context and removed line): what a patch tool would do. */
const applyHunks = (before: string, hunks: readonly string[]): string => {
  const lines = before === '' ? [] : (before.endsWith('\n') ? before.slice(0, -1) : before).split('\n');
  const noFinalNewline = before !== '' && !before.endsWith('\n');
  const out: string[] = [];
  let index = 0;
  let endsWithoutNewline = noFinalNewline;
  for (const hunk of hunks) {
    const [header, ...body] = hunk.split('\n');
    const match = /^@@ -(\d+),(\d+) \+(\d+),(\d+) @@$/.exec(header!)!;
    const start = Number(match[2]) === 0 ? Number(match[1]) : Number(match[1]) - 1;
    while (index < start) out.push(lines[index++]!);
    for (let position = 0; position < body.length; position++) {
      const line = body[position]!;
      const last = body[position + 1] === '\\ No newline at end of file';
      if (line.startsWith('\\')) continue;
      const kind = line[0];
      const text = line.slice(1);
      if (kind === ' ' || kind === '-') {
        expect(lines[index]).toBe(text);
        index++;
      }
      if (kind === ' ' || kind === '+') {
        out.push(text);
        endsWithoutNewline = last;
      } else if (last) endsWithoutNewline = false;
    }
  }
  while (index < lines.length) {
    out.push(lines[index++]!);
    endsWithoutNewline = noFinalNewline;
  }
  if (out.length === 0) return '';
  return out.join('\n') + (endsWithoutNewline ? '' : '\n');
};

const text = fc.array(fc.constantFrom('a', 'b', 'c', '', 'd e', 'ünï'), { maxLength: 30 }).chain((lines) => fc.constantFrom(lines.join('\n'), lines.join('\n') + (lines.length > 0 ? '\n' : '')));

describe('unified diffs', () => {
  it('fast-check: applying the hunks to the old text gives the new one, and the stat counts the changed lines', () => {
    fc.assert(
      fc.property(text, text, (before, after) => {
        const hunks = unifiedHunks(before, after);
        expect(hunks.length === 0).toBe(before === after);
        expect(applyHunks(before, hunks)).toBe(after);
        const { added, removed } = lineCounts(before, after);
        const body = hunks.flatMap((hunk) => hunk.split('\n').slice(1));
        expect(added).toBeLessThanOrEqual(body.filter((line) => line.startsWith('+')).length);
        expect(removed).toBeLessThanOrEqual(body.filter((line) => line.startsWith('-')).length);
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('shows one changed line with three lines of context', () => {
    expect(unifiedHunks('1\n2\n3\n4\n5\n6\n7\n', '1\n2\n3\nfour\n5\n6\n7\n')).toEqual(['@@ -1,7 +1,7 @@\n 1\n 2\n 3\n-4\n+four\n 5\n 6\n 7']);
    expect(unifiedHunks('', 'new\n')).toEqual(['@@ -0,0 +1,1 @@\n+new']);
    expect(unifiedHunks('x', 'x\n')).toEqual(['@@ -1,1 +1,1 @@\n-x\n\\ No newline at end of file\n+x']);
  });
});
