import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toolHarness, type ToolHarness } from '../support/tool-harness.js';
import { makeTempDir } from '../support/temp-dir.js';

const rejectionCode = (facts: ReadonlyArray<{ type: string; data: unknown }>) => (facts.find((fact) => fact.type === 'tool.rejected')?.data as { code?: string } | undefined)?.code;
const patch = (...lines: string[]) => ['*** Begin Patch', ...lines, '*** End Patch'].join('\n');

describe('apply_patch', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let harness: ToolHarness;
  const at = (name: string) => join(dir.path, name);
  beforeEach(async () => {
    dir = await makeTempDir('rein-patch-');
    await writeFile(at('app.py'), 'def greet():\n    print("Hi")\n\ndef main():\n    greet()\n');
    await writeFile(at('notes.txt'), 'one\ntwo\nthree\n');
    harness = await toolHarness(dir.path, { protectedPaths: [join(dir.path, 'secret')] });
  });
  afterEach(() => dir.remove());

  it('adds, updates, moves and deletes in one call, and records what it wrote', async () => {
    await harness.run('read', { path: 'app.py' });
    await harness.run('read', { path: 'notes.txt' });
    const result = await harness.run('apply_patch', {
      input: patch('*** Add File: src/new/hello.txt', '+Hello', '+world', '*** Update File: app.py', '*** Move to: main.py', '@@ def greet():', '-    print("Hi")', '+    print("Hello, world!")', '*** Delete File: notes.txt'),
    });
    expect(result.status).toBe('ok');
    expect(result.observation).toContain('added src/new/hello.txt (2 lines); updated app.py (1 hunk) and moved it to main.py; deleted notes.txt');
    expect(await readFile(at('src/new/hello.txt'), 'utf8')).toBe('Hello\nworld\n');
    expect(await readFile(at('main.py'), 'utf8')).toBe('def greet():\n    print("Hello, world!")\n\ndef main():\n    greet()\n');
    await expect(stat(at('app.py'))).rejects.toThrow();
    await expect(stat(at('notes.txt'))).rejects.toThrow();
    expect(result.facts.filter((fact) => fact.type === 'file.written').map((fact) => (fact.data as { path: string }).path)).toEqual(['src/new/hello.txt', 'main.py']);
  });

  it('a hunk that does not match changes nothing, and says which hunk and the nearest lines', async () => {
    await harness.run('read', { path: 'app.py' });
    await harness.run('read', { path: 'notes.txt' });
    const result = await harness.run('apply_patch', { input: patch('*** Update File: notes.txt', '-one', '+ONE', '*** Update File: app.py', '@@', ' def greet():', '-    print("Hi")', '+    print("Bye")', '@@', ' def main():', '-    greeet()', '+    run()') });
    expect(result.errorCode).toBe('InvalidInput');
    expect(rejectionCode(result.facts)).toBe('hunk_mismatch');
    expect(result.observation).toContain('hunk 2 of app.py (patch line 10) does not match the file');
    expect(result.observation).toContain('-    greeet()');
    expect(result.observation).toMatch(/4 \| def main\(\):\n\s+5 \|     greet\(\)/);
    expect(await readFile(at('notes.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    expect(await readFile(at('app.py'), 'utf8')).toContain('print("Hi")');
  });

  it('keeps the boundary of edit: read first, unchanged since, no protected path, nothing outside, nothing over an existing file', async () => {
    const unread = await harness.run('apply_patch', { input: patch('*** Update File: notes.txt', '-one', '+1') });
    expect(rejectionCode(unread.facts)).toBe('runtime_precondition_failed');
    await harness.run('read', { path: 'notes.txt' });
    await writeFile(at('notes.txt'), 'one\ntwo\nthree\nfour\n');
    expect(rejectionCode((await harness.run('apply_patch', { input: patch('*** Update File: notes.txt', '-one', '+1') })).facts)).toBe('stale_file_baseline');
    expect((await harness.run('apply_patch', { input: patch('*** Add File: secret/key.txt', '+x') })).errorCode).toBe('Denied');
    expect((await harness.run('apply_patch', { input: patch('*** Add File: ../escape.txt', '+x') })).errorCode).toBe('Denied');
    expect(rejectionCode((await harness.run('apply_patch', { input: patch('*** Add File: app.py', '+x') })).facts)).toBe('already_exists');
    expect(rejectionCode((await harness.run('apply_patch', { input: 'not a patch' })).facts)).toBe('patch_invalid');
    expect(await readFile(at('notes.txt'), 'utf8')).toBe('one\ntwo\nthree\nfour\n');
  });

  it('keeps CRLF line ends and bytes that are not UTF-8 on the lines it does not touch', async () => {
    await writeFile(at('win.txt'), Buffer.from('caf\u00e9\r\nkeep  \r\nold\r\nlast', 'latin1'));
    await harness.run('read', { path: 'win.txt' });
    const result = await harness.run('apply_patch', { input: patch('*** Update File: win.txt', ' keep', '-old', '+new', ' last', '+after') });
    expect(result.status).toBe('ok');
    expect(await readFile(at('win.txt'))).toEqual(Buffer.from('caf\u00e9\r\nkeep  \r\nnew\r\nlast\r\nafter\r\n', 'latin1'));
  });

  it('finds a hunk after its anchors, prefers the end for *** End of File, and appends a bare addition', async () => {
    await writeFile(at('dup.txt'), 'x\nsection b\nx\nend\nx\n');
    await harness.run('read', { path: 'dup.txt' });
    const anchored = await harness.run('apply_patch', { input: patch('*** Update File: dup.txt', '@@ section b', '-x', '+y') });
    expect(anchored.status).toBe('ok');
    expect(await readFile(at('dup.txt'), 'utf8')).toBe('x\nsection b\ny\nend\nx\n');
    await harness.run('read', { path: 'dup.txt' });
    await harness.run('apply_patch', { input: patch('*** Update File: dup.txt', '-x', '+z', '*** End of File') });
    expect(await readFile(at('dup.txt'), 'utf8')).toBe('x\nsection b\ny\nend\nz\n');
    await harness.run('read', { path: 'dup.txt' });
    await harness.run('apply_patch', { input: patch('*** Update File: dup.txt', '@@', '+appended') });
    expect(await readFile(at('dup.txt'), 'utf8')).toBe('x\nsection b\ny\nend\nz\nappended\n');
  });

  it('matches despite trailing whitespace and typographic quotes, keeping the file\'s own context bytes', async () => {
    await writeFile(at('q.txt'), 'say \u201chi\u201d   \nnext\n');
    await harness.run('read', { path: 'q.txt' });
    const result = await harness.run('apply_patch', { input: patch('*** Update File: q.txt', ' say "hi"', '-next', '+then') });
    expect(result.status).toBe('ok');
    expect(await readFile(at('q.txt'), 'utf8')).toBe('say \u201chi\u201d   \nthen\n');
  });

  it('asks before writing in default mode, and a deny rule for one of its files denies the whole patch', async () => {
    await mkdir(at('locked'));
    await writeFile(at('locked/a.txt'), 'a\n');
    const guarded = await toolHarness(dir.path, { permissions: { rules: [{ action: 'deny', tool: 'apply_patch', pattern: 'locked/**' }] } });
    await guarded.run('read', { path: 'notes.txt' });
    await guarded.run('read', { path: 'locked/a.txt' });
    const denied = await guarded.run('apply_patch', { input: patch('*** Update File: notes.txt', '-one', '+1', '*** Update File: locked/a.txt', '-a', '+b') });
    expect(denied.errorCode).toBe('Denied');
    const asking = await (await toolHarness(dir.path, { permissions: {} })).run('apply_patch', { input: patch('*** Add File: fresh.txt', '+x') });
    expect(asking.status).toBe('ask');
    expect(await readFile(at('notes.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
  });
});
