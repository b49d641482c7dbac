import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLevelEventStore } from '../../stores/index.js';
import { entriesOfRows, greetingScript, jsonLines, runCli, startCli } from '../support/cli.js';
import { makeTempDir } from '../support/temp-dir.js';

describe('rein CLI', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let sessionId: string;

  beforeAll(async () => {
    workspace = await makeTempDir('rein-cli-');
    await writeFile(join(workspace.path, 'hello.txt'), 'hello\n');
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(greetingScript));
    await writeFile(join(workspace.path, 'short.json'), JSON.stringify({ turns: [{ text: 'one', toolCalls: [{ name: 'read', arguments: { path: 'hello.txt' } }] }] }));
    await writeFile(join(workspace.path, 'broken.json'), '{ "turns": [ { "toolCalls": "nope" } ] }');
  });
  afterAll(() => workspace.remove());

  it('prints help listing every command', async () => {
    const help = await runCli(['--help'], { cwd: workspace.path });
    expect(help.code).toBe(0);
    for (const command of ['run', 'resume', 'sessions', 'show', 'replay', 'fork']) expect(help.stdout).toContain(command);
  });

  it('runs a scripted session to completion with a live display and a summary', async () => {
    const run = await runCli(['run', 'shout the greeting', '--script', 'script.json', '--approve', 'write'], { cwd: workspace.path });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('✓ read hello.txt');
    expect(run.stdout).toContain('✓ write out.txt');
    expect(run.stdout).toMatch(/completed · outcome \w+[^\n]*\n4 turns · 3 tool calls/);
    sessionId = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
  });

  it('lists sessions with status and head, as text and JSON', async () => {
    const text = await runCli(['sessions'], { cwd: workspace.path });
    expect(text.stdout).toContain(sessionId);
    const [summary] = jsonLines((await runCli(['sessions', '--json'], { cwd: workspace.path })).stdout);
    expect(summary).toMatchObject({ id: sessionId, status: 'completed', task: 'shout the greeting' });
    expect(summary!.head).toBeGreaterThan(10);
  });

  it('shows the transcript, and every record with --json', async () => {
    const text = await runCli(['show', sessionId], { cwd: workspace.path });
    expect(text.stdout).toContain('user: shout the greeting');
    expect(text.stdout).toContain('session ended: completed');
    const records = jsonLines((await runCli(['show', sessionId, '--json'], { cwd: workspace.path })).stdout);
    expect(records.map((record) => record.seq)).toEqual(records.map((_, index) => index + 1));
    expect(records[0]).toMatchObject({ type: 'session.created', actor: 'root', v: 1 });
  });

  it('replays and verifies', async () => {
    const replay = await runCli(['replay', sessionId], { cwd: workspace.path });
    expect(replay.code).toBe(0);
    expect(replay.stdout).toMatch(/^verified \d+ records/);
  });

  it('forks at a step boundary, refuses a fork inside a step, and the fork resumes to completion', async () => {
    const records = jsonLines((await runCli(['show', sessionId, '--json'], { cwd: workspace.path })).stdout);
    const secondReply = entriesOfRows(records).filter((record) => record.type === 'model.responded')[1]!;
    const inside = await runCli(['fork', sessionId, '--at', String(secondReply.seq)], { cwd: workspace.path });
    expect(inside.code).toBe(2);
    expect(inside.stderr).toContain('FORK_NOT_AT_BOUNDARY');
    const boundary = secondReply.seq - 1;
    const fork = await runCli(['fork', sessionId, '--at', String(boundary)], { cwd: workspace.path });
    expect(fork.code).toBe(0);
    const forkId = fork.stdout.trim();
    const resumed = await runCli(['resume', forkId, '--approve', 'write'], { cwd: workspace.path });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('completed');
    const [forkSummary] = jsonLines((await runCli(['sessions', '--json'], { cwd: workspace.path })).stdout).filter((summary) => summary.id === forkId);
    expect(forkSummary).toMatchObject({ status: 'completed', forkedFrom: { stream: sessionId, seq: boundary } });
    expect((await runCli(['replay', forkId], { cwd: workspace.path })).code).toBe(0);

    // The fork is its own session in every view; only the fork link names the parent (D3).
    const cli = (args: string[]) => runCli(args, { cwd: workspace.path });
    expect((await cli(['trace', forkId])).stdout.split('\n')[0]).toContain(`session ${forkId} `);
    expect(jsonLines((await cli(['trace', forkId, '--json'])).stdout)[0]).toMatchObject({ sessionId: forkId });
    expect(JSON.parse((await cli(['trace', forkId, '--eval'])).stdout)).toMatchObject({ source: { sessionId: forkId } });
    expect((await cli(['show', forkId])).stdout).toContain(`session ${forkId} in `);
    const otlp = JSON.parse((await cli(['trace', forkId, '--format', 'otlp-json'])).stdout) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ name: string; attributes: Array<{ key: string; value: { stringValue?: string } }> }> }> }> };
    const spans = otlp.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans));
    const attribute = (span: (typeof spans)[number], key: string) => span.attributes.find((entry) => entry.key === key)?.value.stringValue;
    expect(spans.length).toBeGreaterThan(3);
    expect(new Set(spans.map((span) => attribute(span, 'gen_ai.conversation.id')))).toEqual(new Set([forkId]));
    expect(attribute(spans.find((span) => span.name.startsWith('invoke_agent'))!, 'rein.session.id')).toBe(forkId);
  });

  it('exits 1 when the session fails (the script runs out)', async () => {
    const run = await runCli(['run', 'too short', '--script', 'short.json'], { cwd: workspace.path });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('script_exhausted');
  });

  it('exits 2 on usage errors with a typed message', async () => {
    const noScript = await runCli(['run', 'x'], { cwd: workspace.path });
    expect(noScript.code).toBe(2);
    expect(noScript.stderr).toContain('USAGE');
    const broken = await runCli(['run', 'x', '--script', 'broken.json'], { cwd: workspace.path });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain('SCRIPT_INVALID');
    const unknown = await runCli(['show', 's-nope'], { cwd: workspace.path });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('SESSION_NOT_FOUND');
    const badBudget = await runCli(['run', 'x', '--script', 'script.json', '--max-turns', 'many'], { cwd: workspace.path });
    expect(badBudget.code).toBe(2);
  });

  it('prints NDJSON records with --json', async () => {
    const run = await runCli(['run', 'again', '--script', 'script.json', '--json', '--mode', 'accept-edits'], { cwd: workspace.path });
    const records = jsonLines(run.stdout);
    expect(run.stdout.trim().split('\n')).toHaveLength(records.length);
    expect(entriesOfRows(records).at(-1)).toMatchObject({ type: 'session.ended', data: { status: 'completed' } });
  });

  it('names the first divergent seq of a tampered log', async () => {
    const store = await openLevelEventStore(join(workspace.path, '.rein'));
    const records = await store.read(sessionId);
    const tamperedId = 's-tampered';
    await store.append(
      tamperedId,
      // Every executeTool intent asks for another tool (in a step record; `effect.requested` in an older log).
      records.map(({ stream: _stream, seq: _seq, ...record }) => {
        if (record.type !== 'step.derived') return record;
        const step = record.data as { derived: unknown[][] };
        return { ...record, data: { ...step, derived: step.derived.map((entry) => (entry[0] === 1 && entry[3] === 'executeTool' ? [...entry.slice(0, 4), { name: 'write' }, ...entry.slice(5)] : entry)) } };
      }),
      { expectedSeq: 0 },
    );
    await store.close();
    const firstTool = entriesOfRows(records).find((record) => record.type === 'effect.requested' && (record.data as { kind: string }).kind === 'executeTool')!;
    const replay = await runCli(['replay', tamperedId], { cwd: workspace.path });
    expect(replay.code).toBe(1);
    expect(replay.stderr).toContain(`REPLAY_DIVERGENCE`);
    expect(replay.stderr).toContain(`at seq ${firstTool.seq}`);
  });

  it('reads other sessions while another process is running one in the same workspace', async () => {
    const long = { turns: [...Array.from({ length: 3000 }, () => ({ text: '', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] })), { text: 'done' }] };
    await writeFile(join(workspace.path, 'long.json'), JSON.stringify(long));
    const child = startCli(['run', 'long', '--script', 'long.json', '--max-turns', '5000', '--max-tool-calls', '5000'], { cwd: workspace.path });
    try {
      // Running for sure once its first tool call is printed (however loaded the machine is).
      await new Promise<void>((resolve, reject) => {
        let printed = '';
        child.stdout!.on('data', (chunk: Buffer) => {
          printed += chunk.toString();
          if (printed.includes('list_dir')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`rein run exited ${String(code)} before its first tool call`)));
      });
      expect(child.exitCode).toBeNull();
      const sessions = jsonLines((await runCli(['sessions', '--json'], { cwd: workspace.path })).stdout);
      const running = sessions.find((summary) => summary.task === 'long');
      expect(running).toMatchObject({ status: 'active' });
      expect((await runCli(['show', sessionId], { cwd: workspace.path })).code).toBe(0);
      expect((await runCli(['replay', sessionId], { cwd: workspace.path })).code).toBe(0);
      const live = await runCli(['show', running!.id, '--json'], { cwd: workspace.path });
      expect(live.code).toBe(0);
      expect(jsonLines(live.stdout).length).toBeGreaterThan(0);
      expect(child.exitCode).toBeNull();
    } finally {
      child.kill('SIGKILL');
    }
  });
});
