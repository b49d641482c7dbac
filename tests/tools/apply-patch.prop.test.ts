import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyHunks } from '../../src/tools/patch/patch-apply.js';
import { parsePatch, type PatchHunk } from '../../src/tools/patch/patch-parse.js';
import { applyChanges } from '../../src/tools/patch/patch-files.js';
import { Workspace } from '../../src/tools/workspace.js';
import { blake3Hex } from '../../src/util/blake3.js';
import { toolHarness, type ToolHarness } from '../support/tool-harness.js';
import { makeTempDir, propertyRuns } from '../support/temp-dir.js';

/** A generated file: distinct lines (each ends with its index, so a hunk matches only where it was cut from). */
interface GeneratedFile {
  lines: string[];
  eol: '\n' | '\r\n';
  trailing: boolean;
}

/** One change: keep `before` context lines, remove `remove` lines, add `add`, keep `after` context lines. */
interface Change {
  before: number;
  remove: number;
  add: string[];
  after: number;
}

const word = fc.stringMatching(/^[a-z ]{0,12}$/);
const fileArbitrary = fc.record({
  lines: fc.array(fc.tuple(word, fc.constantFrom('', '  ', '\u00e9', '\t')), { minLength: 1, maxLength: 30 }).map((parts) => parts.map(([text, tail], index) => `${text}${tail}#${index}`)),
  eol: fc.constantFrom('\n' as const, '\r\n' as const),
  trailing: fc.boolean(),
});
const changeArbitrary = fc.record({
  before: fc.integer({ min: 0, max: 3 }),
  remove: fc.integer({ min: 0, max: 3 }),
  add: fc.array(word.map((text) => `new ${text}`), { maxLength: 3 }),
  after: fc.integer({ min: 0, max: 3 }),
});

const bytesOf = (file: GeneratedFile): Buffer => Buffer.from(file.lines.join(file.eol) + (file.trailing ? file.eol : ''), 'utf8');

/**
 * Lay the changes out over the file from the top, each after the previous one's context (changes that do not fit are
 * dropped), and return the hunks in patch text and the content the file must have afterwards (computed here, from
 * the lines, not by the applier).
 */
const layOut = (file: GeneratedFile, changes: readonly Change[], starts: readonly number[]): { hunks: string[]; expected: Buffer } => {
  const hunks: string[] = [];
  const output: Array<{ text: string; original: number | undefined }> = [];
  let cursor = 0;
  changes.forEach((change, index) => {
    const start = cursor + (starts[index] ?? 0);
    const end = start + change.before + change.remove + change.after;
    if (change.before + change.remove + change.after === 0 || end > file.lines.length) return;
    for (let keep = cursor; keep < start + change.before; keep++) output.push({ text: file.lines[keep]!, original: keep });
    const lines = [
      ...file.lines.slice(start, start + change.before).map((line) => ` ${line}`),
      ...file.lines.slice(start + change.before, start + change.before + change.remove).map((line) => `-${line}`),
      ...change.add.map((line) => `+${line}`),
      ...file.lines.slice(start + change.before + change.remove, end).map((line) => ` ${line}`),
    ];
    hunks.push(['@@', ...lines].join('\n'));
    output.push(...change.add.map((text) => ({ text, original: undefined })));
    for (let keep = start + change.before + change.remove; keep < end; keep++) output.push({ text: file.lines[keep]!, original: keep });
    cursor = end;
  });
  for (let keep = cursor; keep < file.lines.length; keep++) output.push({ text: file.lines[keep]!, original: keep });
  const last = output[output.length - 1];
  // The file ends without a line end only when its own last line, untouched, is still last.
  const endsBare = !file.trailing && last !== undefined && last.original === file.lines.length - 1;
  // A one-line file without a line end has none to copy: added lines end with `\n`.
  const eol = file.lines.length === 1 && !file.trailing ? '\n' : file.eol;
  const text = output.map((line) => line.text).join(eol) + (output.length > 0 && !endsBare ? eol : '');
  return { hunks, expected: Buffer.from(text, 'utf8') };
};

const hunksOf = (path: string, hunks: readonly string[]): PatchHunk[] => {
  const parsed = parsePatch(['*** Begin Patch', `*** Update File: ${path}`, ...hunks, '*** End Patch'].join('\n'));
  if (!parsed.ok || parsed.operations[0]?.kind !== 'update') throw new Error(`generated patch did not parse: ${parsed.ok ? 'no update' : parsed.message}`);
  return parsed.operations[0].hunks;
};

