import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inconclusiveReason, ranNoTest, verificationOf } from '../../src/effects/verification.js';
import { makeTempDir, propertyRuns } from '../support/temp-dir.js';

/** What `node --test` really prints (both reporters) for a run of `args` over one failing test. */
const nodeTest = async (args: readonly string[], reporter: 'tap' | 'spec' | 'dot'): Promise<{ output: string; status: number | null }> => {
  const dir = await makeTempDir('rein-no-test-');
  try {
    await mkdir(join(dir.path, 'test'));
    await writeFile(join(dir.path, 'test', 'a.test.js'), "const test = require('node:test');\nconst assert = require('node:assert');\ntest('fails', () => { assert.strictEqual(1, 2); });\ntest('passes', () => {});\n");
    const run = spawnSync(process.execPath, ['--test', `--test-reporter=${reporter}`, ...args], { cwd: dir.path, encoding: 'utf8' });
    return { output: `${run.stdout}\n${run.stderr}`, status: run.status };
  } finally {
    await dir.remove();
  }
};

describe('an exit 0 from a run that ran no test verifies nothing', () => {
  it.each(['tap', 'spec'] as const)('node --test (%s reporter): a name filter that matches nothing is "no test ran"; a filter that runs a passing test is not', async (reporter) => {
    const none = await nodeTest(['--test-name-pattern=zzz_nothing'], reporter);
    expect(none.status).toBe(0);
    expect(ranNoTest(none.output)).toBe(true);
    const one = await nodeTest(['--test-name-pattern=passes'], reporter);
    expect(one.status).toBe(0);
    expect(ranNoTest(one.output)).toBe(false);
  });

  it.each([
    ['Tests:       1 skipped, 1 total\nTest Suites: 1 skipped, 0 of 1 total', true],
    ['No tests found, exiting with code 0', true],
    ['Tests:       3 passed, 3 total', false],
    [' Test Files  1 skipped (1)\n      Tests  2 skipped (2)', true],
    ['No test files found, exiting with code 0', true],
    [' Test Files  1 passed (1)\n      Tests  3 passed (3)', false],
    ['\n  0 passing (2ms)\n', true],
    ['\n  4 passing (9ms)\n  1 pending\n', false],
    ['==================== 3 skipped in 0.02s ====================', true],
    ['=============== 1 passed, 2 skipped in 0.03s ===============', false],
    ['ok  \texample.com/a\t0.002s [no tests to run]\nok  \texample.com/b\t0.002s [no tests to run]', true],
    ['ok  \texample.com/a\t0.002s [no tests to run]\nok  \texample.com/b\t0.013s', false],
    ['running 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 4 filtered out; finished in 0.00s', true],
    ['test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n\ntest result: ok. 0 passed; 0 failed', false],
    ['all good', false],
  ])('%j → %s', (output, expected) => {
    expect(ranNoTest(output)).toBe(expected);
  });

  it('text with no runner summary in it never reads as "no test ran" (the exit code is then all there is)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }).filter((text) => !/pass|Tests|passing|passed|no tests?|test result/i.test(text)), (text) => {
        expect(ranNoTest(text)).toBe(false);
      }),
      { numRuns: propertyRuns(200) },
    );
  });

  it('a run that selects tests by name and shows no summary (a dot reporter, output sent elsewhere) is inconclusive (trial 6 F4)', async () => {
    const none = await nodeTest(['--test-name-pattern=zzz_nothing'], 'dot');
    expect(none.status).toBe(0);
    const command = 'node --test --test-reporter=dot --test-name-pattern=zzz_nothing';
    const call = { name: 'bash', arguments: { command }, callId: 'root:e1.0' };
    const verification = verificationOf(call, 'root:e2', { status: 'ok', observation: JSON.stringify({ stdout: none.output, stderr: '' }), execution: { command, exitCode: 0, durationMs: 40 } }, { command });
    expect(verification).toMatchObject({ status: 'inconclusive', exitCode: 0 });
    expect(verification!.summary).toContain('selects tests by name');
    expect(inconclusiveReason('node --test --test-reporter=tap --test-reporter-destination=/dev/null --test-name-pattern=zzz', '')).toBeDefined();
    // Without a filter a reporter that prints no count cannot show a test ran either (trial 7 G3); with a summary
    // counting a pass the filter ran a test.
    expect(inconclusiveReason('node --test --test-reporter=dot', '..')).toMatch(/shows no runner summary/);
    const one = await nodeTest(['--test-name-pattern=passes'], 'tap');
    expect(inconclusiveReason('node --test --test-name-pattern=passes', one.output)).toBeUndefined();
  });

  it('the verification of such a run is inconclusive, not passed; a failing or passing one keeps its status', async () => {
    const none = await nodeTest(['--test-name-pattern=zzz_nothing'], 'tap');
    const call = { name: 'bash', arguments: { command: 'node --test --test-name-pattern=zzz_nothing' }, callId: 'root:e1.0' };
    const execution = { command: call.arguments.command, exitCode: 0, durationMs: 40 };
    const verification = verificationOf(call, 'root:e2', { status: 'ok', observation: JSON.stringify({ stdout: none.output, stderr: '' }), execution }, { command: call.arguments.command });
    expect(verification).toMatchObject({ status: 'inconclusive', exitCode: 0 });
    expect(verification!.summary).toContain('no test ran');
    const all = await nodeTest([], 'tap');
    expect(all.status).toBe(1);
    expect(verificationOf(call, 'root:e2', { status: 'ok', observation: JSON.stringify({ stdout: all.output, stderr: '' }), execution: { ...execution, exitCode: 1 } }, {})).toMatchObject({ status: 'failed' });
  });
});
