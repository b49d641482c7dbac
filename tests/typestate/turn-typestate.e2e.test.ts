import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runScriptedSession, verifyRecords } from 'rein/testing';
import type { RecordEnvelope } from '../../models/envelope.js';
import { makeTempDir } from '../support/temp-dir.js';
import { flattenRecords } from '../../src/host/step-record.js';

let workspace: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  workspace = await makeTempDir('rein-typestate-');
  await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
});
afterEach(() => workspace.remove());

const witnesses = (records: readonly RecordEnvelope[]) => flattenRecords(records).filter((record) => record.type.startsWith('turn.')).map((record) => `${(record.data as { turnId: string }).turnId} ${record.type}`);

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
    const blocked = flattenRecords(run.records).find((record) => record.type === 'turn.blocked')!.data as { findings: Array<{ class: string; callId?: string }> };
    expect(blocked.findings).toEqual([expect.objectContaining({ class: 'tool.unknown_or_disallowed', callId: 'root:e1.0' })]);
    const failure = flattenRecords(run.records).find((record) => record.type === 'tool.settled' && (record.data as { callId: string }).callId === 'root:e1.0')!.data as { status: string; observation: string };
    expect(failure).toMatchObject({ status: 'error', observation: expect.stringMatching(/^InvalidInput: unknown tool "fly"/) });
    // The next model call is requested only after the join closed (later in the same step record, or after it).
    const flat = flattenRecords(run.records);
    const secondCall = flat.findIndex((record) => record.type === 'effect.requested' && (record.data as { kind: string }).kind === 'callModel' && (record.data as { args: { turn: number } }).args.turn === 2);
    expect(secondCall).toBeGreaterThan(flat.findIndex((record) => record.type === 'turn.join-closed'));
    // The witness keeps the CallSpec's digest; the CallSpec itself is the reply's.
    const callSpec = flat.find((record) => record.type === 'model.responded')!.data as { callSpec: { toolPolicy: { allow: string[] } } };
    expect(callSpec.callSpec.toolPolicy.allow).toContain('read');
    expect(verifyRecords(run.session.id, run.records).regenerated).toBeGreaterThan(0);
  });

  it('finishing right after a blocked turn completes with the findings on session.ended: the answer is a claim, nothing is MutationReady', async () => {
    const run = await runScriptedSession({ workspace: workspace.path, script: { turns: [{ text: 'Flying.', toolCalls: [{ name: 'fly', arguments: {} }] }, { text: 'Done, trust me.' }] } });
    expect(run.result).toMatchObject({ status: 'completed', reason: expect.stringMatching(/^answered over turn root:e1, which is blocked by tool\.unknown_or_disallowed/) });
    expect(flattenRecords(run.records).some((record) => record.type === 'turn.mutation-ready')).toBe(false);
    const ended = flattenRecords(run.records).find((record) => record.type === 'session.ended')!.data;
    expect(ended).toMatchObject({ status: 'completed', unresolved: { turnId: 'root:e1', findings: [{ class: 'tool.unknown_or_disallowed', callId: 'root:e1.0' }] } });
  });

  it('a schema failure blocks the turn; a stale-looking runtime failure does not', async () => {
    const run = await runScriptedSession({ workspace: workspace.path, script: { turns: [{ text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 7 } }] }, { text: 'Done.' }] } });
    expect(run.result.status).toBe('completed');
    expect(flattenRecords(run.records).find((record) => record.type === 'session.ended')!.data).toMatchObject({ unresolved: { findings: [{ class: 'tool.schema_invalid' }] } });
    expect((flattenRecords(run.records).find((record) => record.type === 'turn.blocked')!.data as { findings: Array<{ class: string }> }).findings.map((finding) => finding.class)).toEqual(['tool.schema_invalid']);
    const missing = await runScriptedSession({ workspace: workspace.path, script: { turns: [{ text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'missing.txt' } }] }, { text: 'Done: the file does not exist.' }] } });
    expect(missing.result.status).toBe('completed');
  });
});
