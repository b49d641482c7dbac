import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRein, createScriptedProvider, openLevelEventStore, parseScript, verifyRecords } from '../../src/index.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import { makeTempDir } from '../support/temp-dir.js';
import { flattenRecords } from '../../src/host/step-record.js';

const script = {
  turns: [
    { text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] },
    { text: 'Editing.', toolCalls: [{ name: 'edit', arguments: { path: 'a.txt', old_string: 'alpha', new_string: 'ALPHA' } }] },
    { text: 'Testing.', toolCalls: [{ name: 'bash', arguments: { command: 'cat a.txt' } }, { name: 'bash', arguments: { command: 'wc -c a.txt > size.txt' } }] },
    { text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'b.txt', content: 'bee\n' } }] },
    { text: 'Again.', toolCalls: [{ name: 'bash', arguments: { command: 'wc -c a.txt > size.txt' } }, { name: 'edit', arguments: { path: 'a.txt', old_string: 'ALPHA', new_string: 'Alpha' } }] },
    { text: 'Done.' },
  ],
};

const open = async (workspace: string) => {
  const store = await openLevelEventStore(join(workspace, '.rein'));
  const rein = await createRein({ store, workspace, provider: createScriptedProvider(parseScript(script)), sandbox: { loginShell: false } });
  return { store, rein };
};

const types = (records: readonly RecordEnvelope[], type: string) => flattenRecords(records).filter((record) => record.type === type);

describe('approvals across a restart', () => {
  let dir: { path: string; remove: () => Promise<void> };
  beforeEach(async () => {
    dir = await makeTempDir('rein-approval-');
    await writeFile(join(dir.path, 'a.txt'), 'alpha\n');
  });
  afterEach(() => dir.remove());

  it('keeps the pending question, the read baseline and session grants through restarts', async () => {
    // First process: the edit asks; nobody answers; the process goes away.
    let { store, rein } = await open(dir.path);
    const session = await rein.startSession({ task: 'fix it' });
    const first = await session.whenQuiet();
    expect(first.status).toBe('paused');
    const [question] = session.pendingApprovals();
    expect(question).toMatchObject({ tool: 'edit', target: 'a.txt', suggestedRule: 'edit', approvalId: expect.stringMatching(/^root\/approval-\d+$/) });
    expect(session.snapshot().value).toEqual({ running: 'awaitingApproval' });
    await store.close();

    // Second process: the question is still there and nothing is in doubt; allow it for the session.
    ({ store, rein } = await open(dir.path));
    const resumed = await rein.resumeSession(session.id);
    expect(resumed.report.resolutions).toEqual([]);
    expect(resumed.session.pendingApprovals()).toEqual([question]);
    await resumed.session.approve(question!.approvalId, { decision: 'allow-session' });
    let result = await resumed.session.whenQuiet();
    // The edit ran against the baseline the first process read (rebuilt from file.read).
    expect(await readFile(join(dir.path, 'a.txt'), 'utf8')).toBe('ALPHA\n');
    // `cat` is read-only and runs; `wc … > size.txt` writes and asks.
    expect(result.status).toBe('paused');
    const [redirect] = resumed.session.pendingApprovals();
    expect(redirect).toMatchObject({ tool: 'bash', target: 'wc -c a.txt > size.txt', suggestedRule: 'bash:wc -c a.txt > size.txt' });
    await resumed.session.approve(redirect!.approvalId, { decision: 'allow-session' });
    result = await resumed.session.whenQuiet();
    await store.close();

    // The write asks; the process goes away again.
    expect(result.status).toBe('paused');
    const [write] = resumed.session.pendingApprovals();
    expect(write).toMatchObject({ tool: 'write', target: 'b.txt' });
    await store.close();

    // Third process: allow the write once; then the same command and another edit run on the grants rebuilt from
    // the log, and the edit's baseline is the content the second process wrote.
    ({ store, rein } = await open(dir.path));
    const third = await rein.resumeSession(session.id);
    await third.session.approve(write!.approvalId, { decision: 'allow-once' });
    result = await third.session.whenQuiet();
    expect(result.status).toBe('completed');
    expect(await readFile(join(dir.path, 'a.txt'), 'utf8')).toBe('Alpha\n');
    expect(await readFile(join(dir.path, 'size.txt'), 'utf8')).toBe('6 a.txt\n');
    const all = await store.read(session.id);
    expect(types(all, 'approval.requested')).toHaveLength(3);
    const granted = types(all, 'permission.decided').filter((record) => (record.data as { source: string }).source === 'session').map((record) => record.data);
    expect(granted).toEqual([
      expect.objectContaining({ tool: 'bash', decision: 'allow', rule: 'allow bash:wc -c a.txt > size.txt' }),
      expect.objectContaining({ tool: 'edit', decision: 'allow', rule: 'allow edit' }),
    ]);
    expect(verifyRecords(session.id, all).regenerated).toBeGreaterThan(0);
    await store.close();
  });

  it('a denial with feedback reaches the model as a Denied observation and nothing runs', async () => {
    const { store, rein } = await open(dir.path);
    const session = await rein.startSession({ task: 'fix it' });
    await session.whenQuiet();
    const [question] = session.pendingApprovals();
    await session.approve(question!.approvalId, { decision: 'deny', feedback: 'do not touch a.txt' });
    await expect(session.approve(question!.approvalId, { decision: 'allow-once' })).rejects.toMatchObject({ code: 'APPROVAL_NOT_FOUND' });
    await expect(session.approve('root/approval-999', { decision: 'allow-once' })).rejects.toMatchObject({ code: 'APPROVAL_NOT_FOUND' });
    await expect(session.approve(question!.approvalId, { decision: 'maybe' as never })).rejects.toMatchObject({ code: 'INPUT_INVALID' });
    await session.whenQuiet();
    const records = await store.read(session.id);
    const denied = types(records, 'tool.settled').find((record) => (record.data as { name: string }).name === 'edit')!;
    expect(denied.data).toMatchObject({ status: 'error', errorCode: 'Denied' });
    expect((denied.data as { observation: string }).observation).toContain('do not touch a.txt');
    expect(await readFile(join(dir.path, 'a.txt'), 'utf8')).toBe('alpha\n');
    expect(types(records, 'approval.replied')).toHaveLength(1);
    await session.cancel();
    await store.close();
  });

  it('streams new requests on approvals$ for a host to answer', async () => {
    const { store, rein } = await open(dir.path);
    const session = await rein.createSession({ task: 'fix it' });
    const seen: string[] = [];
    session.approvals$.subscribe((request) => {
      seen.push(request.tool);
      void session.approve(request.approvalId, { decision: 'allow-once' });
    });
    await session.send('fix it');
    let result = await session.whenQuiet();
    while (result.status === 'paused' && session.pendingApprovals().length > 0) result = await session.whenQuiet();
    expect(result.status).toBe('completed');
    expect(seen).toEqual(['edit', 'bash', 'write', 'bash', 'edit']);
    await store.close();
  });
});
