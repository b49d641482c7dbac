import { copyFile, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

const script = fileURLToPath(new URL('../fixtures/delegation/delegate-and-remember.script.json', import.meta.url));

/**
 * The whole story from the terminal: a scripted session delegates to three children (explorer and reviewer joined by
 * quorum(2), then a tester joined by first-success), proposes a memory from what they found, and a person reviews
 * and promotes that memory with `rein memory`; `rein trace` links each child's work to the call that delegated it.
 */
describe('delegate, remember, review and promote — from the CLI', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let root: string;
  let sessionId: string;
  let run: Awaited<ReturnType<typeof runInProcess>>;
  const cli = (args: string[]) => runInProcess(args, { cwd: root });

  beforeAll(async () => {
    workspace = await makeTempDir('rein-delegate-remember-');
    root = await realpath(workspace.path);
    await writeFile(join(root, 'add.js'), 'export const add = (a, b) => a + b;\n');
    await copyFile(script, join(root, 'script.json'));
    run = await cli(['run', 'Check add.js', '--script', 'script.json']);
    sessionId = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
  });
  afterAll(() => workspace.remove());

  it('the session delegates to three children under two join policies and completes', () => {
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('✓ delegate_task joined (quorum): satisfied, 2 task(s)');
    expect(run.stdout).toContain('✓ delegate_task joined (first-success): satisfied, 1 task(s)');
  });

  it('rein trace links each child to the call that delegated it', async () => {
    const trace = await cli(['trace', sessionId]);
    expect(trace.code).toBe(0);
    for (const [task, role, mode] of [['map', 'explorer', 'summary'], ['review', 'reviewer', 'clean'], ['tests', 'tester', 'summary']]) {
      const line = new RegExp(`↳ task ${task} \\(${role}, ${mode}\\) (root/delegation-\\d+/${task}) #\\d+: completed`).exec(trace.stdout);
      expect(line, `${task} is linked to its delegate_task call`).not.toBeNull();
      expect(trace.stdout).toContain(`[${line![1]}]`);
    }
  });

  it('the memory proposed during the session waits for review, is promoted from the CLI, and is listed as active', async () => {
    const queue = jsonLines((await cli(['memory', 'review', '--json'])).stdout);
    const candidate = queue.find((entry) => entry.content === 'add is defined in add.js and reviewed as correct');
    expect(candidate, JSON.stringify(queue)).toMatchObject({ source: { type: 'tool_output' }, createdBy: 'model' });
    expect(candidate!.candidateId).toContain(sessionId);
    const approve = await cli(['memory', 'approve', candidate!.candidateId, '--json']);
    expect(approve.stderr).toBe('');
    expect(approve.code).toBe(0);
    const [approved] = jsonLines(approve.stdout);
    expect(approved).toMatchObject({ record: { content: candidate!.content, scope: { level: 'repo', key: root } }, decision: { outcome: 'approved', gate: { status: 'mutation-ready' } } });
    const listed = jsonLines((await cli(['memory', 'list', '--json'])).stdout);
    expect(listed.map((record) => [record.recordId, record.status])).toContainEqual([approved!.recordId, 'active']);
    const shown = jsonLines((await cli(['memory', 'show', approved!.recordId, '--json'])).stdout);
    expect(shown[0]!.record.sourceRefs.some((ref: string) => ref.startsWith(`${sessionId}#`))).toBe(true);
  });
});
