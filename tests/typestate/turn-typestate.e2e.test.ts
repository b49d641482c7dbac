import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runScriptedSession, verifyRecords } from 'rein/testing';
import type { RecordEnvelope } from '../../models/envelope.js';
import { makeTempDir } from '../support/temp-dir.js';

let workspace: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  workspace = await makeTempDir('rein-typestate-');
  await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
});
afterEach(() => workspace.remove());

const witnesses = (records: readonly RecordEnvelope[]) => records.filter((record) => record.type.startsWith('turn.')).map((record) => `${(record.data as { turnId: string }).turnId} ${record.type}`);

describe('the turn typestate in a scripted session', () => {
  it('an unknown tool blocks its turn and shows the model a failure; a following correct turn reaches MutationReady and the session completes', async () => {
    const run = await runScriptedSession({
      workspace: workspace.path,
      script: { turns: [{ text: 'Flying.', toolCalls: [{ name: 'fly', arguments: { to: 'moon' } }] }, { text: 'Reading instead.', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] }, { text: 'Done.' }] },
    });
    expect(run.result.status).toBe('completed');
    expect(witnesses(run.records)).toEqual([
      'root:e1 turn.call-spec', 'root:e1 turn.requests', 'root:e1 turn.results', 'root:e1 turn.uses', 'root:e1 turn.join-closed', 'root:e1 turn.blocked',
      'root:e3 turn.call-spec', 'root:e3 turn.requests', 'root:e3 turn.results', 'root:e3 turn.uses', 'root:e3 turn.join-closed', 'root:e3 turn.mutation-ready',
    ]);
    const blocked = run.records.find((record) => record.type === 'turn.blocked')!.data as { findings: Array<{ class: string; callId?: string }> };
    expect(blocked.findings).toEqual([expect.objectContaining({ class: 'tool.unknown_or_disallowed', callId: 'root:e1.0' })]);
    const failure = run.records.find((record) => record.type === 'tool.settled' && (record.data as { callId: string }).callId === 'root:e1.0')!.data as { status: string; observation: string };
    expect(failure).toMatchObject({ status: 'error', observation: expect.stringMatching(/^InvalidInput: unknown tool "fly"/) });
    const secondCall = run.records.filter((record) => record.type === 'effect.requested' && (record.data as { kind: string }).kind === 'callModel')[1]!;
    expect(secondCall.seq).toBeGreaterThan(run.records.find((record) => record.type === 'turn.join-closed')!.seq);
    const callSpec = run.records.find((record) => record.type === 'turn.call-spec')!.data as { callSpec: { toolPolicy: { allow: string[] } } };
    expect(callSpec.callSpec.toolPolicy.allow).toContain('read');
    expect(verifyRecords(run.session.id, run.records).regenerated).toBeGreaterThan(0);
  });

  it('finishing right after a blocked turn completes with the findings on session.ended: the answer is a claim, nothing is MutationReady', async () => {
    const run = await runScriptedSession({ workspace: workspace.path, script: { turns: [{ text: 'Flying.', toolCalls: [{ name: 'fly', arguments: {} }] }, { text: 'Done, trust me.' }] } });
    expect(run.result).toMatchObject({ status: 'completed', reason: expect.stringMatching(/^answered over turn root:e1, which is blocked by tool\.unknown_or_disallowed/) });
    expect(run.records.some((record) => record.type === 'turn.mutation-ready')).toBe(false);
    const ended = run.records.find((record) => record.type === 'session.ended')!.data;
    expect(ended).toMatchObject({ status: 'completed', unresolved: { turnId: 'root:e1', findings: [{ class: 'tool.unknown_or_disallowed', callId: 'root:e1.0' }] } });
  });

  it('a schema failure blocks the turn; a stale-looking runtime failure does not', async () => {
    const run = await runScriptedSession({ workspace: workspace.path, script: { turns: [{ text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 7 } }] }, { text: 'Done.' }] } });
    expect(run.result.status).toBe('completed');
    expect(run.records.find((record) => record.type === 'session.ended')!.data).toMatchObject({ unresolved: { findings: [{ class: 'tool.schema_invalid' }] } });
    expect((run.records.find((record) => record.type === 'turn.blocked')!.data as { findings: Array<{ class: string }> }).findings.map((finding) => finding.class)).toEqual(['tool.schema_invalid']);
    const missing = await runScriptedSession({ workspace: workspace.path, script: { turns: [{ text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'missing.txt' } }] }, { text: 'Done: the file does not exist.' }] } });
    expect(missing.result.status).toBe('completed');
  });
});
