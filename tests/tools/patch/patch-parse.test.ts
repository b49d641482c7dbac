import { describe, expect, it } from 'vitest';
import { parsePatch } from '../../../src/tools/patch/patch-parse.js';
import { patchPaths, patchSummary, patchTargets } from '../../../src/tools/patch/patch-paths.js';

const patch = (...lines: string[]) => ['*** Begin Patch', ...lines, '*** End Patch'].join('\n');

describe('the apply_patch grammar', () => {
  it('reads adds, deletes, updates with a move, anchors and an end-of-file hunk', () => {
    const parsed = parsePatch(patch('*** Add File: a.txt', '+one', '+', '*** Delete File: b.txt', '*** Update File: c.py', '*** Move to: d.py', '@@ def f():', ' x = 1', '-y = 2', '+y = 3', '@@', ' last', '+tail', '*** End of File'));
    expect(parsed).toEqual({
      ok: true,
      operations: [
        { kind: 'add', path: 'a.txt', lines: ['one', ''], patchLine: 2 },
        { kind: 'delete', path: 'b.txt', patchLine: 5 },
        {
          kind: 'update',
          path: 'c.py',
          moveTo: 'd.py',
          patchLine: 6,
          hunks: [
            { anchors: ['def f():'], lines: [{ kind: 'context', text: 'x = 1' }, { kind: 'remove', text: 'y = 2' }, { kind: 'add', text: 'y = 3' }], endOfFile: false, patchLine: 8 },
            { anchors: [], lines: [{ kind: 'context', text: 'last' }, { kind: 'add', text: 'tail' }], endOfFile: true, patchLine: 12 },
          ],
        },
      ],
    });
  });

  it('is lenient where models drift: heredoc, padded markers, CRLF, a hunk without @@, an empty context line, a unified range', () => {
    const text = `<<'EOF'\r\n  *** Begin Patch  \r\n*** Update File: a.txt\r\n keep\r\n\r\n-old\r\n+new\r\n@@ -10,3 +10,3 @@\r\n x\r\n*** End Patch\r\nEOF\r\n`;
    const parsed = parsePatch(text);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const update = parsed.operations[0]!;
    expect(update.kind === 'update' && update.hunks.map((hunk) => [hunk.anchors, hunk.lines.map((line) => `${line.kind}:${line.text}`)])).toEqual([
      [[], ['context:keep', 'context:', 'remove:old', 'add:new']],
      [[], ['context:x']],
    ]);
  });

  it.each([
    ['no envelope', '*** Update File: a\n-x\n+y', 'must start with'],
    ['no end marker', '*** Begin Patch\n*** Delete File: a', 'must end with'],
    ['nothing inside', patch(), 'names no file'],
    ['an update without hunks', patch('*** Update File: a.txt', '*** Delete File: b.txt'), 'has no hunks'],
    ['an add line without +', patch('*** Add File: a.txt', 'oops'), 'starts with "+"'],
    ['a hunk line without a prefix', patch('*** Update File: a.txt', '@@', '*x'), 'a hunk line starts with'],
    ['an unknown header', patch('*** Rename File: a.txt'), 'unknown header'],
    ['a misplaced move', patch('*** Delete File: a.txt', '*** Move to: b.txt'), 'must follow'],
    ['the same file twice', patch('*** Delete File: a.txt', '*** Add File: a.txt', '+x'), 'named again'],
    ['lines before any header', patch('+x'), 'expected a file header'],
    ['a header without a path', patch('*** Delete File: '), 'names no path'],
  ])('refuses %s, saying where', (_name, text, expected) => {
    const parsed = parsePatch(text);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.message).toContain(expected);
  });

  it('names the files a patch touches from its headers alone (trace, context view, rein show, ACP)', () => {
    const text = patch('*** Add File: new.ts', '+x', '*** Update File: old.ts', '*** Move to: moved.ts', '@@', '-a', '+b', '*** Delete File: gone.ts');
    expect(patchTargets(text)).toEqual([{ kind: 'add', path: 'new.ts' }, { kind: 'update', path: 'old.ts', moveTo: 'moved.ts' }, { kind: 'delete', path: 'gone.ts' }]);
    expect(patchPaths(text)).toEqual(['new.ts', 'old.ts', 'moved.ts', 'gone.ts']);
    expect(patchSummary(text)).toBe('patch new.ts, old.ts (+2 more)');
    expect(patchPaths(42)).toEqual([]);
    // As `rein show` sees it: control characters escaped, line ends as `\n`.
    expect(patchPaths(text.replace(/\n/g, '\\n'))).toEqual(['new.ts', 'old.ts', 'moved.ts', 'gone.ts']);
  });
});
