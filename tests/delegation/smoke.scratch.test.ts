import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runScriptedSession, verifyRecords } from 'rein/testing';
import { makeTempDir } from '../support/temp-dir.js';

const finding = { status: 'completed', summary: 'found it', checked_paths: ['a.txt'], findings: [{ claim: 'a is alpha', evidence: [{ file: 'a.txt', line: 1 }], confidence: 'high' }], recommendation: 'none' };

describe('smoke', () => {
  it('delegates', async () => {
    const dir = await makeTempDir();
    await writeFile(join(dir.path, 'a.txt'), 'alpha\n');
    const script = {
      turns: [
        { text: 'delegating', toolCalls: [{ name: 'delegate_task', arguments: { tasks: [{ id: 'look', role: 'explorer', objective: 'read a.txt' }] } }] },
        { text: 'Done.' },
      ],
      agents: {
        explorer: { turns: [{ text: 'reading', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] }, { text: 'reporting', toolCalls: [{ name: 'submit_report', arguments: finding }] }] },
      },
    };
    const run = await runScriptedSession({ script, workspace: dir.path });
    for (const record of run.records) console.log(record.seq, record.type, record.actor, record.corr ?? '', record.type === 'session.ended' || record.type === 'tool.settled' || record.type.startsWith('delegation.j') || record.type === 'delegation.failed' ? JSON.stringify(record.data).slice(0, 400) : '');
    console.log(run.result);
    const replay = verifyRecords(run.session.id, run.records);
    expect(replay.tree?.persisted()).toEqual(run.session.persistedSnapshot());
    await dir.remove();
  });
});
describe('smoke2', () => {
  it('child context', async () => {
    const dir = await makeTempDir();
    await writeFile(join(dir.path, 'a.txt'), 'alpha\n');
    const script = {
      turns: [
        { text: 'reading first', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] },
        { text: 'delegating', toolCalls: [{ name: 'delegate_task', arguments: { tasks: [{ id: 'look', role: 'explorer', objective: 'read a.txt' }, { id: 'test', role: 'tester', objective: 'run tests', context_mode: 'clean' }] } }] },
        { text: 'Done.' },
      ],
      agents: {
        explorer: { turns: [{ text: 'reporting', toolCalls: [{ name: 'submit_report', arguments: finding }] }] },
      },
    };
    const run = await runScriptedSession({ script, workspace: dir.path, task: 'Find out about a.txt. Never delete anything.' });
    for (const record of run.records.slice(0, 40)) console.log(record.seq, record.type, record.actor, record.corr ?? '', record.type.startsWith('delegation') || record.type === 'tool.settled' ? JSON.stringify(record.data).slice(0, 600) : '');
    const projected = run.records.filter((record) => record.type === 'context.projected' && record.actor.includes('look'));
    const blob = await run.store.readBlob(run.session.id, (projected[0]!.data as { input: string }).input);
    console.log(JSON.parse(Buffer.from(blob).toString()).messages.map((m: { role: string; content: string }) => `${m.role}: ${m.content}`).join('\n---\n'));
    const last = run.records.filter((record) => record.type === 'context.projected' && record.actor === 'root').pop()!;
    const rootBlob = await run.store.readBlob(run.session.id, (last.data as { input: string }).input);
    console.log(JSON.parse(Buffer.from(rootBlob).toString()).messages.map((m: { role: string; content: string }) => `${m.role}: ${m.content}`).join('\n---\n'));
    console.log(run.result);
    await dir.remove();
  });
});
