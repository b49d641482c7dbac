import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import { openLevelEventStore } from '../../stores/index.js';
import { entriesOfRows, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

/*
 * Issue 30 B6, through the CLI: with `--approve 'bash:*'` the pipelines a real model writes in CI run unasked, and a
 * part that a deny rule names, or whose program rein cannot name, still decides.
 */

const bash = (command: string) => ({ name: 'bash', arguments: { command } });
const script = (...commands: string[]) => ({ turns: [...commands.map((command, index) => ({ text: `Step ${index + 1}.`, toolCalls: [bash(command)] })), { text: 'Done.' }] });

let workspace: { path: string; remove: () => Promise<void> };
let config: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  workspace = await makeTempDir('rein-pipeline-cli-');
  config = await makeTempDir('rein-pipeline-config-');
  await writeFile(join(workspace.path, 'package.json'), '{"name":"p","scripts":{"test":"node --test"}}\n');
  await writeFile(join(workspace.path, 'sum.test.mjs'), "import test from 'node:test';\nimport assert from 'node:assert';\ntest('sums', () => assert.equal(1 + 1, 2));\n");
});
afterEach(async () => {
  await workspace.remove();
  await config.remove();
});
const options = () => ({ cwd: workspace.path, env: { REIN_CONFIG_HOME: config.path } });

const records = async (type: string): Promise<Array<Record<string, any>>> => {
  const store = await openLevelEventStore(join(workspace.path, '.rein'), { readOnly: true });
  try {
    const [stream] = await store.streams();
    // A read-only call's validation and plain allow are folded into its tool.started, itself a fact of a step record.
    return entriesOfRows(await store.read(stream!.stream)).filter((record: RecordEnvelope) => record.type === type).map((record) => record.data as Record<string, any>);
  } finally {
    await store.close();
  }
};
const decisions = () => records('permission.decided');

describe("rein run --approve 'bash:*' judges a pipeline part by part (issue 30 B6)", () => {
  it('the two lines of the report run unasked; the test ran and its summary reached the model', async () => {
    await writeFile(join(workspace.path, 's.json'), JSON.stringify(script('cat package.json | grep test', 'node --test 2>&1 | tail -5')));
    const run = await runInProcess(['run', 'check the tests', '--script', 's.json', '--approve', 'bash:*'], options());
    expect(run.stdout).not.toContain('waiting for approval');
    expect(run.code).toBe(0);
    const decided = await decisions();
    expect(decided).toEqual([
      expect.objectContaining({ target: 'cat package.json | grep test', decision: 'allow', source: 'mode' }),
      // A rule --approve gives is an answer in advance: recorded as pre-approved, with the rule that covered each part.
      expect.objectContaining({ target: 'node --test 2>&1 | tail -5', decision: 'allow', rule: 'allow bash:*', source: 'pre-approved' }),
    ]);
    const settled = await records('tool.settled');
    expect(settled.map((entry) => entry.status)).toEqual(['ok', 'ok']);
    expect(settled[1]!.observation).toMatch(/# fail 0/);
  }, 120_000);

  it('a part a deny rule names denies the line, --yes or not, and nothing of it runs', async () => {
    await writeFile(join(workspace.path, 's.json'), JSON.stringify(script('cat package.json | grep test && rm -f package.json')));
    const run = await runInProcess(['run', 'tidy', '--script', 's.json', '--approve', 'bash:*', '--deny', 'bash:rm *', '--yes'], options());
    expect(run.code).toBe(0);
    expect(existsSync(join(workspace.path, 'package.json'))).toBe(true);
    expect(await decisions()).toEqual([expect.objectContaining({ decision: 'deny', rule: 'deny bash:rm *', source: 'rule' })]);
  }, 120_000);

  it('a part whose program rein cannot name pauses the line; an unknown part is denied while a deny rule is in force', async () => {
    await writeFile(join(workspace.path, 's.json'), JSON.stringify(script('cat package.json | node -e "process.stdin.pipe(process.stdout)"')));
    const paused = await runInProcess(['run', 'copy', '--script', 's.json', '--approve', 'bash:*'], options());
    expect(paused.code).toBe(3);
    expect(paused.stdout).toContain('waiting for approval');
    const [decided] = await decisions();
    expect(decided).toMatchObject({ decision: 'ask' });
    expect(decided!.reason).toMatch(/runs a program rein cannot name/);
    await workspace.remove();
    workspace = await makeTempDir('rein-pipeline-cli-');
    await writeFile(join(workspace.path, 's.json'), JSON.stringify(script('cat s.json | node -e "process.stdin.pipe(process.stdout)"')));
    const denied = await runInProcess(['run', 'copy', '--script', 's.json', '--approve', 'bash:*', '--deny', 'bash:rm *', '--yes'], options());
    expect(denied.code).toBe(0);
    expect(await decisions()).toEqual([expect.objectContaining({ decision: 'deny', rule: 'deny bash:rm *' })]);
  }, 120_000);

  it("a pipeline paused without the rule is answered by rein resume --approve 'bash:*'", async () => {
    await writeFile(join(workspace.path, 's.json'), JSON.stringify(script('node --test 2>&1 | tail -5')));
    const paused = await runInProcess(['run', 'test', '--script', 's.json'], options());
    expect(paused.code).toBe(3);
    const [summary] = jsonLines((await runInProcess(['sessions', '--json'], options())).stdout);
    const resumed = await runInProcess(['resume', summary!.id, '--approve', 'bash:*'], options());
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('→ allow-once');
    expect((await runInProcess(['replay', summary!.id], options())).code).toBe(0);
  }, 120_000);
});
