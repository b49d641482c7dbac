import { readdir, realpath, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLevelEventStore } from '../../stores/index.js';
import { jsonLines, startCli } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { seedPassingTests } from '../support/memory-fixtures.js';
import { makeTempDir } from '../support/temp-dir.js';

const verify = { turns: [{ text: 'Testing.', toolCalls: [{ name: 'bash', arguments: { command: 'node --test' } }] }, { text: 'Done.' }] };
const propose = (content: string) => ({ turns: [{ text: 'Noting.', toolCalls: [{ name: 'memory_write', arguments: { content, kind: 'project_fact', topic: 'docs' } }] }, { text: 'Done.' }] });

let workspace: { path: string; remove: () => Promise<void> };
let root: string;
beforeEach(async () => {
  workspace = await makeTempDir('rein-memory-cli-');
  root = await realpath(workspace.path);
  await seedPassingTests(root);
  await writeFile(join(root, 'verify.json'), JSON.stringify(verify));
  await writeFile(join(root, 'docs.json'), JSON.stringify(propose('The API docs live in docs/api')));
  await writeFile(join(root, 'other-docs.json'), JSON.stringify(propose('The API docs live in site/reference')));
});
afterEach(() => workspace.remove());

// In-process (the commands' output, exit codes and records are what is tested); the session that runs beside them is a
// real process (startCli), since running alongside another process is.
const cli = (args: string[]) => runInProcess(args, { cwd: root });
const json = async (args: string[]) => {
  const result = await cli([...args, '--json']);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return jsonLines(result.stdout);
};

