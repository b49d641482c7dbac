import { lstatSync, mkdirSync, mkdtempSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { canonicalPath, gitControlPaths, instructionPaths, protectedPathsOf, workspacePathsOf } from '../../src/policy/protected-paths.js';
import { propertyRuns } from '../support/temp-dir.js';

/**
 * The definition `canonicalPath` had before it skipped missing paths without an exception: realpath each ancestor
 * in turn, following a dangling symlink to where it points. The faster version must answer the same for any path.
 */
const reference = (path: string, depth = 0): string => {
  let existing = resolve(path);
  const rest: string[] = [];
  for (;;) {
    try {
      const real = realpathSync.native(existing);
      return rest.length === 0 ? real : join(real, ...rest.reverse());
    } catch {
      let target: string | undefined;
      try {
        target = depth < 40 && lstatSync(existing).isSymbolicLink() ? resolve(dirname(existing), readlinkSync(existing)) : undefined;
      } catch {
        target = undefined;
      }
      if (target !== undefined) return reference(rest.length === 0 ? target : join(target, ...rest.reverse()), depth + 1);
      const parent = dirname(existing);
      if (parent === existing) return resolve(path);
      rest.push(basename(existing));
      existing = parent;
    }
  }
};

// One tree with every kind of step a path can meet: folders, a file used as a folder, links to folders, to files,
// dangling links (to a missing file, into a missing folder), a link loop, and a link out of the tree.
const root = realpathSync.native(mkdtempSync(join(tmpdir(), 'rein-canonical-')));
mkdirSync(join(root, 'a', 'b'), { recursive: true });
mkdirSync(join(root, '.git', 'hooks'), { recursive: true });
writeFileSync(join(root, 'a', 'file.txt'), 'x');
writeFileSync(join(root, '.git', 'config'), '[core]\n');
writeFileSync(join(root, 'a', 'AGENTS.md'), 'be nice\n');
symlinkSync(join(root, 'a'), join(root, 'to-a'));
symlinkSync('file.txt', join(root, 'a', 'to-file'));
symlinkSync(join(root, 'missing.txt'), join(root, 'dangling'));
symlinkSync(join(root, 'nowhere', 'deep'), join(root, 'a', 'dangling-deep'));
symlinkSync('loop-b', join(root, 'loop-a'));
symlinkSync('loop-a', join(root, 'loop-b'));
symlinkSync(tmpdir(), join(root, 'out'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const step = fc.constantFrom('a', 'b', 'file.txt', 'to-a', 'to-file', 'dangling', 'dangling-deep', 'loop-a', 'loop-b', 'out', 'missing', '.git', 'config', 'hooks', '..', '.', 'AGENTS.md');

describe('canonicalPath', () => {
  it('answers as realpath-then-parent did, for paths through folders, files, missing entries and every kind of link', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 0, maxLength: 6 }), (steps) => {
        const path = join(root, ...steps);
        expect(canonicalPath(path)).toBe(reference(path));
      }),
      { numRuns: propertyRuns(200) },
    );
  });

  it('one walk gives the protected paths protectedPathsOf gives and the readable ones gitControlPaths and instructionPaths give', () => {
    const paths = workspacePathsOf(root, ['store']);
    expect(paths.protected).toEqual(protectedPathsOf(root, ['store']));
    expect(paths.readable).toEqual([...gitControlPaths(root), ...instructionPaths(root)]);
    expect(paths.readable).toContain(join(root, '.git', 'config'));
    expect(paths.readable).toContain(join(root, 'a', 'AGENTS.md'));
  });
});
