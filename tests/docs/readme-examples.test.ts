import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const tsc = join(root, 'node_modules', '.bin', 'tsc');

/**
 * The TypeScript examples of the README and the docs pages that stand alone (a block that starts with its imports), with `rein` and
 * `rein/testing` pointed at the build: what a user who pastes one into a strict project gets.
 */
const standaloneBlocks = (readme: string, name: string): Array<{ line: number; code: string; name: string }> => {
  const blocks: Array<{ line: number; code: string; name: string }> = [];
  const pattern = /^```ts\n([\s\S]*?)^```$/gm;
  for (const match of readme.matchAll(pattern)) {
    const code = match[1]!;
    if (!code.startsWith('import ')) continue;
    const line = readme.slice(0, match.index).split('\n').length;
    blocks.push({
      name,
      line,
      code: code
        .replaceAll("from 'rein/testing'", `from '${join(root, 'dist/src/testing/index.js')}'`)
        .replaceAll("from 'rein'", `from '${join(root, 'dist/src/index.js')}'`),
    });
  }
  return blocks;
};

describe('the examples of the README and the docs', () => {
  let directory: string;
  let blocks: Array<{ line: number; code: string; name: string; file: string }>;
  beforeAll(async () => {
    // Inside the repository, so the examples resolve its packages (zod, vitest, fast-check, @types/node).
    directory = await mkdtemp(join(root, '.readme-examples-'));
    const pages = ['README.md', ...(await readdir(join(root, 'docs'))).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
    const found = await Promise.all(pages.map(async (page) => standaloneBlocks(await readFile(join(root, page), 'utf8'), page.replace(/\W+/g, '-'))));
    blocks = await Promise.all(
      found.flat().map(async (block) => {
        const file = join(directory, `${block.name}-${block.line}.ts`);
        await writeFile(file, `${block.code}\nexport {};\n`);
        return { ...block, file };
      }),
    );
  });
  afterAll(() => rm(directory, { recursive: true, force: true }));

  it('type-check under strict TypeScript as written (`checkMachine({ machine: sessionMachine, … })` included)', async () => {
    expect(blocks.some((block) => block.code.includes('machine: sessionMachine'))).toBe(true);
    const result = await run(tsc, ['--ignoreConfig', '--strict', '--noEmit', '--skipLibCheck', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', ...blocks.map((block) => block.file)], { cwd: root }).then(
      () => ({ code: 0, output: '' }),
      (error: { code?: number; stdout?: string }) => ({ code: error.code ?? 1, output: error.stdout ?? '' }),
    );
    expect(result).toEqual({ code: 0, output: '' });
  });

  it('the checkMachine example runs and finds no violation', async () => {
    const block = blocks.find((candidate) => candidate.code.includes('machine: sessionMachine'))!;
    const out = join(directory, 'out');
    await run(tsc, ['--ignoreConfig', '--skipLibCheck', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', '--outDir', out, block.file], { cwd: root });
    const script = join(out, `${block.name}-${block.line}.js`);
    await writeFile(script, `${await readFile(script, 'utf8')}\nif (result.violations.length > 0 || result.states < 2) { console.error(JSON.stringify(result)); process.exit(1); }\n`);
    const { stderr } = await run(process.execPath, [script]);
    expect(stderr).toBe('');
  });
});
