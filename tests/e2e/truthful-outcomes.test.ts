import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entriesOfRows, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

const failingTest = "const test = require('node:test');\nconst assert = require('node:assert');\ntest('adds', () => { assert.strictEqual(1 + 1, 3); });\n";
const passingTest = "const test = require('node:test');\nconst assert = require('node:assert');\ntest('adds', () => { assert.strictEqual(1 + 1, 2); });\n";

const claimsSuccess = {
  turns: [{ text: 'Running the tests.', toolCalls: [{ name: 'bash', arguments: { command: 'node --test' } }] }, { text: 'All tests pass.' }],
};

const deniedCalls = {
  turns: [
    { text: 'Cleaning up and writing.', toolCalls: [{ name: 'bash', arguments: { command: 'rm -rf build' } }, { name: 'write', arguments: { path: 'x.txt', content: 'x\n' } }] },
    { text: 'I was not allowed to do that, so nothing changed.' },
  ],
};

describe('truthful outcomes at the command line', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  // The shell profile of this machine plays no part: HOME is the workspace (no ~/.bash_profile to read).
  const cli = (args: string[]) => runInProcess(args, { cwd: workspace.path, env: { HOME: workspace.path } });
  const sessionOf = (stdout: string): string => /session (s-[\w-]+):/.exec(stdout)![1]!;
  const recordsOf = async (id: string) => jsonLines((await cli(['show', id, '--json'])).stdout);
  beforeEach(async () => {
    workspace = await makeTempDir('rein-truthful-');
    await mkdir(join(workspace.path, 'test'));
  });
  afterEach(() => workspace.remove());

  it('a failing node --test is a failed verification with its exit code, whatever the model claims: trace, display and memory agree', async () => {
    await writeFile(join(workspace.path, 'test', 'add.test.js'), failingTest);
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(claimsSuccess));
    const run = await cli(['run', 'make the tests pass', '--script', 'script.json', '--approve', 'bash:node --test']);
    // Completed, but the last verification failed: the trace's outcome, the summary and the exit code say so.
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^completed · outcome failed/m);
    expect(run.stdout).toMatch(/✗ bash node --test \(exit 1, \d+ ms\)/);
    expect(run.stdout).toContain('1 tool call (1 failed)');
    const id = sessionOf(run.stdout);
    const records = await recordsOf(id);
    const verification = entriesOfRows(records).find((record) => record.type === 'verification.recorded')!;
    expect(verification.data).toMatchObject({ name: 'bash', status: 'failed', command: 'node --test', exitCode: 1 });
    expect(entriesOfRows(records).find((record) => record.type === 'tool.settled')!.data).toMatchObject({ status: 'ok', execution: { command: 'node --test', exitCode: 1 } });
    // A failed verification proposes no memory candidate at all.
    expect(entriesOfRows(records).filter((record) => record.type === 'memory.proposed')).toEqual([]);
    const [report] = jsonLines((await cli(['trace', id, '--json'])).stdout);
    expect(report!.outcome).toBe('failed');
    expect(report!.findings).toContainEqual(expect.objectContaining({ type: 'verification_contradicted_final', evidence: expect.arrayContaining([`#${verification.seq}`]) }));
    expect(report!.findings.find((finding: { type: string }) => finding.type === 'verification_contradicted_final').claim).toContain('claimed success over a failed verification');
    const text = await cli(['trace', id]);
    expect(text.stdout).toMatch(/bash\(node --test\) #\d+ → .* → ok \(exit 1, \d+ ms\) #\d+ → verification failed #\d+/);
    const context = await cli(['context', id]);
    expect(context.stdout).toContain('last verification: failed');
  });

  it('the same with a passing suite records passed with exit code 0, and a succeeded outcome', async () => {
    await writeFile(join(workspace.path, 'test', 'add.test.js'), passingTest);
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(claimsSuccess));
    const run = await cli(['run', 'check the tests', '--script', 'script.json', '--approve', 'bash:node --test']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/✓ bash node --test \(exit 0, \d+ ms\)/);
    const id = sessionOf(run.stdout);
    const records = await recordsOf(id);
    expect(entriesOfRows(records).find((record) => record.type === 'verification.recorded')!.data).toMatchObject({ status: 'passed', exitCode: 0 });
    expect(entriesOfRows(records).filter((record) => record.type === 'memory.proposed').map((record) => record.data.source.type)).toEqual(['verified_observation']);
    const [report] = jsonLines((await cli(['trace', id, '--json'])).stdout);
    expect(report).toMatchObject({ outcome: 'succeeded', findings: [] });
  });

  it('commands that only mention a runner, or mask its exit, are no verification: the outcome is unverified and memory learns nothing (D7)', async () => {
    const mentions = ['echo skipping npm test', 'grep -c pytest x.js || true', 'cat vitest.config.js 2>/dev/null; true', 'npm test --help >/dev/null 2>&1; true', 'echo tests use vitest', 'node --test || true'];
    const script = { turns: [{ text: 'Checking.', toolCalls: [{ name: 'write', arguments: { path: 'x.js', content: 'broken(' } }, ...mentions.map((command) => ({ name: 'bash', arguments: { command } }))] }, { text: 'All tests pass.' }] };
    await writeFile(join(workspace.path, 'test', 'add.test.js'), passingTest);
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
    const run = await cli(['run', 'fix x', '--script', 'script.json', '--yes']);
    expect(run.code).toBe(0);
    const id = sessionOf(run.stdout);
    const records = await recordsOf(id);
    expect(entriesOfRows(records).filter((record) => record.type === 'tool.settled' && record.data.name === 'bash').map((record) => record.data.execution?.exitCode)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(entriesOfRows(records).filter((record) => record.type === 'verification.recorded')).toEqual([]);
    expect(entriesOfRows(records).filter((record) => record.type === 'memory.proposed')).toEqual([]);
    const [report] = jsonLines((await cli(['trace', id, '--json'])).stdout);
    expect(report!.outcome).toBe('unverified');
    expect((await cli(['show', id])).stdout).not.toContain('verification passed');
  });

  const denials: Array<[string, string[], string]> = [
    ['a pattern rule', ['--deny', 'bash:rm*', '--deny', 'write:x*'], 'rule'],
    ['a tool-wide --deny', ['--deny', 'bash', '--deny', 'write'], 'tool-deny'],
    ['--mode plan', ['--mode', 'plan'], 'mode'],
  ];
  for (const [how, flags, source] of denials) {
    it(`bash and write denied by ${how}, then a final answer: completed, the denial in the trace, no violation`, async () => {
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify(deniedCalls));
      const run = await cli(['run', 'clean up', '--script', 'script.json', ...flags]);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('✗ bash rm -rf build Denied');
      const id = sessionOf(run.stdout);
      expect(run.stdout).toMatch(/^completed · outcome unverified/m);
      const records = await recordsOf(id);
      const settled = entriesOfRows(records).filter((record) => record.type === 'tool.settled').map((record) => record.data);
      expect(settled).toHaveLength(2);
      for (const data of settled) expect(data).toMatchObject({ status: 'error', errorCode: 'Denied', denial: { source } });
      expect(entriesOfRows(records).some((record) => record.type === 'tool.started')).toBe(false);
      expect(entriesOfRows(records).filter((record) => record.type === 'turn.blocked')).toEqual([]);
      expect(entriesOfRows(records).filter((record) => record.type === 'turn.mutation-ready')).toHaveLength(1);
      const serialized = JSON.stringify(records);
      expect(serialized).not.toContain('runtime.shell_boundary_violation');
      expect(serialized).not.toContain('tool.unknown_or_disallowed');
      expect(entriesOfRows(records).find((record) => record.type === 'session.ended')!.data).toEqual({ status: 'completed' });
      const trace = await cli(['trace', id]);
      const denied = source === 'rule' ? /permission deny \(denied by the rule "deny bash:rm\*"\) #\d+ → denied #\d+/ : new RegExp(`permission — → denied by ${source} \\(`);
      expect(trace.stdout.split('\n').find((line) => line.includes('bash(rm -rf build)'))).toMatch(denied);
      const [report] = jsonLines((await cli(['trace', id, '--json'])).stdout);
      expect(report!.ended).toMatchObject({ status: 'completed' });
      expect(report!.ended.unresolved).toBeUndefined();
      expect(report!.findings.map((finding: { type: string }) => finding.type)).not.toContain('unresolved_fail_closed');
      if (source === 'mode') expect((await cli(['replay', id])).code).toBe(0);
    });
  }
});
