import fc from 'fast-check';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { WorkspaceCaptured, WorkspaceChanged } from '../../models/workspace.records.js';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import { CaptureFilter } from '../../src/changes/capture-rules.js';
import { scanWorkspace } from '../../src/changes/scan-workspace.js';
import { treeChanges } from '../../src/changes/tree-changes.js';
import { loggedTree } from '../../src/changes/tree-manifest.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { createRein } from '../../src/rein.js';
import { makeTempDir, propertyRuns } from '../support/temp-dir.js';

const paths = ['a.txt', 'ü ñ.txt', 'd/b.bin', 'd/e/f/g.txt', 'empty', 'link'];
const path = fc.constantFrom(...paths);
const quoted = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
const parent = (file: string) => (file.includes('/') ? `mkdir -p ${quoted(file.slice(0, file.lastIndexOf('/')))} && ` : '');
const bash = (command: string) => ({ name: 'bash', arguments: { command: `${command} 2>/dev/null; true` } });

/** One call that changes the workspace, by every path a session has: the file tool and shell commands of each kind. */
const mutation = fc.oneof(
  fc.record({ file: path, text: fc.string({ maxLength: 12 }) }).map(({ file, text }) => ({ name: 'write', arguments: { path: file, content: text } })),
  fc.record({ file: path, text: fc.string({ minLength: 1, maxLength: 8 }) }).map(({ file, text }) => bash(`${parent(file)}echo ${quoted(text)} > ${quoted(file)}`)),
  fc.record({ file: path, bytes: fc.uint8Array({ maxLength: 6 }) }).map(({ file, bytes }) => bash(`${parent(file)}printf '${[...bytes].map((byte) => `\\${byte.toString(8).padStart(3, '0')}`).join('')}' > ${quoted(file)}`)),
  path.map((file) => bash(`${parent(file)}: > ${quoted(file)}`)),
  path.map((file) => bash(`rm -rf ${quoted(file)}`)),
  fc.record({ from: path, to: path }).map(({ from, to }) => bash(`${parent(to)}mv ${quoted(from)} ${quoted(to)}`)),
  fc.record({ file: path, mode: fc.constantFrom('600', '755', '644') }).map(({ file, mode }) => bash(`chmod ${mode} ${quoted(file)}`)),
  fc.record({ file: path, target: fc.constantFrom('a.txt', 'missing', 'd') }).map(({ file, target }) => bash(`${parent(file)}ln -sfn ${target} ${quoted(file)}`)),
  fc.constantFrom('d/e/f', 'd/ü/deep er/x').map((folder) => bash(`mkdir -p ${quoted(folder)}`)),
);

/** The tree recorded at `seq`: the digest of the last workspace record at or before it (the baseline before the first). */
const recordedTreeAt = (records: readonly RecordEnvelope[], seq: number): string => {
  const workspace = records.filter((record) => record.type === 'workspace.captured' || record.type === 'workspace.changed');
  const last = workspace.filter((record) => record.seq <= seq).at(-1) ?? workspace[0]!;
  return (last.data as WorkspaceCaptured | WorkspaceChanged).tree;
};

describe('rewinding a session that changed its workspace by every path', () => {
  it('fast-check: after rewinding to any seq k, the tree on disk is the one recorded at k (its diff to the tree at k is empty); the tree the log holds at k is the one recorded there', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(), { minLength: 1, maxLength: 4 }), async (calls, picks) => {
        const workspace = await makeTempDir('rein-rewind-prop-');
        try {
          await writeFile(join(workspace.path, 'a.txt'), 'start\n');
          const store = createMemoryEventStore();
          const provider = createScriptedProvider(parseScript({ turns: [...calls.map((call) => ({ text: 'Changing.', toolCalls: [call] })), { text: 'Done.' }] }));
          const rein = await createRein({ store, workspace: workspace.path, provider, memory: false, permissions: { approveAll: true } });
          const session = await rein.startSession({ task: 'change things' });
          expect((await session.whenQuiet()).status).toBe('completed');
          await session.release();
          const original = await store.read(session.id);
          const read = (ref: string) => store.readBlob(session.id, ref);
          const steps = original.filter((record) => record.type === 'tool.settled' || record.type.startsWith('workspace.')).map((record) => record.seq);
          // The log's tree at every step is the one its record names (a replay of the changes from the baseline).
          for (const seq of steps) expect((await loggedTree(original, read, seq))!.tree.digest()).toBe(recordedTreeAt(original, seq));
          const filter = new CaptureFilter(workspace.path, {}, [join(workspace.path, '.rein')]);
          for (const pick of picks) {
            const to = steps[pick % steps.length]!;
            const result = await rein.rewind(session.id, { to, code: true });
            expect(result.code?.verified).toBe(true);
            const disk = (await scanWorkspace(workspace.path, filter)).tree;
            expect(disk.digest()).toBe(recordedTreeAt(original, to));
            const records = await store.read(session.id);
            expect(treeChanges((await loggedTree(records, read, to))!.tree, disk)).toEqual([]);
          }
          // Undo the last rewind: the record before it started.
          const records = await store.read(session.id);
          const started = records.filter((record) => record.type === 'workspace.rewind-started').at(-1);
          if (started) {
            await rein.rewind(session.id, { to: started.seq - 1, code: true });
            expect((await scanWorkspace(workspace.path, filter)).tree.digest()).toBe(recordedTreeAt(records, started.seq - 1));
          }
          await expect(rein.replaySession(session.id)).resolves.toMatchObject({ verified: expect.any(Number) });
          await rein.close();
        } finally {
          await workspace.remove();
        }
      }),
      { numRuns: propertyRuns(6) },
    );
  });
});
