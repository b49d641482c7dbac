import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entriesOfRows, jsonLines, startCli } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

/** Start `rein run --json` on the slow script and stop it with `signal` once its command started. */
const cutShort = async (cwd: string, signal: NodeJS.Signals): Promise<{ sessionId: string; code: number | null }> => {
  const child = startCli(['run', 'wait a while', '--script', 'slow.json', '--yes', '--json'], { cwd });
  let out = '';
  const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const started = await new Promise<Record<string, any>>((resolve) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const record = entriesOfRows(jsonLines(out)).find((line) => line.type === 'tool.started');
      if (record) resolve(record);
    });
  });
  child.kill(signal);
  return { sessionId: started.stream as string, code: await closed };
};

const statusOf = async (cwd: string, sessionId: string): Promise<unknown> => jsonLines((await runInProcess(['sessions', '--json'], { cwd })).stdout).find((line) => line.id === sessionId)?.status;

describe('the status of a session paused on an in-doubt rerun', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  beforeAll(async () => {
    workspace = await makeTempDir('rein-status-');
    await writeFile(join(workspace.path, 'slow.json'), JSON.stringify({ turns: [{ text: 'Waiting.', toolCalls: [{ name: 'bash', arguments: { command: 'sleep 3' } }] }, { text: 'Done.' }] }));
  });
  afterAll(() => workspace.remove());

  it('is awaiting-confirmation, not active, after a killed run is resumed without --yes (listing, --status, trace)', async () => {
    const { sessionId, code } = await cutShort(workspace.path, 'SIGKILL');
    expect(code).toBeNull();
    const resumed = await runInProcess(['resume', sessionId], { cwd: workspace.path });
    expect(resumed.code).toBe(3);
    expect(resumed.stdout).toContain('waiting for confirmation');
    expect(await statusOf(workspace.path, sessionId)).toBe('awaiting-confirmation');
    const filtered = jsonLines((await runInProcess(['sessions', '--json', '--status', 'awaiting-confirmation'], { cwd: workspace.path })).stdout);
    expect(filtered.map((line) => line.id)).toContain(sessionId);
    expect(jsonLines((await runInProcess(['sessions', '--json', '--status', 'active'], { cwd: workspace.path })).stdout).map((line) => line.id)).not.toContain(sessionId);
    const trace = jsonLines((await runInProcess(['trace', sessionId, '--json'], { cwd: workspace.path })).stdout)[0];
    expect(trace).toMatchObject({ outcome: 'awaiting-confirmation' });
    // Asked again, it still waits; confirmed, it reruns and completes.
    expect((await runInProcess(['resume', sessionId], { cwd: workspace.path })).code).toBe(3);
    expect(await statusOf(workspace.path, sessionId)).toBe('awaiting-confirmation');
    expect((await runInProcess(['resume', sessionId, '--yes'], { cwd: workspace.path })).code).toBe(0);
    expect(await statusOf(workspace.path, sessionId)).toBe('completed');
  });

  it('turns an interrupted session (Ctrl-C) awaiting-confirmation, not active, when a resume pauses on the rerun', async () => {
    const { sessionId, code } = await cutShort(workspace.path, 'SIGINT');
    expect(code).toBe(130);
    expect(await statusOf(workspace.path, sessionId)).toBe('interrupted');
    expect((await runInProcess(['resume', sessionId], { cwd: workspace.path })).code).toBe(3);
    expect(await statusOf(workspace.path, sessionId)).toBe('awaiting-confirmation');
  });
});

describe('rein sessions --status', () => {
  it('refuses a status that does not exist (USAGE, listing the statuses) and says when none has the one asked for', async () => {
    const workspace = await makeTempDir('rein-status-filter-');
    try {
      expect((await runInProcess(['sessions', '--status', 'completed'], { cwd: workspace.path })).stdout).toBe('no sessions\n');
      await writeFile(join(workspace.path, 'done.json'), JSON.stringify({ turns: [{ text: 'Done.' }] }));
      expect((await runInProcess(['run', 'finish', '--script', 'done.json'], { cwd: workspace.path })).code).toBe(0);
      const bogus = await runInProcess(['sessions', '--status', 'bogus'], { cwd: workspace.path });
      expect(bogus.code).toBe(2);
      expect(bogus.stderr).toContain('USAGE');
      for (const status of ['completed', 'awaiting-confirmation', 'queued', 'damaged']) expect(bogus.stderr).toContain(status);
      const none = await runInProcess(['sessions', '--status', 'failed'], { cwd: workspace.path });
      expect(none.code).toBe(0);
      expect(none.stdout).toBe('no sessions with status failed\n');
      expect((await runInProcess(['sessions', '--status', 'completed'], { cwd: workspace.path })).stdout).toMatch(/completed/);
    } finally {
      await workspace.remove();
    }
  });
});
