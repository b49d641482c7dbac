import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TreeEntry } from '../../models/workspace.records.js';
import { WorkspaceTree } from '../../src/changes/workspace-tree.js';
import { treeChanges } from '../../src/changes/tree-changes.js';
import { loadBlake3 } from '../../src/util/blake3.js';
import { propertyRuns } from '../support/temp-dir.js';

const names = fc.constantFrom('a', 'b', 'c d', 'ü');
const path = fc.array(names, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('/'));
const entry: fc.Arbitrary<TreeEntry> = fc.oneof(
  fc.record({ type: fc.constant('file' as const), mode: fc.constantFrom(0o644, 0o755), size: fc.nat(9), content: fc.constantFrom('1', '2', '3').map((digit) => `artifact://blake3/${digit.repeat(64)}`) }),
  fc.record({ type: fc.constant('symlink' as const), target: fc.constantFrom('a', '../x') }),
  fc.record({ type: fc.constant('dir' as const), mode: fc.constantFrom(0o755, 0o700) }),
);
/** Set `path` (with directories for its parents), or delete it. */
const operation = fc.oneof(fc.record({ path, entry }), fc.record({ path }));

const applyTo = (tree: WorkspaceTree, op: { path: string; entry?: TreeEntry }) => {
  if (!op.entry) return void tree.delete(op.path);
  const parts = op.path.split('/');
  for (let depth = 1; depth < parts.length; depth++) if (tree.get(parts.slice(0, depth).join('/'))?.type !== 'dir') tree.set(parts.slice(0, depth).join('/'), { type: 'dir', mode: 0o755 });
  tree.set(op.path, op.entry);
};

describe('the workspace tree', () => {
  beforeAll(loadBlake3);

  it('fast-check: the digest kept current change by change equals the digest of the same entries built afresh; tree changes replay one tree into the other', () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 40 }), fc.array(operation, { maxLength: 20 }), (first, second) => {
        const live = new WorkspaceTree();
        for (const op of first) {
          applyTo(live, op);
          live.digest();
        }
        expect(WorkspaceTree.of(live.list()).digest()).toBe(live.digest());
        const next = live.clone();
        for (const op of second) applyTo(next, op);
        const replayed = live.clone();
        replayed.apply(treeChanges(live, next));
        expect(replayed.digest()).toBe(next.digest());
        expect(replayed.list()).toEqual(next.list());
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});
