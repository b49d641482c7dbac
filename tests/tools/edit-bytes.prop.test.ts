import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lineTag } from '../../src/tools/line-tags.js';
import { toolHarness, type ToolHarness } from '../support/tool-harness.js';
import { makeTempDir, propertyRuns } from '../support/temp-dir.js';

const rejectionCode = (facts: ReadonlyArray<{ type: string; data: unknown }>) => (facts.find((fact) => fact.type === 'tool.rejected')?.data as { code?: string } | undefined)?.code;

/** Lines joined with `\n`, and one more at the end when `trailingNewline`. */
const joined = (lines: readonly Buffer[], trailingNewline: boolean): Buffer =>
  Buffer.concat([...lines.flatMap((line, index) => (index === 0 ? [line] : [Buffer.from([0x0a]), line])), ...(trailingNewline ? [Buffer.from([0x0a])] : [])]);

describe('edits preserve the bytes they do not touch', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let harness: ToolHarness;
  beforeAll(async () => {
    dir = await makeTempDir('rein-edit-bytes-');
    harness = await toolHarness(dir.path);
  });
  afterAll(() => dir.remove());

  const latin1 = Buffer.from('caf\u00e9 cr\u00e8me\nline two\nna\u00efve \u00a9 1999\n', 'latin1');

  it('edit on a Latin-1 file replaces only the matched bytes', async () => {
    await writeFile(join(dir.path, 'menu.txt'), latin1);
    expect((await harness.run('read', { path: 'menu.txt' })).observation).toContain('caf\ufffd');
    const result = await harness.run('edit', { path: 'menu.txt', old_string: 'line two', new_string: 'LINE 2' });
    expect(result.status).toBe('ok');
    const after = await readFile(join(dir.path, 'menu.txt'));
    expect(after).toEqual(Buffer.from('caf\u00e9 cr\u00e8me\nLINE 2\nna\u00efve \u00a9 1999\n', 'latin1'));
  });

  it('edit_lines on a Latin-1 file rewrites only the lines it names', async () => {
    await writeFile(join(dir.path, 'menu.txt'), latin1);
    await harness.run('read', { path: 'menu.txt' });
    const result = await harness.run('edit_lines', { path: 'menu.txt', ops: [{ op: 'replace_line', tag: lineTag(2, 'line two'), new_text: 'second\nthird' }, { op: 'delete_line', tag: lineTag(1, 'caf\ufffd cr\ufffdme') }] });
    expect(result.status).toBe('ok');
    expect(await readFile(join(dir.path, 'menu.txt'))).toEqual(Buffer.from('second\nthird\nna\u00efve \u00a9 1999\n', 'latin1'));
  });

  it('an old_string quoting the U+FFFD read showed is refused naming the encoding problem; the file is untouched', async () => {
    await writeFile(join(dir.path, 'menu.txt'), latin1);
    await harness.run('read', { path: 'menu.txt' });
    const result = await harness.run('edit', { path: 'menu.txt', old_string: 'caf\ufffd', new_string: 'cafe' });
    expect(result).toMatchObject({ status: 'error', errorCode: 'InvalidInput' });
    expect(rejectionCode(result.facts)).toBe('invalid_encoding');
    expect(result.observation).toContain('menu.txt is not valid UTF-8 (from line 1)');
    expect(await readFile(join(dir.path, 'menu.txt'))).toEqual(latin1);
  });

  // Lines of arbitrary bytes (no newline; no NUL, which would make read call it binary) around one ASCII marker line.
  const noise = fc.uint8Array({ minLength: 0, maxLength: 40 }).map((bytes) => Buffer.from(bytes.map((byte) => (byte === 0x0a || byte === 0 ? 0x7f : byte))));
  const files = fc.record({ before: fc.array(noise, { maxLength: 6 }), after: fc.array(noise, { maxLength: 6 }), trailingNewline: fc.boolean(), viaLines: fc.boolean() });

  it('on random bytes, edit and edit_lines change the marker line and leave every other line byte-identical', async () => {
    let round = 0;
    await fc.assert(
      fc.asyncProperty(files, async ({ before, after, trailingNewline, viaLines }) => {
        const name = `random-${round++}.bin.txt`;
        const marker = Buffer.from('MARKER-LINE-TO-EDIT');
        const lines = [...before, marker, ...after];
        const original = joined(lines, trailingNewline);
        await writeFile(join(dir.path, name), original);
        const read = await harness.run('read', { path: name });
        expect(read.status).toBe('ok');
        const result = viaLines
          ? await harness.run('edit_lines', { path: name, ops: [{ op: 'replace_line', tag: lineTag(before.length + 1, marker.toString()), new_text: 'edited é' }] })
          : await harness.run('edit', { path: name, old_string: marker.toString(), new_string: 'edited é' });
        expect(result.status).toBe('ok');
        const expected = joined([...before, Buffer.from('edited é'), ...after], trailingNewline);
        expect((await readFile(join(dir.path, name))).toString('hex')).toBe(expected.toString('hex'));
      }),
      { numRuns: propertyRuns(60) },
    );
  });
});
