import { existsSync } from 'node:fs';
import { lstat, readFile, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

/**
 * The time-travel commands as a user runs them: a session changes the workspace through the file tools and through
 * bash (a rename, a mode, a link, a binary, a deep folder, an ignored file), then `rein show`, `rein diff`,
 * `rein rewind` (code, conversation, an outside edit refused and forced, an undo) and `rein compare`.
 */
describe('rein diff, rein rewind and rein compare', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let id: string;
  let records: Array<Record<string, any>>;
  const cli = (args: string[]) => runInProcess(args, { cwd: workspace.path });
  const settledOf = (callIndex: number) => records.filter((record) => record.type === 'tool.settled')[callIndex]!;
  const file = (path: string) => readFile(join(workspace.path, path), 'utf8');

  beforeAll(async () => {
    workspace = await makeTempDir('rein-time-travel-');
    await writeFile(join(workspace.path, 'hello.txt'), 'hello\n');
    await writeFile(join(workspace.path, '.gitignore'), '*.log\n');
    const script = {
      turns: [
        { text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'notes.txt', content: 'one\n' } }] },
        { text: 'Shell.', toolCalls: [{ name: 'bash', arguments: { command: "echo two >> notes.txt; mkdir -p deep/er; printf '\\000\\001' > deep/er/bin.dat; echo noise > debug.log; ln -s notes.txt link; chmod 600 notes.txt; mv hello.txt hi.txt" } }] },
        { text: 'Cleaning.', toolCalls: [{ name: 'bash', arguments: { command: "rm -r deep; echo 'ünï' > 'ünï code.txt'" } }] },
        { text: 'Done.' },
      ],
    };
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
    const run = await cli(['run', 'change things', '--script', 'script.json', '--yes', '--json']);
    expect(run.code, run.stderr).toBe(0);
    records = jsonLines(run.stdout);
    id = records[0]!.stream as string;
  });
  afterAll(() => workspace.remove());

  it('records every call’s changes, bash included, with its settlement; the ignored file and rein’s store are left out', () => {
    const changed = records.filter((record) => record.type === 'workspace.changed');
    expect(changed.map((record) => [record.data.source, record.data.tool])).toEqual([
      ['call', 'write'],
      ['call', 'bash'],
      ['call', 'bash'],
    ]);
    expect(changed[1]!.data.changes.map((change: { path: string }) => change.path)).toEqual(['deep', 'deep/er', 'deep/er/bin.dat', 'hello.txt', 'hi.txt', 'link', 'notes.txt']);
    // Each call's changes are written with its settlement (the same batch, the same corr), before it.
    for (const [index, record] of changed.entries()) {
      const settled = settledOf(index);
      expect([record.corr, record.data.effectId]).toEqual([settled.data.callId, settled.data.effectId]);
      expect(records.filter((other) => other.seq > record.seq && other.seq < settled.seq).every((other) => other.corr === settled.data.callId)).toBe(true);
    }
    const captured = records.find((record) => record.type === 'workspace.captured')!;
    expect(captured.data).toMatchObject({ files: 3, detector: 'inotify', rules: { gitignore: true, maxFileBytes: 10 * 1024 * 1024 } });
    expect(captured.seq).toBeLessThan(changed[0]!.seq);
  });

  it('rein show names the files each call changed, a bash call included', async () => {
    const show = await cli(['show', id]);
    expect(show.stdout).toMatch(/files changed by bash root:e\d+\.0: .*→ hi\.txt \(from hello\.txt\)/);
    expect(show.stdout).toContain('ünï code.txt');
    expect(show.stdout).not.toContain('debug.log');
  });

  it('rein diff lists every step in order, one call, one step, a stat and the net change', async () => {
    const all = JSON.parse((await cli(['diff', id, '--json'])).stdout) as { steps: Array<{ tool?: string; files: Array<{ path: string; kind: string }> }> };
    // A folder created and later deleted appears twice.
    expect(all.steps.flatMap((step) => step.files.filter((change) => change.path === 'deep').map((change) => change.kind))).toEqual(['created', 'deleted']);
    const text = (await cli(['diff', id])).stdout;
    expect(text).toContain('+++ b/notes.txt');
    expect(text).toMatch(/\n\+two\n/);
    expect(text).toMatch(/Binary files differ/);
    const bash = settledOf(1);
    const byCall = JSON.parse((await cli(['diff', id, '--call', bash.data.effectId, '--json'])).stdout) as { steps: unknown[] };
    const byStep = JSON.parse((await cli(['diff', id, '--at', String(bash.seq), '--json'])).stdout) as { steps: unknown[] };
    expect(byStep).toEqual(byCall);
    expect(byCall.steps).toHaveLength(1);
    const stat = (await cli(['diff', id, '--call', bash.data.callId, '--stat'])).stdout;
    expect(stat).toMatch(/notes\.txt\s+\|\s+1 \+/);
    expect(stat).toContain('hello.txt → hi.txt');
    const net = JSON.parse((await cli(['diff', id, '--net', '--json'])).stdout) as { net: Array<{ path: string; kind: string }> };
    expect(net.net.map((change) => `${change.kind} ${change.path}`)).toEqual(['renamed hi.txt', 'created link', 'created notes.txt', 'created ünï code.txt']);
    const both = await cli(['diff', id, '--net', '--at', '3']);
    expect(both.code).toBe(2);
  });

  it('rein rewind --code restores a step (after the call its seq settles), refuses to overwrite an outside edit unless forced, and is undone by rewinding to the record before it', async () => {
    const first = settledOf(0);
    const before = await cli(['rewind', id, '--to', String(first.seq), '--code']);
    expect(before.code, 'no terminal and no --yes: refused').toBe(2);
    expect(await file('hi.txt')).toBe('hello\n');
    // A person edits a file the rewind would restore: refused, nothing changed — the files, and the (ended) log.
    await writeFile(join(workspace.path, 'notes.txt'), 'mine\n');
    const headBefore = jsonLines((await cli(['show', id, '--json'])).stdout).length;
    const refused = await cli(['rewind', id, '--to', String(first.seq), '--code', '--yes']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('REWIND_CONFLICT');
    expect(refused.stderr).toContain('notes.txt');
    expect(await file('notes.txt')).toBe('mine\n');
    // The edit stays protected: it is still on disk.
    expect((await cli(['rewind', id, '--to', String(first.seq), '--code', '--yes'])).stderr).toContain('REWIND_CONFLICT');
    expect(jsonLines((await cli(['show', id, '--json'])).stdout), 'a refused rewind appends nothing').toHaveLength(headBefore);
    const forced = await cli(['rewind', id, '--to', String(first.seq), '--code', '--yes', '--force', '--json']);
    expect(forced.code, forced.stderr).toBe(0);
    const result = jsonLines(forced.stdout).at(-1)!;
    expect(result.code).toMatchObject({ verified: true });
    expect(await file('notes.txt')).toBe('one\n');
    expect(await file('hello.txt')).toBe('hello\n');
    for (const gone of ['hi.txt', 'link', 'deep', 'ünï code.txt']) expect(existsSync(join(workspace.path, gone)), gone).toBe(false);
    // The ignored file is not the session's: it stays.
    expect(await file('debug.log')).toBe('noise\n');
    const log = jsonLines((await cli(['show', id, '--json'])).stdout);
    const outside = log.filter((record) => record.type === 'workspace.changed' && record.data.source === 'outside');
    expect(outside.map((record) => record.data.changes.map((change: { path: string }) => change.path))).toEqual([['notes.txt']]);
    const started = log.find((record) => record.type === 'workspace.rewind-started')!;
    expect(started.data).toMatchObject({ toSeq: first.seq, overwritten: ['notes.txt'] });
    expect((await cli(['replay', id])).code).toBe(0);
    // Undo: back to the record before the rewind started (the edit made outside rein included).
    const undo = await cli(['rewind', id, '--to', String(started.seq - 1), '--code', '--yes', '--json']);
    expect(undo.code, undo.stderr).toBe(0);
    expect(await file('notes.txt')).toBe('mine\n');
    expect(await readlink(join(workspace.path, 'link'))).toBe('notes.txt');
    expect((await lstat(join(workspace.path, 'notes.txt'))).mode & 0o777).toBe(0o600);
    expect(await file('ünï code.txt')).toBe('ünï\n');
    expect(existsSync(join(workspace.path, 'hello.txt'))).toBe(false);
    // Rewound to where it already is: nothing to do.
    const again = await cli(['rewind', id, '--to', String(started.seq - 1), '--code', '--yes']);
    expect(again.stdout).toContain('already is as it was');
  });

  it('rein rewind --conversation forks without a model call; the fork resumes from there, recording what differs on disk as outside rein; rein compare aligns them', async () => {
    const first = settledOf(0);
    const fork = await cli(['rewind', id, '--to', String(first.seq), '--conversation', '--json']);
    expect(fork.code, fork.stderr).toBe(0);
    const result = jsonLines(fork.stdout).at(-1)!;
    expect(result.code).toBeUndefined();
    expect(result.conversation.command).toBe(`rein resume ${result.conversation.sessionId}`);
    const forkId = result.conversation.sessionId as string;
    const forkLog = jsonLines((await cli(['show', forkId, '--json'])).stdout);
    expect(forkLog.filter((record) => record.type === 'model.requested' || record.type === 'model.responded').length).toBeLessThan(records.filter((record) => record.type === 'model.responded').length);
    const resumed = await cli(['resume', forkId, '--script', 'script.json', '--yes', '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const after = jsonLines(resumed.stdout);
    const outside = after.find((record) => record.type === 'workspace.changed' && record.data.source === 'outside');
    // The disk holds the parent's later tree; the fork's log stops at its first call: the difference is nobody's call.
    expect(outside?.data.changes.map((change: { path: string }) => change.path)).toContain('notes.txt');
    const compared = JSON.parse((await cli(['compare', id, forkId, '--json'])).stdout) as Record<string, any>;
    expect(compared).toMatchObject({ alignment: 'fork', forkSeq: result.conversation.atSeq });
    expect(compared.a.changes.length).toBeGreaterThan(0);
    const text = (await cli(['compare', id, forkId])).stdout;
    expect(text).toContain(`aligned at the fork point #${result.conversation.atSeq}`);
    expect(text).toMatch(/files changed: /);
  });
});
