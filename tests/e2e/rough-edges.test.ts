import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLevelEventStore } from '../../stores/index.js';
import { describeChain } from '../../src/session/verify-session.js';
import { replaySession } from '../../src/session/replay-session.js';
import { cliPath, entriesOfRows, jsonLines, startCli } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { eventually } from '../support/sandbox.js';
import { makeTempDir } from '../support/temp-dir.js';
import { scaledTimeout } from '../support/timeouts.js';

const driver = fileURLToPath(new URL('../support/pty-driver.py', import.meta.url));

const writeAndFinish = {
  turns: [
    { text: 'Reading and writing.', toolCalls: [{ name: 'read', arguments: { path: 'notes.txt' } }, { name: 'list_dir', arguments: { path: '.' } }, { name: 'write', arguments: { path: 'out.txt', content: 'x\n' } }] },
    { text: 'Done.' },
  ],
};

describe('the rough edges a new user hits', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  const cli = (args: string[]) => runInProcess(args, { cwd: workspace.path, env: { HOME: workspace.path } });
  const script = (name: string, value: unknown) => writeFile(join(workspace.path, name), JSON.stringify(value));
  const sessionOf = (stdout: string): string => /session (s-[\w-]+):/.exec(stdout)![1]!;
  beforeEach(async () => {
    workspace = await makeTempDir('rein-rough-');
    await writeFile(join(workspace.path, 'notes.txt'), 'notes\n');
  });
  afterEach(() => workspace.remove());

  it('a script with an unknown key is SCRIPT_INVALID naming the key and its path; an unknown tool name is allowed', async () => {
    await script('typo.json', { turns: [{ text: 'Reading.', tool_calls: [{ name: 'read', arguments: { path: 'notes.txt' } }] }, { txt: 'Done.' }] });
    const typo = await cli(['run', 'read it', '--script', 'typo.json']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/^rein: SCRIPT_INVALID: .*turns\.0: Unrecognized key: "tool_calls"; turns\.1: Unrecognized key: "txt"/);
    await script('unknown-tool.json', { turns: [{ text: 'Flying.', toolCalls: [{ name: 'teleport', arguments: {} }] }, { text: 'Done.' }] });
    expect((await cli(['run', 'fly', '--script', 'unknown-tool.json'])).code).toBe(0);
  });

  it('an --approve or --deny rule naming no tool rein has is a usage error listing the tools; *, real tools and mcp__ names are fine', async () => {
    await script('script.json', { turns: [{ text: 'Done.' }] });
    const typo = await cli(['run', 'x', '--script', 'script.json', '--approve', 'wirte']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('rein: USAGE: --approve "wirte": there is no tool "wirte"; the tools are read, write, edit');
    expect((await cli(['run', 'x', '--script', 'script.json', '--deny', 'bsh:rm*'])).stderr).toContain('there is no tool "bsh"');
    expect((await cli(['run', 'x', '--script', 'script.json', '--approve', '*', '--deny', 'mcp__github__delete_repo', '--approve', 'bash:npm test'])).code).toBe(0);
  });

  it('Ctrl-C at an approval prompt exits 130 and leaves the question for rein resume', async () => {
    await script('script.json', writeAndFinish);
    const { stdout } = await promisify(execFile)('python3', [driver, JSON.stringify({ argv: [process.execPath, cliPath, 'run', 'write it', '--script', 'script.json'], cwd: workspace.path, answers: [{ expect: 'allow\\? \\[y\\]es once', send: '\u0003' }], timeout: 60 })], { env: { ...process.env, HOME: workspace.path } });
    const result = JSON.parse(stdout) as { code: number | null; output: string };
    expect(result.output).not.toContain('ABORT_ERR');
    expect(result.code).toBe(130);
    const id = sessionOf(result.output);
    const [summary] = jsonLines((await cli(['sessions', '--json'])).stdout);
    expect(summary).toMatchObject({ id, status: 'interrupted' });
    const resumed = await cli(['resume', id, '--approve', 'write']);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('✓ write out.txt');
  });

  it('rein sessions keeps its columns whatever the status (awaiting-approval is wider than completed) (D14)', async () => {
    await script('script.json', writeAndFinish);
    expect((await cli(['run', 'ask', '--script', 'script.json'])).code).toBe(3);
    await script('done.json', { turns: [{ text: 'Done.' }] });
    expect((await cli(['run', 'x', '--script', 'done.json'])).code).toBe(0);
    const lines = (await cli(['sessions'])).stdout.trimEnd().split('\n');
    expect(lines.map((line) => line.split(/\s+/)[1]).sort()).toEqual(['awaiting-approval', 'completed']);
    expect(new Set(lines.map((line) => line.indexOf(' records')))).toHaveProperty('size', 1);
  });

  it('rein resume of an ended session says how it ended, and exits 0 for completed', async () => {
    await script('script.json', { turns: [{ text: 'Done.' }] });
    const id = sessionOf((await cli(['run', 'x', '--script', 'script.json'])).stdout);
    const resumed = await cli(['resume', id]);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain(`already completed (outcome unverified): session ${id} ended; nothing to resume`);
    // With --json: one object a script can read, never silence (D11).
    const json = await cli(['resume', id, '--json']);
    expect([json.code, jsonLines(json.stdout)]).toEqual([0, [{ sessionId: id, alreadyEnded: true, status: 'completed', outcome: 'unverified' }]]);
    await script('short.json', { turns: [{ text: 'Looking.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] }] });
    const failed = sessionOf((await cli(['run', 'y', '--script', 'short.json'])).stdout);
    const failedJson = await cli(['resume', failed, '--json']);
    expect([failedJson.code, jsonLines(failedJson.stdout)]).toEqual([1, [{ sessionId: failed, alreadyEnded: true, status: 'failed' }]]);
  });

  it('an in-doubt command waits for confirmation naming the command that continues it, then reruns and shows like any call', async () => {
    await script('script.json', { turns: [{ text: 'Waiting.', toolCalls: [{ name: 'bash', arguments: { command: 'touch started; test -f go || sleep 30' } }] }, { text: 'Done.' }] });
    const child = startCli(['run', 'wait', '--script', 'script.json', '--yes'], { cwd: workspace.path, env: { HOME: workspace.path } });
    let stdout = '';
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    // The command itself says it started (so `tool.started` is durable): interrupt it then, not after a guessed delay.
    await eventually(() => stdout.includes('Waiting.') && existsSync(join(workspace.path, 'started')), (started) => started, scaledTimeout(60_000));
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    await writeFile(join(workspace.path, 'go'), '');
    const id = sessionOf(stdout);
    const waiting = await cli(['resume', id]);
    expect(waiting.code).toBe(3);
    expect(waiting.stdout).toMatch(/in doubt: root:e\d+ \(bash touch started; test -f go \|\| sleep 30\) → awaiting-confirmation/);
    const effectId = /in doubt: (root:e\d+)/.exec(waiting.stdout)![1]!;
    expect(waiting.stdout).toContain(`rerun it with: rein resume ${id} --confirm ${effectId}`);
    const rerun = await cli(['resume', id, '--confirm', effectId]);
    expect(rerun.code).toBe(0);
    expect(rerun.stdout).toMatch(/✓ bash touch started; test -f go \|\| sleep 30 \(exit 0, \d+ ms\)/);
  });

  it('rein show prints a readable transcript; the witnesses come with --verbose and in --json', async () => {
    await script('script.json', writeAndFinish);
    const id = sessionOf((await cli(['run', 'write it', '--script', 'script.json', '--approve', 'write'])).stdout);
    const plain = (await cli(['show', id])).stdout;
    expect(plain).toMatch(/user: write it/);
    expect(plain).toMatch(/assistant: Reading and writing\. → read\(notes\.txt\), list_dir\(\.\), write\(out\.txt\)/);
    expect(plain).toMatch(/✓ write: wrote 2 bytes to out\.txt/);
    expect(plain).toMatch(/permission allow for write out\.txt \(pre-approved: allow write\)/);
    expect(plain).not.toMatch(/CallSpec|MutationReady|join closed/);
    const verbose = (await cli(['show', id, '--verbose'])).stdout;
    expect(verbose).toMatch(/turn root:e1: CallSpec b3:/);
    expect(verbose).toMatch(/turn root:e1: MutationReady/);
    const records = jsonLines((await cli(['show', id, '--json'])).stdout);
    // The witnesses travel in the step record (step.derived); --json carries it and the entries expand from it.
    expect(entriesOfRows(records).map((record) => record.type)).toContain('turn.mutation-ready');
    // Timestamps never go backwards within a stream, parallel tools included.
    for (let index = 1; index < records.length; index++) expect(records[index]!.at).toBeGreaterThanOrEqual(records[index - 1]!.at);
  });

  it('replay counts are the same in the library and the CLI', async () => {
    await script('script.json', writeAndFinish);
    const id = sessionOf((await cli(['run', 'write it', '--script', 'script.json', '--approve', 'write'])).stdout);
    const [json] = jsonLines((await cli(['replay', id, '--json'])).stdout);
    const text = (await cli(['replay', id])).stdout;
    const store = await openLevelEventStore(join(workspace.path, '.rein'));
    try {
      const library = await replaySession(store, id);
      expect(json).toEqual({ sessionId: id, verified: library.verified, regenerated: library.regenerated, inputs: library.inputs, head: library.head, chain: library.chain });
      expect(library.chain).toMatchObject({ status: 'authenticated', head: library.head });
      expect(text).toBe(`verified ${library.verified} records (${library.inputs} inputs re-applied, ${library.regenerated} derived records regenerated and equal); ${describeChain(library.chain)}\n`);
      expect(library.verified).toBe(library.head);
    } finally {
      await store.close();
    }
  });
});
