import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolHarness, type ToolHarness } from '../support/tool-harness.js';
import { makeTempDir } from '../support/temp-dir.js';

describe('read, list_dir, glob, grep and read_artifact', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let harness: ToolHarness;
  beforeAll(async () => {
    dir = await makeTempDir('rein-search-');
    const root = dir.path;
    await mkdir(join(root, 'src', 'deep'), { recursive: true });
    await mkdir(join(root, 'node_modules', 'pkg'), { recursive: true });
    await mkdir(join(root, '.rein'));
    await writeFile(join(root, 'src', 'sum.js'), 'export const sum = (a, b) => a - b;\n');
    await writeFile(join(root, 'src', 'deep', 'more.js'), Array.from({ length: 30 }, (_, index) => `const sum${index} = ${index};`).join('\n'));
    await writeFile(join(root, 'src', 'notes.md'), 'no match here\n');
    await writeFile(join(root, 'node_modules', 'pkg', 'index.js'), 'const sum = 1;\n');
    await writeFile(join(root, '.rein', 'log.txt'), 'const sum = secret;\n');
    await writeFile(join(root, 'binary.bin'), Buffer.concat([Buffer.from('const sum = 1;\n'), Buffer.alloc(64, 0), Buffer.from('sum\n')]));
    await writeFile(join(root, 'huge.txt'), `${'x'.repeat(11 * 1024 * 1024)}\nconst sum = huge;\n`);
    await writeFile(join(root, 'long.txt'), Array.from({ length: 3000 }, (_, index) => `line ${index + 1}`).join('\n'));
    harness = await toolHarness(root, { protectedPaths: [join(root, '.rein')] });
  });
  afterAll(() => dir.remove());

  it('grep returns [{file,line,text}] sorted, skipping binary files, files over 10 MB, node_modules and the store', async () => {
    const result = await harness.run('grep', { pattern: 'const sum\\b' });
    expect(result.status).toBe('ok');
    expect(JSON.parse(result.observation)).toEqual([{ file: 'src/sum.js', line: 1, text: 'export const sum = (a, b) => a - b;' }]);
  });

  it('grep filters with include, stops at max_matches and says so', async () => {
    const result = await harness.run('grep', { pattern: 'sum\\d+', include: '*.js', max_matches: 5 });
    const [json, note] = result.observation.split('\n');
    expect(JSON.parse(json!)).toHaveLength(5);
    expect(note).toContain('max_matches=5');
  });

  it('grep searches node_modules when pointed inside it, and rejects a bad regex as InvalidInput', async () => {
    expect(JSON.parse((await harness.run('grep', { pattern: 'sum', path: 'node_modules/pkg' })).observation)).toEqual([{ file: 'node_modules/pkg/index.js', line: 1, text: 'const sum = 1;' }]);
    expect((await harness.run('grep', { pattern: '(unclosed' })).errorCode).toBe('InvalidInput');
  });

  it('glob returns workspace-relative paths, skipping node_modules and the store', async () => {
    expect(JSON.parse((await harness.run('glob', { pattern: '**/*.js' })).observation)).toEqual(['src/deep/more.js', 'src/sum.js']);
    expect(JSON.parse((await harness.run('glob', { pattern: '*.js', path: 'src/deep' })).observation)).toEqual(['src/deep/more.js']);
    const capped = await harness.run('glob', { pattern: '**/*', max_results: 2 });
    expect(capped.observation).toMatch(/paths matched; showing the first 2/);
  });

  it('list_dir hides the store', async () => {
    const names = (JSON.parse((await harness.run('list_dir', { path: '.' })).observation) as Array<{ name: string }>).map((entry) => entry.name);
    expect(names).toContain('src');
    expect(names).not.toContain('.rein');
  });

  it('read pages with offset and limit and says what is left', async () => {
    const page = await harness.run('read', { path: 'long.txt', offset: 10, limit: 2 });
    expect(page.observation.split('\n').slice(0, 2).map((line) => line.replace(/ [0-9a-f]{8} /, ' TAG '))).toEqual(['10 TAG | line 10', '11 TAG | line 11']);
    expect(page.observation).toContain('2989 more lines (use offset 12)');
    expect((await harness.run('read', { path: 'long.txt', offset: 5000 })).observation).toContain('past the end');
    expect((await harness.run('read', { path: 'binary.bin' })).errorCode).toBe('InvalidInput');
    expect((await harness.run('read', { path: 'missing.txt' })).errorCode).toBe('NotFound');
  });

  it('cuts a long observation, says so, and read_artifact pages through the whole', async () => {
    const small = await toolHarness(dir.path, {});
    small.environment.observationLimit = 500;
    const outcome = await small.call('grep', { pattern: '^line \\d+$', max_matches: 3000 });
    if (outcome.kind !== 'settled') throw new Error('expected a settled grep');
    expect(outcome.outcome.truncated?.omittedBytes).toBeGreaterThan(0);
    expect(outcome.outcome.observation).toContain(`truncated: ${outcome.outcome.truncated!.omittedBytes} bytes omitted; full output in ${outcome.outcome.truncated!.artifact}`);
    const whole = JSON.parse(Buffer.from(await small.environment.blobs.get(outcome.outcome.truncated!.artifact as never)).toString('utf8')) as unknown[];
    expect(whole).toHaveLength(3000);
    const page = await small.run('read_artifact', { artifact: outcome.outcome.truncated!.artifact, limit: 1 });
    expect(page.observation).toMatch(/^1 \| \[\{"file":"long.txt","line":1,/);
    expect((await small.run('read_artifact', { artifact: `artifact://blake3/${'1'.repeat(64)}` })).errorCode).toBe('NotFound');
  });

  it('read stays within the observation budget and says where to continue', async () => {
    const small = await toolHarness(dir.path, {});
    small.environment.observationLimit = 500;
    const outcome = await small.call('read', { path: 'long.txt' });
    if (outcome.kind !== 'settled') throw new Error('expected a settled read');
    expect(outcome.outcome.truncated).toBeUndefined();
    expect(outcome.outcome.observation.length).toBeLessThanOrEqual(500);
    const next = /use offset (\d+)\); the listing stopped at the observation budget/.exec(outcome.outcome.observation);
    expect(Number(next![1])).toBeGreaterThan(5);
    const following = await small.run('read', { path: 'long.txt', offset: Number(next![1]), limit: 1 });
    expect(following.observation).toMatch(new RegExp(`^${next![1]} [0-9a-f]{8} \\| line ${next![1]}\\n`));
  });

  it('a short observation is not marked truncated', async () => {
    const outcome = await harness.call('read', { path: 'src/sum.js' });
    expect(outcome.kind === 'settled' && outcome.outcome.truncated).toBeUndefined();
  });
});