describe('apply_patch applies exactly or not at all', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let harness: ToolHarness;
  beforeAll(async () => {
    dir = await makeTempDir('rein-patch-prop-');
    harness = await toolHarness(dir.path);
  });
  afterAll(() => dir.remove());

  it('random files and random valid patches give exactly the expected bytes', () => {
    fc.assert(
      fc.property(fileArbitrary, fc.array(changeArbitrary, { minLength: 1, maxLength: 5 }), fc.array(fc.nat({ max: 4 }), { minLength: 5, maxLength: 5 }), (file, changes, starts) => {
        const { hunks, expected } = layOut(file, changes, starts);
        fc.pre(hunks.length > 0);
        const applied = applyHunks(bytesOf(file), hunksOf('f.txt', hunks));
        expect(applied.ok).toBe(true);
        expect(applied.ok && applied.bytes.toString('utf8')).toBe(expected.toString('utf8'));
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('through the tool, on disk, across several files: every file exact — and one bad hunk anywhere changes no byte of any file', async () => {
    const fileSets = fc.array(fc.tuple(fileArbitrary, fc.array(changeArbitrary, { minLength: 1, maxLength: 3 }), fc.array(fc.nat({ max: 3 }), { minLength: 3, maxLength: 3 })), { minLength: 1, maxLength: 3 });
    await fc.assert(
      fc.asyncProperty(fileSets, fc.nat(), fc.boolean(), async (sets, pick, corrupt) => {
        const planned = sets.map(([file, changes, starts], index) => ({ name: `file-${index}.txt`, file, ...layOut(file, changes, starts) }));
        fc.pre(planned.every((entry) => entry.hunks.length > 0));
        for (const entry of planned) {
          await writeFile(join(dir.path, entry.name), bytesOf(entry.file));
          await harness.run('read', { path: entry.name });
        }
        const sections = planned.map((entry) => [`*** Update File: ${entry.name}`, ...entry.hunks]);
        if (corrupt) {
          // One hunk of one file expects a line no file has.
          const section = sections[pick % sections.length]!;
          const hunkIndexes = section.flatMap((line, index) => (line.startsWith('@@') ? [index] : []));
          const at = hunkIndexes[pick % hunkIndexes.length]!;
          section.splice(at + 1, 0, '-NO SUCH LINE ANYWHERE');
        }
        const result = await harness.run('apply_patch', { input: ['*** Begin Patch', ...sections.flat(), '*** End Patch'].join('\n') });
        for (const entry of planned) {
          const now = await readFile(join(dir.path, entry.name));
          expect(now.equals(corrupt ? bytesOf(entry.file) : entry.expected)).toBe(true);
          await rm(join(dir.path, entry.name));
        }
        expect(result.status).toBe(corrupt ? 'error' : 'ok');
        if (corrupt) expect(result.observation).toMatch(/hunk \d+ of file-\d+\.txt .*does not match the file/);
      }),
      { numRuns: propertyRuns(40) },
    );
  });

  it('a file that changed after the patch was checked stops every change (the executor re-checks all first)', async () => {
    const workspace = await Workspace.open(dir.path);
    await writeFile(join(dir.path, 'a.txt'), 'a\n');
    await writeFile(join(dir.path, 'b.txt'), 'b changed\n');
    const refused = await applyChanges(workspace, [
      { target: join(workspace.root, 'a.txt'), relative: 'a.txt', before: blake3Hex(Buffer.from('a\n')), after: Buffer.from('A\n'), original: Buffer.from('a\n'), missingDirectories: [] },
      { target: join(workspace.root, 'b.txt'), relative: 'b.txt', before: blake3Hex(Buffer.from('b\n')), after: Buffer.from('B\n'), original: Buffer.from('b\n'), missingDirectories: [] },
    ]);
    expect(refused?.reason).toBe('stale_file_baseline');
    expect(await readFile(join(dir.path, 'a.txt'), 'utf8')).toBe('a\n');
    expect(await readFile(join(dir.path, 'b.txt'), 'utf8')).toBe('b changed\n');
  });

  it('a write that fails part-way is undone: the files already written get their bytes back', async () => {
    const workspace = await Workspace.open(dir.path);
    await writeFile(join(dir.path, 'c.txt'), 'c\n');
    const refused = await applyChanges(workspace, [
      { target: join(workspace.root, 'c.txt'), relative: 'c.txt', before: blake3Hex(Buffer.from('c\n')), after: Buffer.from('C\n'), original: Buffer.from('c\n'), missingDirectories: [] },
      // A directory where a file should be created: writing it fails after c.txt was written.
      { target: join(workspace.root, 'd'), relative: 'd', before: null, after: Buffer.from('x'), original: null, missingDirectories: [join(workspace.root, 'd')] },
    ]);
    expect(refused).toBeDefined();
    expect(refused?.message).toContain('nothing was changed');
    expect(await readFile(join(dir.path, 'c.txt'), 'utf8')).toBe('c\n');
  });
});
