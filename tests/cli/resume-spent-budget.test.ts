import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entriesOfRows, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

// A script of three tool turns under --max-turns 1: the second turn is never started, the session ends budget-exhausted.
const script = {
  turns: [
    { text: 'r1', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] },
    { text: 'r2', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] },
    { text: 'Done.' },
  ],
};

/** `rein resume` of a session that spent its turn budget says which budget, its recorded limit, and how to raise it. */
describe('rein resume of a session that spent its turn budget', () => {
  let workspace: Awaited<ReturnType<typeof makeTempDir>>;
  let env: Record<string, string>;
  let sessionId: string;

  beforeAll(async () => {
    workspace = await makeTempDir('rein-resume-spent-');
    env = { HOME: workspace.path };
    await writeFile(join(workspace.path, 'a.txt'), 'hello\n');
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
    const run = await runInProcess(['run', 'read it', '--script', 'script.json', '--yes', '--max-turns', '1', '--json'], { cwd: workspace.path, env });
    const records = entriesOfRows(jsonLines(run.stdout));
    expect(records.find((record) => record.type === 'session.ended')?.data).toMatchObject({ status: 'budget-exhausted', reason: expect.stringMatching(/^turn budget exhausted/) });
    sessionId = records[0]!.stream as string;
  });
  afterAll(() => workspace?.remove());

  it('names the spent turn budget and its limit, and says how to raise it on resume', async () => {
    const resumed = await runInProcess(['resume', sessionId, '--script', 'script.json', '--yes'], { cwd: workspace.path, env });
    expect(resumed.stdout).toContain(`already budget-exhausted: session ${sessionId} ended; nothing to resume`);
    expect(resumed.stdout).toMatch(new RegExp(`turn budget exhausted[^\\n]*: its turn budget \\(maxTurns 1\\) is spent\\. Raise it and continue the session with rein resume ${sessionId} --max-turns <n>`));
    const json = await runInProcess(['resume', sessionId, '--script', 'script.json', '--yes', '--json'], { cwd: workspace.path, env });
    expect(jsonLines(json.stdout).at(-1)).toMatchObject({ sessionId, alreadyEnded: true, status: 'budget-exhausted', reason: expect.stringMatching(/^turn budget exhausted/) });
  });
});