describe('rein memory', () => {
  it('review, approve, list, show, reject, revoke and health — each with --json — across real sessions', async () => {
    expect(await json(['memory', 'list'])).toEqual([]);
    expect((await cli(['run', 'check', '--script', 'verify.json', '--yes'])).code).toBe(0);
    expect((await cli(['run', 'note', '--script', 'docs.json'])).code).toBe(0);
    expect((await cli(['run', 'note', '--script', 'other-docs.json'])).code).toBe(0);

    const queue = await json(['memory', 'review']);
    expect(queue.map((candidate) => [candidate.status, candidate.source.type])).toEqual([['pending', 'verified_observation'], ['needs_review', 'agent_reflection'], ['needs_review', 'agent_reflection']]);
    const [observation, docs, otherDocs] = queue;
    expect((await cli(['memory', 'review'])).stdout).toContain(`approve: rein memory approve ${docs!.candidateId}`);

    // An empty (or blank) statement is a usage error, never "promote the model's wider sentence instead" (D10).
    for (const content of ['', '   ']) {
      const empty = await cli(['memory', 'approve', docs!.candidateId, '--content', content]);
      expect([empty.code, empty.stderr]).toEqual([2, expect.stringContaining('USAGE')]);
    }
    expect(await json(['memory', 'list'])).toEqual([]);
    const [approved] = await json(['memory', 'approve', docs!.candidateId]);
    expect(approved).toMatchObject({ candidateId: docs!.candidateId, record: { content: 'The API docs live in docs/api', scope: { level: 'repo', key: root }, confidence: 'medium', authority: 'default', version: 1 }, decision: { outcome: 'approved', gate: { status: 'mutation-ready' } } });
    const again = await cli(['memory', 'approve', docs!.candidateId]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('MEMORY_CANDIDATE_CLOSED');

    const [superseding] = await json(['memory', 'approve', otherDocs!.candidateId, '--content', 'The API reference lives in site/reference']);
    expect(superseding).toMatchObject({ record: { version: 2, supersedes: [approved!.recordId], content: 'The API reference lives in site/reference' } });
    expect((await json(['memory', 'list'])).map((record) => record.recordId)).toEqual([superseding!.recordId]);
    expect((await json(['memory', 'list', '--all'])).map((record) => [record.recordId, record.status])).toEqual([[superseding!.recordId, 'active'], [approved!.recordId, 'deprecated']]);

    const [shown] = await json(['memory', 'show', superseding!.recordId]);
    expect(shown!.record).toMatchObject({ recordId: superseding!.recordId, status: 'active' });
    expect(shown!.trail.map((entry: { type: string }) => entry.type)).toEqual(['memory.submitted', 'memory.reviewed', 'memory.reviewed', 'memory.promoted']);
    expect((await cli(['memory', 'show', superseding!.recordId])).stdout).toContain('audit trail:');

    const [rejected] = await json(['memory', 'reject', observation!.candidateId, '--reason', 'one run proves little']);
    expect(rejected).toEqual({ candidateId: observation!.candidateId, status: 'rejected', reason: 'one run proves little' });
    expect((await cli(['memory', 'reject', observation!.candidateId])).code).toBe(2);
    expect(await json(['memory', 'review'])).toEqual([]);

    const [revoked] = await json(['memory', 'revoke', superseding!.recordId, '--reason', 'forget that']);
    expect(revoked).toMatchObject({ recordId: superseding!.recordId, status: 'revoked' });
    const twice = await cli(['memory', 'revoke', superseding!.recordId, '--reason', 'again']);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('MEMORY_RECORD_CLOSED');
    expect(await json(['memory', 'list'])).toEqual([]);
    const [gone] = await json(['memory', 'show', superseding!.recordId]);
    expect(gone!.record).toMatchObject({ status: 'revoked', statusReason: 'user: forget that' });

    const unknown = await cli(['memory', 'approve', 'no-such-candidate']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('MEMORY_NOT_FOUND');
    expect(await json(['memory', 'health'])).toEqual([]);
    expect((await cli(['memory', 'health'])).stdout).toContain('healthy');
    expect((await json(['sessions'])).map((session) => session.id)).not.toContain('memory');
  });

  it('approve, reject and revoke work while another process runs a session, and that session governs its own candidates when it ends', async () => {
    await cli(['run', 'note', '--script', 'docs.json']);
    await cli(['run', 'note', '--script', 'other-docs.json']);
    const [first, second] = await json(['memory', 'review']);
    const script = {
      turns: [
        { text: 'Noting, then waiting.', toolCalls: [{ name: 'memory_write', arguments: { content: 'Builds write to dist/', kind: 'project_fact' } }] },
        { text: 'Waiting.', toolCalls: [{ name: 'bash', arguments: { command: 'sleep 3' } }] },
        { text: 'Done.' },
      ],
    };
    await writeFile(join(root, 'slow.json'), JSON.stringify(script));
    const running = startCli(['run', 'slow', '--script', 'slow.json', '--yes'], { cwd: root, env: {} });
    let output = '';
    const exited = new Promise<number | null>((resolve) => running.on('close', resolve));
    await new Promise<void>((resolve, reject) => {
      running.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('memory_write')) resolve();
      });
      running.on('close', () => reject(new Error(`the session ended early: ${output}`)));
    });
    const [approved] = await json(['memory', 'approve', first!.candidateId]);
    await json(['memory', 'reject', second!.candidateId, '--reason', 'duplicate']);
    await json(['memory', 'revoke', approved!.recordId, '--reason', 'changed my mind']);
    expect(await exited).toBe(0);
    const queue = await json(['memory', 'review']);
    expect(queue).toHaveLength(1);
    expect(queue[0]).toMatchObject({ content: 'Builds write to dist/', status: 'needs_review' });
    const [late] = await json(['memory', 'approve', queue[0]!.candidateId]);
    expect(late!.record).toMatchObject({ content: 'Builds write to dist/' });
    expect((await json(['memory', 'list'])).map((record) => record.recordId)).toEqual([late!.recordId]);
  });

  it('health flags expired, review-due, too broad, sourceless and conflicting records', async () => {
    expect((await cli(['run', 'note', '--script', 'docs.json'])).code).toBe(0);
    const [candidate] = await json(['memory', 'review']);
    const [approved] = await json(['memory', 'approve', candidate!.candidateId, '--scope', 'user']);
    // Records from elsewhere (an older release, a hand-edited store) are what health checks are for: write them raw.
    const store = await openLevelEventStore(join(root, '.rein'));
    const record = (recordId: string, extra: Record<string, unknown>) => ({ id: recordId, type: 'memory.promoted', v: 1, at: 1, actor: 'import', data: { recordId, candidateId: `c-${recordId}`, content: `fact ${recordId}`, kind: 'project_fact', scope: { level: 'repo', key: root }, confidence: 'medium', authority: 'hint', sourceRefs: [`${candidate!.sessionId}#x`], version: 1, approvedAt: 1, ...extra } });
    await store.append('memory', [
      record('m-expired', { expiresAt: 1_000 }),
      record('m-due', { reviewAfter: 1_000 }),
      record('m-orphan', { sourceRefs: ['s-gone#x'] }),
      record('m-left', { conflictKeys: [`repo:${root}:docs`], content: 'docs in docs/' }),
      record('m-right', { conflictKeys: [`repo:${root}:docs`], content: 'docs in site/' }),
    ], { expectedSeq: await store.head('memory') });
    await store.close();
    const findings = await json(['memory', 'health']);
    expect(findings.map((finding) => [finding.check, finding.recordIds])).toEqual([
      ['expired', ['m-expired']],
      ['due_for_review', ['m-due']],
      ['too_broad', [approved!.recordId]],
      ['no_sources', ['m-orphan']],
      ['conflicting_actives', ['m-left', 'm-right']],
    ]);
    await rm(join(root, '.rein', 'streams', candidate!.sessionId), { recursive: true });
    const orphaned = await json(['memory', 'health']);
    expect(orphaned.filter((finding) => finding.check === 'no_sources').flatMap((finding) => finding.recordIds).sort()).toEqual([approved!.recordId, 'm-due', 'm-expired', 'm-left', 'm-orphan', 'm-right'].sort());
  });

  it('a damaged memory stream: sessions answer without memory (said once, in the log and on screen), memory list names the damage, --no-memory skips it', async () => {
    expect((await cli(['run', 'note', '--script', 'docs.json'])).code).toBe(0);
    const memoryDirectory = join(root, '.rein', 'streams', 'memory');
    const manifest = (await readdir(memoryDirectory)).find((name) => name.startsWith('MANIFEST-'))!;
    await truncate(join(memoryDirectory, manifest), 5);
    // Two model calls (a memory_read between them): the damage is found at the first, recorded and shown once.
    await writeFile(join(root, 'ask.json'), JSON.stringify({ turns: [{ text: 'Looking.', toolCalls: [{ name: 'memory_read', arguments: {} }] }, { text: 'Done.' }] }));
    const run = await cli(['run', 'ask', '--script', 'ask.json']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.match(/memory unavailable: STORE_CORRUPT_RECORD/g)).toHaveLength(1);
    expect(run.stdout).toContain('completed');
    const id = String((await json(['sessions', '--status', 'completed'])).at(-1)?.id);
    const records = await json(['show', id]);
    const unavailable = records.filter((record) => record.type === 'memory.unavailable');
    expect(unavailable).toHaveLength(1);
    expect(unavailable[0]!.data.code).toBe('STORE_CORRUPT_RECORD');
    expect(records.find((record) => record.type === 'tool.settled')!.data).toMatchObject({ name: 'memory_read', status: 'error', errorCode: 'NotFound' });
    expect(records.find((record) => record.type === 'tool.settled')!.data.observation).toContain('memory is unavailable in this session (STORE_CORRUPT_RECORD');
    expect((await cli(['show', id])).stdout).toContain('memory unavailable: STORE_CORRUPT_RECORD');
    expect((await cli(['replay', id])).code).toBe(0);

    const listed = await cli(['memory', 'list']);
    expect(listed.code).toBe(1);
    expect(listed.stderr).toContain('rein: STORE_CORRUPT_RECORD');

    const without = await cli(['run', 'ask', '--script', 'ask.json', '--no-memory', '--json']);
    expect(without.code, without.stderr).toBe(0);
    const plain = jsonLines(without.stdout);
    expect(plain.some((record) => record.type === 'memory.unavailable')).toBe(false);
    expect(plain.find((record) => record.type === 'tool.settled')!.data.observation).toContain('memory is not enabled');
    expect((await cli(['run', 'queued', '--no-memory', '--detach'])).code).toBe(2);
  });
});
