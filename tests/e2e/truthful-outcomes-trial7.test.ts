import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entriesOfRows, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

// Trial 7 G11, G3, G4: real `node --test` runs through the CLI with the scripted provider.
const header = "const test = require('node:test');\nconst assert = require('node:assert');\n";
const mixedSuite = `${header}test('ok', () => {});\ntest('fails', () => { assert.strictEqual(1, 2); });\n`;
const failingSuite = `${header}test('fails', () => { assert.strictEqual(1, 2); });\n`;
const passingSuite = `${header}test('adds', () => { assert.strictEqual(1 + 1, 2); });\n`;

const script = (...commands: Array<string | { command: string; run_in_background: true }>) => ({
  turns: [...commands.map((command, index) => ({ text: `step ${index + 1}`, toolCalls: [{ name: 'bash', arguments: typeof command === 'string' ? { command } : command }] })), { text: 'All tests pass. Done.' }],
});

describe('a verification is what the suite said, not what the line exited (trial 7)', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  const cli = (args: string[]) => runInProcess(args, { cwd: workspace.path, env: { HOME: workspace.path } });
  const sessionOf = (stdout: string): string => /session (s-[\w-]+):/.exec(stdout)![1]!;
  const recordsOf = async (id: string) => jsonLines((await cli(['show', id, '--json'])).stdout);
  const run = async (turns: ReturnType<typeof script>) => {
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(turns));
    const result = await cli(['run', 'make the tests pass', '--script', 'script.json', '--yes']);
    const id = sessionOf(result.stdout);
    const records = await recordsOf(id);
    const [report] = jsonLines((await cli(['trace', id, '--json'])).stdout);
    // The exit code follows the trace's outcome (issue 30 A1): 1 only when it is failed.
    expect(result.code).toBe(report!.outcome === 'failed' ? 1 : 0);
    return { id, records, report: report!, verifications: entriesOfRows(records).filter((record) => record.type === 'verification.recorded').map((record) => record.data) };
  };
  beforeEach(async () => {
    workspace = await makeTempDir('rein-trial7-');
    await mkdir(join(workspace.path, 'test'));
  });
  afterEach(() => workspace.remove());

  it('G11: a trap that rewrites the exit is no verification; an exit 0 whose runner summary counts a failure is a failed one', async () => {
    await writeFile(join(workspace.path, 'test', 'a.test.js'), mixedSuite);
    await writeFile(join(workspace.path, 'package.json'), JSON.stringify({ name: 'x', version: '1.0.0', scripts: { test: 'node --test || true' } }));
    const { id, records, report, verifications } = await run(script("trap 'exit 0' EXIT; node --test", 'npm test'));
    const settled = entriesOfRows(records).filter((record) => record.type === 'tool.settled').map((record) => record.data.execution?.exitCode);
    expect(settled).toEqual([0, 0]);
    // The trap line records nothing; `npm test` exits 0 but node's own summary says `fail 1`.
    expect(verifications).toHaveLength(1);
    expect(verifications[0]).toMatchObject({ command: 'npm test', status: 'failed', exitCode: 0, packageScript: { name: 'test', script: 'node --test || true' } });
    expect(verifications[0]!.summary).toMatch(/^the runner's own summary counts 1 failed test\(s\) though the command exited 0/);
    expect(report.outcome).toBe('failed');
    expect(entriesOfRows(records).filter((record) => record.type === 'memory.proposed')).toEqual([]);
    const show = await cli(['show', id]);
    expect(show.stdout).toMatch(/verification failed: npm test \(exit 0, 1 failed by the runner's own summary\)/);
    expect(show.stdout).not.toContain('verification passed');
    expect((await cli(['replay', id])).code).toBe(0);
  });

  it("G11: a tester child cannot report a trapped run as passed: its report is refused, the join is not satisfied", async () => {
    await writeFile(join(workspace.path, 'test', 'a.test.js'), mixedSuite);
    const line = "trap 'exit 0' EXIT; node --test";
    const report = { status: 'completed', summary: 'all pass', command: line, exit_code: 0, passed: true, failing_tests: [], relevant_output: 'ok' };
    const turns = {
      turns: [{ text: 'd', toolCalls: [{ name: 'delegate_task', arguments: { tasks: [{ id: 't1', role: 'tester', objective: 'run the tests' }] } }] }, { text: 'Tests pass. Done.' }],
      agents: { tester: { turns: [{ text: 't', toolCalls: [{ name: 'bash', arguments: { command: line } }] }, { text: 'rep', toolCalls: [{ name: 'submit_report', arguments: report }] }] } },
    };
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(turns));
    const result = await cli(['run', 'make the tests pass', '--script', 'script.json', '--yes']);
    expect(result.stdout).not.toMatch(/joined \(all\): satisfied/);
    const records = await recordsOf(sessionOf(result.stdout));
    const refused = entriesOfRows(records).find((record) => record.type === 'tool.settled' && record.data.name === 'submit_report')!;
    expect(refused.data).toMatchObject({ status: 'error', errorCode: 'InvalidInput' });
    expect(refused.data.observation).toContain('is not one rein counts as a test run');
  });

  it('G3: a test file with no tests, a dot reporter, or a package script that filters is inconclusive and never memory', async () => {
    await writeFile(join(workspace.path, 'test', 'a.test.js'), failingSuite);
    await writeFile(join(workspace.path, 'test', 'helpers.test.js'), '// helpers\n');
    await writeFile(join(workspace.path, 'package.json'), JSON.stringify({ name: 'x', version: '1.0.0', scripts: { test: 'node --test --test-reporter=dot --test-name-pattern=zzz' } }));
    const { id, records, report, verifications } = await run(script('npm test --silent', 'node --test --test-reporter=dot test/helpers.test.js'));
    expect(verifications.map((data) => [data.command, data.status, data.exitCode])).toEqual([
      ['npm test --silent', 'inconclusive', 0],
      ['node --test --test-reporter=dot test/helpers.test.js', 'inconclusive', 0],
    ]);
    // The script npm ran is on record, read from package.json when the call was made.
    expect(verifications[0]!.packageScript).toEqual({ name: 'test', script: 'node --test --test-reporter=dot --test-name-pattern=zzz' });
    expect(report.outcome).toBe('unverified');
    expect(entriesOfRows(records).filter((record) => record.type === 'memory.proposed')).toEqual([]);
    expect((await cli(['show', id])).stdout).toContain('verification inconclusive: node --test --test-reporter=dot test/helpers.test.js (exit 0, no count of tests that ran)');
    expect((await cli(['replay', id])).code).toBe(0);
  });

  it('G3: a passing run of one test file passes, but is never the memory that the repository\'s tests pass', async () => {
    await writeFile(join(workspace.path, 'test', 'a.test.js'), passingSuite);
    await writeFile(join(workspace.path, 'test', 'b.test.js'), failingSuite);
    const { records, verifications } = await run(script('node --test test/a.test.js'));
    expect(verifications).toMatchObject([{ status: 'passed', exitCode: 0 }]);
    expect(entriesOfRows(records).filter((record) => record.type === 'memory.proposed')).toEqual([]);
  });

  it('G4: a background command that may change files and is still running after the passing run makes it stale', async () => {
    await writeFile(join(workspace.path, 'test', 'a.test.js'), passingSuite);
    const { report } = await run(script({ command: "sleep 30; sed -i 's/1 + 1, 2/1 + 1, 3/' test/a.test.js", run_in_background: true }, 'node --test'));
    expect(report.outcome).toBe('unverified');
    expect(report.findings).toContainEqual(expect.objectContaining({ type: 'verification_stale' }));
  });

  it('G4: a background command that changed the code after the passing run (its end recorded later) makes it stale', async () => {
    // The suite writes a marker once its test has run; the background command waits for it, then breaks the code.
    await writeFile(join(workspace.path, 'test', 'a.test.js'), `${header}const fs = require('node:fs');\ntest('adds', () => { assert.strictEqual(1 + 1, 2); fs.writeFileSync('ran.flag', ''); });\n`);
    const { records, report } = await run(
      script({ command: "until [ -f ran.flag ]; do sleep 0.05; done; sed -i 's/1 + 1, 2/1 + 1, 3/' test/a.test.js", run_in_background: true }, 'node --test', 'sleep 2'),
    );
    const verification = entriesOfRows(records).find((record) => record.type === 'verification.recorded')!;
    expect(verification.data.status).toBe('passed');
    // The background command ended after the test run started (during it, or later), or not at all.
    const started = entriesOfRows(records).find((record) => record.type === 'tool.started' && record.corr === verification.corr)!;
    const ended = entriesOfRows(records).find((record) => record.type === 'command.ended');
    expect(ended === undefined || ended.seq > started.seq).toBe(true);
    expect(report.outcome).toBe('unverified');
    expect(report.findings).toContainEqual(expect.objectContaining({ type: 'verification_stale' }));
  });

  it('G4: a background command that only reads, or that ended before the passing run, leaves it standing', async () => {
    await writeFile(join(workspace.path, 'test', 'a.test.js'), passingSuite);
    const { records, report } = await run(script({ command: 'sleep 1.5; cat test/a.test.js', run_in_background: true }, { command: 'sleep 1.5; echo done > out.txt', run_in_background: true }, 'until [ -f out.txt ]; do sleep 0.05; done', 'node --test'));
    const ends = entriesOfRows(records).filter((record) => record.type === 'command.ended');
    expect(ends).toHaveLength(2);
    const verification = entriesOfRows(records).find((record) => record.type === 'verification.recorded')!;
    expect(ends.every((record) => record.seq < verification.seq)).toBe(true);
    expect(report.outcome).toBe('succeeded');
  });
});
