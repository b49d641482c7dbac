import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lineTag } from '../../src/tools/line-tags.js';
import { toolHarness, type ToolHarness } from '../support/tool-harness.js';
import { makeTempDir } from '../support/temp-dir.js';

const rejectionCode = (facts: ReadonlyArray<{ type: string; data: unknown }>) => (facts.find((fact) => fact.type === 'tool.rejected')?.data as { code?: string } | undefined)?.code;

describe('edit (exact match)', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let harness: ToolHarness;
  const file = () => join(dir.path, 'sum.js');
  beforeEach(async () => {
    dir = await makeTempDir('rein-edit-');
    await writeFile(file(), 'export const sum = (a, b) => a - b;\n// sum\n// sum\n');
    harness = await toolHarness(dir.path);
  });
  afterEach(() => dir.remove());

  it('refuses an edit before the file was read, and leaves it unchanged', async () => {
    const result = await harness.run('edit', { path: 'sum.js', old_string: 'a - b', new_string: 'a + b' });
    expect(result.errorCode).toBe('InvalidInput');
    expect(rejectionCode(result.facts)).toBe('runtime_precondition_failed');
    expect(await readFile(file(), 'utf8')).toContain('a - b');
  });

  it('replaces a unique match exactly and shows fresh tags', async () => {
    await harness.run('read', { path: 'sum.js' });
    const result = await harness.run('edit', { path: 'sum.js', old_string: 'a - b', new_string: 'a + b' });
    expect(result.status).toBe('ok');
    expect(await readFile(file(), 'utf8')).toBe('export const sum = (a, b) => a + b;\n// sum\n// sum\n');
    expect(result.observation).toContain(`1 ${lineTag(1, 'export const sum = (a, b) => a + b;')} | export const sum`);
    expect(result.facts.map((fact) => fact.type)).toContain('file.written');
  });

  it('refuses an ambiguous match unless replace_all is set', async () => {
    await harness.run('read', { path: 'sum.js' });
    const ambiguous = await harness.run('edit', { path: 'sum.js', old_string: '// sum', new_string: '// total' });
    expect(ambiguous.errorCode).toBe('InvalidInput');
    expect(rejectionCode(ambiguous.facts)).toBe('ambiguous_target');
    expect(ambiguous.observation).toContain('2 times');
    const all = await harness.run('edit', { path: 'sum.js', old_string: '// sum', new_string: '// total', replace_all: true });
    expect(all.status).toBe('ok');
    expect(await readFile(file(), 'utf8')).toBe('export const sum = (a, b) => a - b;\n// total\n// total\n');
  });

  it('matches whitespace exactly and reports not found', async () => {
    await harness.run('read', { path: 'sum.js' });
    const result = await harness.run('edit', { path: 'sum.js', old_string: 'a -  b', new_string: 'a + b' });
    expect(result.errorCode).toBe('InvalidInput');
    expect(rejectionCode(result.facts)).toBe('old_string_not_found');
  });

  it('refuses a stale baseline when the file changed after the read', async () => {
    await harness.run('read', { path: 'sum.js' });
    await writeFile(file(), 'export const sum = (a, b) => a - b; // changed by someone else\n');
    const result = await harness.run('edit', { path: 'sum.js', old_string: 'a - b', new_string: 'a + b' });
    expect(result.errorCode).toBe('InvalidInput');
    expect(rejectionCode(result.facts)).toBe('stale_file_baseline');
    expect(await readFile(file(), 'utf8')).toContain('changed by someone else');
  });

  it('refuses a no-op edit', async () => {
    await harness.run('read', { path: 'sum.js' });
    expect(rejectionCode((await harness.run('edit', { path: 'sum.js', old_string: 'a - b', new_string: 'a - b' })).facts)).toBe('no_op');
  });

  it('repairs a JSON-escaped old_string only when it then matches uniquely', async () => {
    await writeFile(file(), 'line one\n\tsay("hi");\nline one\n');
    await harness.run('read', { path: 'sum.js' });
    const repaired = await harness.run('edit', { path: 'sum.js', old_string: '\\tsay(\\"hi\\");', new_string: '\\tsay(\\"bye\\");' });
    expect(repaired.status).toBe('ok');
    expect(await readFile(file(), 'utf8')).toBe('line one\n\tsay("bye");\nline one\n');
    expect(repaired.facts.find((fact) => fact.type === 'tool.repaired')?.data).toMatchObject({ repairs: [{ field: 'old_string', kind: 'json-unescape' }, { field: 'new_string', kind: 'json-unescape' }] });
    await harness.run('read', { path: 'sum.js' });
    const twice = await harness.run('edit', { path: 'sum.js', old_string: 'line one\\n', new_string: 'x' });
    expect(twice.errorCode).toBe('InvalidInput');
    expect(rejectionCode(twice.facts)).toBe('old_string_not_found');
    expect(await readFile(file(), 'utf8')).toBe('line one\n\tsay("bye");\nline one\n');
  });

  it('allows a second edit after its own write (the write is the new baseline)', async () => {
    await harness.run('read', { path: 'sum.js' });
    await harness.run('edit', { path: 'sum.js', old_string: 'a - b', new_string: 'a + b' });
    expect((await harness.run('edit', { path: 'sum.js', old_string: 'a + b', new_string: 'b + a' })).status).toBe('ok');
  });

  it('a multi-line old_string written with \\n matches a file that ends every line with CRLF, and the edit keeps CRLF (issue 30 E)', async () => {
    await writeFile(file(), 'function sum(a, b) {\r\n  return a - b;\r\n}\r\n');
    await harness.run('read', { path: 'sum.js' });
    const result = await harness.run('edit', { path: 'sum.js', old_string: 'function sum(a, b) {\n  return a - b;', new_string: 'function sum(a, b) {\n  // add\n  return a + b;' });
    expect(result.status).toBe('ok');
    expect(await readFile(file(), 'utf8')).toBe('function sum(a, b) {\r\n  // add\r\n  return a + b;\r\n}\r\n');
    expect(result.facts.find((fact) => fact.type === 'tool.repaired')?.data).toMatchObject({ repairs: [{ field: 'old_string', kind: 'crlf-line-endings' }, { field: 'new_string', kind: 'crlf-line-endings' }] });
  });

  it('a file that mixes line endings gets no such repair: the match stays exact', async () => {
    await writeFile(file(), 'a\r\nb\nc\r\n');
    await harness.run('read', { path: 'sum.js' });
    const result = await harness.run('edit', { path: 'sum.js', old_string: 'a\nb', new_string: 'x' });
    expect(rejectionCode(result.facts)).toBe('old_string_not_found');
    expect(await readFile(file(), 'utf8')).toBe('a\r\nb\nc\r\n');
  });
});

