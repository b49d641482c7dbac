import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLevelEventStore } from '../../stores/index.js';
import { entriesOfRows, greetingScript, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { seenByInspector, seenInLog, startReceiver } from '../support/inspector-receiver.js';
import { makeTempDir } from '../support/temp-dir.js';
import { hashTree } from '../support/tree-hash.js';
import type { RecordEnvelope } from '../../models/envelope.js';

describe('rein trace, context, inspect and replay --dry-run', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let elsewhere: { path: string; remove: () => Promise<void> };
  let sessionId: string;
  const cwd = () => ({ cwd: workspace.path });
  const fingerprint = () => hashTree(workspace.path);

  beforeAll(async () => {
    workspace = await makeTempDir('rein-trace-cli-');
    elsewhere = await makeTempDir('rein-trace-out-');
    await writeFile(join(workspace.path, 'hello.txt'), 'hello\n');
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(greetingScript));
    const run = await runInProcess(['run', "shout the greeting. Don't touch hello.txt.", '--script', 'script.json', '--approve', 'write'], cwd());
    expect(run.code).toBe(0);
    sessionId = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
  });
  afterAll(async () => {
    await workspace.remove();
    await elsewhere.remove();
  });

  it('lists the new commands in --help', async () => {
    const help = await runInProcess(['--help'], cwd());
    for (const command of ['trace', 'context', 'inspect']) expect(help.stdout).toContain(command);
  });

  it('rein trace prints the timeline and findings, writes the Markdown report and changes nothing else', async () => {
    const before = await fingerprint();
    const report = join(elsewhere.path, 'report.md');
    const trace = await runInProcess(['trace', sessionId, '--out', report], cwd());
    expect(trace.stderr).toBe('');
    expect(trace.code).toBe(0);
    expect(trace.stdout).toContain('outcome: unverified (the agent claimed success)');
    expect(trace.stdout).toMatch(/read\(hello\.txt\) #\d+ → permission allow \(read-only tool\) #\d+ → started #\d+ → ok #\d+/);
    expect(trace.stdout).toContain('[verification_missing @ verification] missing_verification');
    const markdown = await readFile(report, 'utf8');
    for (const section of ['## Conclusion', '## Classification', '## Evidence', '## Timeline']) expect(markdown).toContain(section);
    const evalCase = JSON.parse((await runInProcess(['trace', sessionId, '--eval'], cwd())).stdout);
    expect(evalCase.assertions).toEqual(expect.arrayContaining([{ type: 'final_success_requires_verification_passed' }, { type: 'verification_after_last_change' }]));
    expect(evalCase.steps).toHaveLength(4);
    const [summary] = jsonLines((await runInProcess(['trace', sessionId, '--json'], cwd())).stdout);
    expect(summary).toMatchObject({ outcome: 'unverified', primary: { type: 'missing_verification', boundary: 'verification' } });
    expect(await fingerprint()).toEqual(before);
  });

  it('rein context shows the exact model input of a turn and the ledger behind it', async () => {
    const before = await fingerprint();
    const shown = await runInProcess(['context', sessionId, '--turn', '3'], cwd());
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^turn 3 · recorded at #\d+ \(root:e5, attempt 1\)/);
    expect(shown.stdout).toContain('== model input ==');
    expect(shown.stdout).toContain('--- tool read root:e3.0 ---');
    expect(shown.stdout).toContain("(prohibition) Don't touch hello.txt.");
    expect(shown.stdout).toContain('== decision ledger ==');
    expect(shown.stdout).toMatch(/\+ latest_observation #\d+ #\d+ · full · untrusted/);
    const [json] = jsonLines((await runInProcess(['context', sessionId, '--json'], cwd())).stdout);
    expect(json).toMatchObject({ turn: 4, reconstructed: false, ledger: { turn: 4 } });
    expect(json!.input.messages[0].role).toBe('system');
    const missing = await runInProcess(['context', sessionId, '--turn', '99'], cwd());
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe('rein: TURN_NOT_FOUND: root has no model turn 99; turns: 1, 2, 3, 4\n');
    // An actor the session never had is not a turn problem; an actor without model turns is.
    const nobody = await runInProcess(['context', sessionId, '--actor', 'root/nope'], cwd());
    expect({ code: nobody.code, stderr: nobody.stderr }).toEqual({ code: 2, stderr: 'rein: ACTOR_NOT_FOUND: this session has no actor root/nope; actors with model turns: root\n' });
    const noTurns = await runInProcess(['context', sessionId, '--actor', 'root/turn-1'], cwd());
    expect({ code: noTurns.code, stderr: noTurns.stderr }).toEqual({ code: 2, stderr: 'rein: TURN_NOT_FOUND: root/turn-1 has no model turn; actors with model turns: root\n' });
    expect(await fingerprint()).toEqual(before);
  });

  it('rein context reconstructs a turn of a session recorded without context.projected, and says so', async () => {
    const store = await openLevelEventStore(join(workspace.path, '.rein'));
    const records = await store.read(sessionId);
    // No `context.projected`: neither a record of its own nor folded into a step record.
    const withoutContext = (record: RecordEnvelope): RecordEnvelope => (record.type === 'step.derived' ? { ...record, data: { ...(record.data as object), facts: ((record.data as { facts?: Array<[string]> }).facts ?? []).filter(([type]) => type !== 'context.projected') } } : record);
    const drafts = records.filter((record) => record.type !== 'context.projected').map(withoutContext).map(({ stream: _stream, seq: _seq, ...draft }) => draft);
    await store.append('old-session', drafts, { expectedSeq: 0 });
    await store.close();
    const shown = await runInProcess(['context', 'old-session', '--turn', '2'], cwd());
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('RECONSTRUCTED');
    expect(shown.stdout).toContain('--- tool list_dir root:e1.0 ---');
    const trace = await runInProcess(['trace', 'old-session'], cwd());
    expect(trace.stdout).toContain('has no recorded context snapshot');
  });

  it('rein replay --dry-run re-evaluates every call and executes nothing', async () => {
    const before = await fingerprint();
    const dry = await runInProcess(['replay', sessionId, '--dry-run'], cwd());
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/#\d+ write root:e5\.0: then valid\/allow → ok · now valid\/ask · CHANGED: permission: allow then, ask now/);
    expect(dry.stdout).toContain('3 recorded tool calls, 1 would now be decided differently');
    const sameRules = await runInProcess(['replay', sessionId, '--dry-run', '--approve', 'write'], cwd());
    expect(sameRules.stdout).toMatch(/#\d+ write root:e5\.0: then valid\/allow → ok · now valid\/allow/);
    expect(sameRules.stdout).toContain('3 recorded tool calls, 0 would now be decided differently');
    expect(jsonLines((await runInProcess(['replay', sessionId, '--dry-run', '--json'], cwd())).stdout)).toHaveLength(3);
    expect(await fingerprint()).toEqual(before);
  });

  it('rein inspect streams the recorded session to a local inspector: same actors and transitions as the log', async () => {
    const receiver = await startReceiver();
    try {
      const before = await fingerprint();
      const inspected = await runInProcess(['inspect', sessionId, '--url', receiver.url, '--json'], cwd());
      expect(inspected.stderr).toBe('');
      const [summary] = jsonLines(inspected.stdout);
      await receiver.waitFor(summary!.events);
      const store = await openLevelEventStore(join(workspace.path, '.rein'), { readOnly: true });
      const records = await store.read(sessionId);
      await store.close();
      expect(seenByInspector(receiver.events).actors).toEqual(seenInLog(records).actors);
      expect(seenByInspector(receiver.events).transitions).toEqual(seenInLog(records).transitions);
      expect(await fingerprint()).toEqual(before);
    } finally {
      await receiver.close();
    }
    const outside = await runInProcess(['inspect', sessionId, '--url', 'ws://example.com:8080'], cwd());
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain('INSPECTOR_NOT_LOCAL');
  });

  it('rein run --inspect streams a live session', async () => {
    const receiver = await startReceiver();
    try {
      const run = await runInProcess(['run', 'again', '--script', 'script.json', '--approve', 'write', '--inspect', receiver.url], cwd());
      expect(run.code).toBe(0);
      const id = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
      const store = await openLevelEventStore(join(workspace.path, '.rein'), { readOnly: true });
      const records = await store.read(id);
      await store.close();
      const expected = seenInLog(records).transitions;
      await receiver.waitUntil((events) => seenByInspector(events).transitions.length >= expected.length);
      expect(seenByInspector(receiver.events).transitions).toEqual(expected);
    } finally {
      await receiver.close();
    }
  });
});
