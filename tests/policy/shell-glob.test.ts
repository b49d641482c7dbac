import fc from 'fast-check';
import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protectedPathsOf } from '../../src/policy/protected-paths.js';
import { classifyShellCommand } from '../../src/policy/shell-classify.js';
import { globRegExp } from '../../src/policy/shell-paths.js';
import { makeTempDir } from '../support/temp-dir.js';

const runs = Number(process.env.FC_RUNS ?? 50);

describe('glob components as bash matches them', () => {
  it.each([
    ['*.txt', 'a.txt', true],
    ['?.txt', 'ab.txt', false],
    ['[ab].txt', 'b.txt', true],
    ['[!ab].txt', 'b.txt', false],
    ['[^ab].txt', 'c.txt', true],
    ['[]a]', ']', true],
    ['[', '[', true],
    ['x[y', 'x[y', true],
    ['a.b', 'aXb', false],
    ['[z-a]', '[z-a]', true],
    ['(a|b)+$', '(a|b)+$', true],
  ])('%s against %s: %s', (component, name, matches) => {
    expect(globRegExp(component).test(name)).toBe(matches);
  });

  it('builds a pattern for any component, and a component without glob characters matches exactly itself', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), (component, other) => {
        const pattern = globRegExp(component);
        if (!/[*?[]/.test(component)) {
          expect(pattern.test(component)).toBe(true);
          expect(pattern.test(other)).toBe(other === component);
        }
      }),
      { numRuns: runs * 40 },
    );
  });
});

describe('the shell classifier with bracket words', () => {
  let root: { path: string; remove: () => Promise<void> };
  let workspace: string;
  beforeAll(async () => {
    root = await makeTempDir('rein-glob-');
    workspace = join(await realpath(root.path), 'ws');
    await mkdir(workspace, { recursive: true });
    await writeFile(join(workspace, 'a.txt'), 'a');
  });
  afterAll(() => root.remove());
  const classify = (command: string) => classifyShellCommand(command, { workspace, cwd: workspace, protectedPaths: protectedPathsOf(workspace), home: join(workspace, 'home') });

  it('classifies `[ … ]` tests instead of failing the session (trial 3: `while [ ! -f go ]` was EFFECT_FAILED)', () => {
    for (const command of ['while [ ! -f go ]; do sleep 0.1; done', '[ -f a.txt ] && echo yes', 'test -f [ || echo no', 'ls [', 'ls [z-a]']) {
      expect(() => classify(command)).not.toThrow();
    }
  });

  it('never throws, whatever the command', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('[', ']', '!', '*', '?', 'a', '-', 'z', ' ', '/', '.', '^', '\\', '(', '$', '{', '}'), { maxLength: 24 }), (chars) => {
        const command = `ls ${chars.join('')}`;
        expect(() => classify(command)).not.toThrow();
      }),
      { numRuns: runs * 20 },
    );
  });
});