describe('edit_lines (hash-anchored)', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let harness: ToolHarness;
  const file = () => join(dir.path, 'list.txt');
  beforeEach(async () => {
    dir = await makeTempDir('rein-edit-lines-');
    await writeFile(file(), 'one\ntwo\nthree\nfour\n');
    harness = await toolHarness(dir.path);
  });
  afterEach(() => dir.remove());

  it('applies operations in order, each against the re-hashed file', async () => {
    const result = await harness.run('edit_lines', {
      path: 'list.txt',
      ops: [
        { op: 'insert_after', tag: lineTag(1, 'one'), new_text: 'one-and-a-half' },
        // After the insert, "two" is line 3: its tag must be the re-hashed one.
        { op: 'replace_line', tag: lineTag(3, 'two'), new_text: 'TWO' },
        { op: 'delete_line', tag: lineTag(5, 'four') },
      ],
    });
    expect(result.status).toBe('ok');
    expect(await readFile(file(), 'utf8')).toBe('one\none-and-a-half\nTWO\nthree\n');
    expect(result.observation).toContain(`3 ${lineTag(3, 'TWO')} | TWO`);
  });

  it('rejects the whole request when a tag is stale, leaving the file untouched', async () => {
    const result = await harness.run('edit_lines', {
      path: 'list.txt',
      ops: [
        { op: 'replace_line', tag: lineTag(1, 'one'), new_text: 'ONE' },
        // A tag from before the first op shifted nothing here, but this one names text that is not there.
        { op: 'delete_line', tag: lineTag(2, 'zwei') },
      ],
    });
    expect(result.errorCode).toBe('InvalidInput');
    expect(rejectionCode(result.facts)).toBe('stale_tag');
    expect(await readFile(file(), 'utf8')).toBe('one\ntwo\nthree\nfour\n');
  });

  it('rejects a tag made stale by an earlier operation of the same request', async () => {
    const result = await harness.run('edit_lines', {
      path: 'list.txt',
      ops: [
        { op: 'insert_after', tag: lineTag(1, 'one'), new_text: 'inserted' },
        { op: 'delete_line', tag: lineTag(2, 'two') },
      ],
    });
    expect(rejectionCode(result.facts)).toBe('stale_tag');
    expect(await readFile(file(), 'utf8')).toBe('one\ntwo\nthree\nfour\n');
  });

  it('rejects a tag when the file changed since it was read', async () => {
    await writeFile(file(), 'one\n2\nthree\nfour\n');
    const result = await harness.run('edit_lines', { path: 'list.txt', ops: [{ op: 'replace_line', tag: lineTag(2, 'two'), new_text: 'x' }] });
    expect(rejectionCode(result.facts)).toBe('stale_tag');
    expect(await readFile(file(), 'utf8')).toBe('one\n2\nthree\nfour\n');
  });

  it('keeps a missing final newline missing, and replaces one line with several', async () => {
    await writeFile(file(), 'a\nb');
    const result = await harness.run('edit_lines', { path: 'list.txt', ops: [{ op: 'replace_line', tag: lineTag(2, 'b'), new_text: 'b1\nb2' }] });
    expect(result.status).toBe('ok');
    expect(await readFile(file(), 'utf8')).toBe('a\nb1\nb2');
  });

  it('shows the tags read printed, which edit_lines accepts', async () => {
    const read = await harness.run('read', { path: 'list.txt' });
    const tag = /^2 ([0-9a-f]{8}) \| two$/m.exec(read.observation)![1]!;
    expect((await harness.run('edit_lines', { path: 'list.txt', ops: [{ op: 'delete_line', tag }] })).status).toBe('ok');
    expect(await readFile(file(), 'utf8')).toBe('one\nthree\nfour\n');
  });
});
