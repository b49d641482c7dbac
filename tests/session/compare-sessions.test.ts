import { readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { recordVersion } from '../../models/record-kinds.js';
import { createMemoryEventStore } from '../../stores/index.js';
import { createRein } from '../../src/rein.js';
import { actorProvider, type ActorReply } from '../support/delegation-fixtures.js';
import { makeTempDir } from '../support/temp-dir.js';

const write = (path: string, content: string): ActorReply => ({ text: `writing ${path}`, calls: [{ name: 'write', arguments: { path, content } }] });

describe('the library: rein.rewind, session.diff and rein.compare', () => {
  it('rewinds code and conversation at a call, continues the fork another way, and compares the two from the fork point with their exact changes', async () => {
    const workspace = await makeTempDir('rein-compare-');
    try {
      await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
      const store = createMemoryEventStore();
      const options = { store, workspace: workspace.path, memory: false as const, permissions: { approveAll: true } };
      const first = await createRein({ ...options, provider: actorProvider({ root: [write('x.txt', 'x\n'), write('y.txt', 'y\n'), { text: 'Done.' }] }) });
      const parent = await first.startSession({ task: 'write files' });
      expect((await parent.whenQuiet()).status).toBe('completed');
      const parentDiff = await parent.diff();
      expect(parentDiff.steps.map((step) => [step.tool, step.files.map((file) => `${file.kind} ${file.path}`)])).toEqual([
        ['write', ['created x.txt']],
        ['write', ['created y.txt']],
      ]);
      await parent.release();
      const settled = (await store.read(parent.id)).filter((record) => record.type === 'tool.settled')[0]!;
      const rewound = await first.rewind(parent.id, { to: settled.seq });
      expect(rewound.code).toMatchObject({ verified: true });
      expect(existsSync(join(workspace.path, 'y.txt'))).toBe(false);
      expect(await readFile(join(workspace.path, 'x.txt'), 'utf8')).toBe('x\n');
      const forkId = rewound.conversation!.sessionId;
      await first.close();
      // The fork goes on with another answer at its second turn.
      const second = await createRein({ ...options, provider: actorProvider({ root: [write('unused.txt', ''), write('z.txt', 'z\n'), { text: 'Done.' }] }) });
      const { session: fork } = await second.resumeSession(forkId);
      expect((await fork.whenQuiet()).status).toBe('completed');
      await fork.release();
      expect((await fork.diff({ net: true })).net?.map((file) => file.path)).toEqual(['x.txt', 'z.txt']);
      const comparison = await second.compare(parent.id, forkId);
      expect(comparison).toMatchObject({ alignment: 'fork', sameTree: false });
      expect(comparison.a.changes?.map((change) => change.path)).toEqual(['y.txt']);
      expect(comparison.b.changes?.map((change) => change.path)).toEqual(['z.txt']);
      expect(comparison.firstDifference?.b?.text).toContain('z.txt');
      await second.close();
    } finally {
      await workspace.remove();
    }
  });

  it('a refused rewind of an ended session appends nothing, and rewinds (or an older log\'s leftover look outside) neither stretch its time nor add files it never touched', async () => {
    const workspace = await makeTempDir('rein-compare-');
    try {
      await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
      const store = createMemoryEventStore();
      const rein = await createRein({ store, workspace: workspace.path, memory: false, permissions: { approveAll: true }, provider: actorProvider({ root: [write('x.txt', 'x\n'), write('y.txt', 'y\n'), { text: 'Done.' }] }) });
      const session = await rein.startSession({ task: 'write files' });
      expect((await session.whenQuiet()).status).toBe('completed');
      await session.release();
      const ran = await rein.compare(session.id, session.id);
      expect(ran.a.changes?.map((change) => change.path)).toEqual(['x.txt', 'y.txt']);
      const settled = (await store.read(session.id)).filter((record) => record.type === 'tool.settled')[0]!;
      const head = await store.head(session.id);
      // A person edits the file the rewind would remove and adds one: refused, and the log is as it was.
      await writeFile(join(workspace.path, 'y.txt'), 'mine\n');
      await writeFile(join(workspace.path, 'b.txt'), 'person\n');
      const later = () => Date.now() + 250_000;
      await expect(rein.rewind(session.id, { to: settled.seq, code: true, clock: later })).rejects.toMatchObject({ code: 'REWIND_CONFLICT' });
      expect(await store.head(session.id)).toBe(head);
      // An older rein recorded that look at the end of the log, minutes later: still not the session's time or files.
      const [last] = await store.read(session.id, { from: head });
      const { tree } = (await store.read(session.id)).filter((record) => record.type === 'workspace.changed').at(-1)!.data as { tree: string };
      await store.append(session.id, [{ id: 'legacy-look', v: recordVersion('workspace.changed'), type: 'workspace.changed', actor: last!.actor, at: later(), data: { source: 'outside', changes: [{ path: 'b.txt', after: { type: 'file', content: `artifact://blake3/${'0'.repeat(64)}`, size: 7, mode: 0o644 } }], tree } }], { expectedSeq: head });
      const looked = await rein.compare(session.id, session.id);
      expect(looked.a.durationMs).toBe(ran.a.durationMs);
      expect(looked.a.changes?.map((change) => change.path)).toEqual(['x.txt', 'y.txt']);
      // A forced rewind, minutes after the end: recorded, but the session's time and work are what they were.
      const forced = await rein.rewind(session.id, { to: settled.seq, code: true, force: true, clock: later });
      expect(forced.code).toMatchObject({ verified: true });
      const rewound = await rein.compare(session.id, session.id);
      expect(rewound.a.durationMs).toBe(ran.a.durationMs);
      expect(rewound.a.changes?.map((change) => change.path)).toEqual(['x.txt', 'y.txt']);
      await rein.close();
    } finally {
      await workspace.remove();
    }
  });
});
