import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

/* A trial of main 0bd2607: a session paused on an approval in the workspace's own store, answered with `rein approve`
 * (the command its name suggests), got only "only a PostgreSQL store (openPostgresEventStore) queues sessions for
 * workers" — a library function's name and no way on. It says how to answer it here. */
describe('rein approve on a store without a queue', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  const cli = (args: string[]) => runInProcess(args, { cwd: workspace.path, env: { HOME: workspace.path, REIN_STORE: undefined } });
  beforeEach(async () => {
    workspace = await makeTempDir('rein-approve-local-');
  });
  afterEach(async () => {
    await workspace.remove();
  });

  it('is QUEUE_UNSUPPORTED naming the rein resume command that answers the paused session', async () => {
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'a.txt', content: 'x' } }] }, { text: 'Done.' }] }));
    const run = await cli(['run', 'write a file', '--script', 'script.json']);
    expect(run.code).toBe(3);
    const id = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
    const approvalId = /waiting for approval (\S+):/.exec(run.stdout)![1]!;
    const answered = await cli(['approve', id, approvalId]);
    expect(answered.code).toBe(2);
    expect(answered.stderr).toMatch(/^rein: QUEUE_UNSUPPORTED: rein approve answers sessions queued in a PostgreSQL store/);
    expect(answered.stderr).toContain(`rein resume ${id}`);
    expect(answered.stderr).not.toContain('openPostgresEventStore');
  });
});
