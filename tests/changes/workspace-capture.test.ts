import { chmod, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FactDraft } from '../../models/envelope.js';
import type { WorkspaceCaptured, WorkspaceChanged } from '../../models/workspace.records.js';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import type { ArtifactRef } from '../../stores/blob-store.js';
import { CaptureFilter } from '../../src/changes/capture-rules.js';
import { fileChangesOf } from '../../src/changes/file-change.js';
import { scanWorkspace } from '../../src/changes/scan-workspace.js';
import { treeOfManifest } from '../../src/changes/tree-manifest.js';
import { WorkspaceCapture, type KnownTree } from '../../src/changes/workspace-capture.js';
import { makeTempDir } from '../support/temp-dir.js';

const call = { effectId: 'root:e1', callId: 'root:e1.0', tool: 'bash' };

describe.each(['auto', 'scan'] as const)('the workspace capture (%s)', (detector) => {
  let workspace: { path: string; remove: () => Promise<void> };
  let capture: WorkspaceCapture;
  const store = createMemoryEventStore();
  const open = (options: { known?: KnownTree; maxFileMb?: number; never?: string[] } = {}) =>
    new WorkspaceCapture({ root: workspace.path, filter: new CaptureFilter(workspace.path, options.maxFileMb === undefined ? {} : { maxFileMb: options.maxFileMb }, options.never ?? []), blobs: store.blobs, known: async () => options.known, detector, scanBelow: 0 });
  /** One window around `work`: the facts recorded before it and with it. */
  const windowAround = async (work: () => Promise<void>, target = capture) => {
    const before: FactDraft[] = [];
    const result = await target.window(call, work, async (facts) => void before.push(...facts));
    return { before, during: result.facts, blobs: result.blobs };
  };
  const changedOf = (facts: FactDraft[]) => facts.map((fact) => fact.data as WorkspaceChanged);

  beforeEach(async () => {
    workspace = await makeTempDir('rein-capture-');
    await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
    await mkdir(join(workspace.path, 'src'));
    await writeFile(join(workspace.path, 'src', 'b.txt'), 'beta\n');
    capture = open();
  });
  afterEach(async () => {
    capture.close();
    await workspace.remove();
  });

  it('records the baseline before the first call, then exactly what the call changed, by every path', async () => {
    const first = await windowAround(async () => {
      execFileSync('sh', ['-c', 'echo hi > c.txt; rm src/b.txt; mkdir -p deep/er/est; printf "\\0\\1\\2" > deep/er/est/bin; : > empty; ln -s a.txt link; chmod 600 a.txt; mv c.txt "ünï code.txt"'], { cwd: workspace.path });
    });
    expect(first.before.map((fact) => fact.type)).toEqual(['workspace.captured']);
    const captured = first.before[0]!.data as WorkspaceCaptured;
    expect(captured).toMatchObject({ files: 2, dirs: 1, symlinks: 0, detector: detector === 'scan' ? 'scan' : 'inotify' });
    const [changed] = changedOf(first.during);
    expect(changed).toMatchObject({ source: 'call', effectId: 'root:e1', tool: 'bash' });
    const changes = fileChangesOf(changed!.changes).map((change) => `${change.kind} ${change.path}`);
    expect(changes).toEqual(['mode a.txt', 'created deep', 'created deep/er', 'created deep/er/est', 'created deep/er/est/bin', 'created empty', 'created link', 'deleted src/b.txt', 'created ünï code.txt']);
    expect(changed!.tree).toBe(capture.digest);
    // The tree the capture keeps is the one a fresh scan of the disk finds.
    expect((await scanWorkspace(workspace.path, new CaptureFilter(workspace.path))).tree.digest()).toBe(capture.digest);
    // New contents travel with the record: the binary, the empty file, the renamed file's bytes (once each).
    expect(first.blobs.map((bytes) => Buffer.from(bytes).toString('hex')).sort()).toEqual(['', '000102', Buffer.from('hi\n').toString('hex')].sort());
  });

  it('sees a file rewritten with the same size right after it was read, call after call (racy timestamps)', async () => {
    await windowAround(async () => undefined);
    for (let round = 0; round < 20; round++) {
      const next = await windowAround(() => writeFile(join(workspace.path, 'a.txt'), `round ${String(round).padStart(2, '0')}\n`));
      expect(changedOf(next.during).map((change) => change.changes.map((entry) => entry.path)), `round ${round}`).toEqual([['a.txt']]);
    }
  });

  it('scans a small tree instead of waiting for inotify, and finds the same changes', async () => {
    capture = new WorkspaceCapture({ root: workspace.path, filter: new CaptureFilter(workspace.path), blobs: store.blobs, known: async () => undefined, detector });
    await windowAround(async () => undefined);
    const next = await windowAround(() => writeFile(join(workspace.path, 'src', 'b.txt'), 'changed\n'));
    expect(changedOf(next.during).map((change) => change.changes.map((entry) => entry.path))).toEqual([['src/b.txt']]);
  });

  it('pairs a rename and finds nothing when nothing changed', async () => {
    await windowAround(async () => undefined);
    const moved = await windowAround(() => rename(join(workspace.path, 'a.txt'), join(workspace.path, 'src', 'moved.txt')));
    expect(changedOf(moved.during)[0]!.changes).toMatchObject([{ path: 'a.txt', to: 'src/moved.txt' }, { path: 'src/moved.txt', from: 'a.txt' }]);
    const idle = await windowAround(async () => undefined);
    expect([...idle.before, ...idle.during]).toEqual([]);
  });

  it('attributes changes made between calls to no call', async () => {
    await windowAround(async () => undefined);
    await writeFile(join(workspace.path, 'a.txt'), 'changed between\n');
    const next = await windowAround(() => writeFile(join(workspace.path, 'src', 'b.txt'), 'by the call\n'));
    expect(changedOf(next.before).map((change) => [change.source, change.changes.map((entry) => entry.path)])).toEqual([['between', ['a.txt']]]);
    expect(changedOf(next.during).map((change) => [change.source, change.changes.map((entry) => entry.path)])).toEqual([['call', ['src/b.txt']]]);
    await writeFile(join(workspace.path, 'late.txt'), 'after the last call\n');
    const flushed = await capture.flush();
    expect(changedOf(flushed.facts).map((change) => [change.source, change.changes.map((entry) => entry.path)])).toEqual([['between', ['late.txt']]]);
  });

  it("leaves out what .gitignore ignores, git's folder and rein's own paths, and records a file above the cap by digest only", async () => {
    await writeFile(join(workspace.path, '.gitignore'), 'build/\n*.log\n');
    await mkdir(join(workspace.path, '.git'));
    await writeFile(join(workspace.path, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    await mkdir(join(workspace.path, '.rein'));
    capture = open({ never: [join(workspace.path, '.rein')], maxFileMb: 0.001 });
    const result = await windowAround(async () => {
      await mkdir(join(workspace.path, 'build'));
      await writeFile(join(workspace.path, 'build', 'out.js'), 'x');
      await writeFile(join(workspace.path, 'debug.log'), 'x');
      await writeFile(join(workspace.path, '.rein', 'store'), 'x');
      await writeFile(join(workspace.path, 'big.bin'), Buffer.alloc(4096, 7));
    });
    const manifest = treeOfManifest(await store.blobs.get((result.before[0]!.data as WorkspaceCaptured).manifest as ArtifactRef));
    expect(manifest.list().map(([path]) => path)).toEqual(['.gitignore', 'a.txt', 'src', 'src/b.txt']);
    const changes = changedOf(result.during)[0]!.changes;
    expect(changes.map((change) => change.path)).toEqual(['big.bin']);
    expect(changes[0]!.after).toMatchObject({ type: 'file', size: 4096, unrestorable: true });
    expect(result.blobs).toEqual([]);
  });

  it('on a session that captured before, records what changed since as made outside rein', async () => {
    const known = (await scanWorkspace(workspace.path, new CaptureFilter(workspace.path))).tree;
    await writeFile(join(workspace.path, 'a.txt'), 'edited while rein was not running\n');
    await rm(join(workspace.path, 'src', 'b.txt'));
    capture = open({ known: { tree: known, inDoubt: ['root:e7'], never: [] } });
    const result = await windowAround(async () => undefined);
    expect(changedOf(result.before).map((change) => [change.source, change.inDoubt, change.changes.map((entry) => entry.path)])).toEqual([['outside', ['root:e7'], ['a.txt', 'src/b.txt']]]);
  });

  it('sees a folder made, filled and removed inside one call, and a mode change on a folder', async () => {
    await windowAround(async () => undefined);
    const made = await windowAround(async () => {
      await mkdir(join(workspace.path, 'x', 'y'), { recursive: true });
      await writeFile(join(workspace.path, 'x', 'y', 'z'), 'z');
      await chmod(join(workspace.path, 'src'), 0o700);
      await symlink('missing-target', join(workspace.path, 'x', 'dangling'));
    });
    expect(fileChangesOf(changedOf(made.during)[0]!.changes).map((change) => `${change.kind} ${change.path}`)).toEqual(['mode src', 'created x', 'created x/dangling', 'created x/y', 'created x/y/z']);
    const removed = await windowAround(() => rm(join(workspace.path, 'x'), { recursive: true }));
    expect(changedOf(removed.during)[0]!.changes.map((change) => change.path)).toEqual(['x', 'x/dangling', 'x/y', 'x/y/z']);
    expect((await scanWorkspace(workspace.path, new CaptureFilter(workspace.path))).tree.digest()).toBe(capture.digest);
  });
});
