import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { entriesOfRows, jsonLines, startCli } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';
import { scaledTimeout } from '../support/timeouts.js';
import { describePostgres, freshSchemaUrl } from '../support/postgres.js';

const exists = (path: string) => access(path).then(
  () => true,
  () => false,
);

/** Poll for `path` while `running()` (the deadline is a guard against a hang, never a timing assertion). */
const waitForFile = async (path: string, what: string, running: () => boolean): Promise<void> => {
  const deadline = Date.now() + scaledTimeout(60_000);
  while (!(await exists(path))) {
    if (!running()) throw new Error(`the run ended before ${what}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
};

/** A live `rein run` whose bash command waits in one process, `rein resume` of it in others (`store`: `--store` flags). */
const refusedResume = async (store: readonly string[]): Promise<void> => {
  const workspace = await makeTempDir('rein-resume-refused-');
  try {
    // The command says it started, then waits for the test's `go` file before it writes: nothing depends on timing.
    const command = 'echo started > started.txt; until test -f go; do sleep 0.05; done; echo slept >> log2.txt';
    await writeFile(join(workspace.path, 's.json'), JSON.stringify({ turns: [{ text: 's', toolCalls: [{ name: 'bash', arguments: { command } }] }, { text: 'Done.' }] }));
    const run = startCli(['run', 'sleeper', '--script', 's.json', '--yes', '--json', ...store], { cwd: workspace.path });
    let stdout = '';
    let stderr = '';
    run.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    run.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let running = true;
    const exited = new Promise<number | null>((resolve) => run.on('close', (code) => ((running = false), resolve(code))));
    await waitForFile(join(workspace.path, 'started.txt'), 'the bash command started', () => running);
    const sessionId = String(jsonLines(stdout)[0]?.stream);

    for (const args of [['resume', sessionId], ['resume', sessionId, '--yes']]) {
      const refused = await runInProcess([...args, ...store], { cwd: workspace.path });
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.stderr).toContain('STORE_LOCKED');
      expect(refused.stdout).not.toContain('in doubt');
    }

    await writeFile(join(workspace.path, 'go'), '');
    expect(await exited, stderr).toBe(0);
    expect(await readFile(join(workspace.path, 'log2.txt'), 'utf8')).toBe('slept\n');
    const records = jsonLines((await runInProcess(['show', sessionId, '--json', ...store], { cwd: workspace.path })).stdout);
    const settled = entriesOfRows(records).filter((record) => record.type === 'tool.settled');
    expect(settled.map((record) => record.data.status)).toEqual(['ok']);
    expect(entriesOfRows(records).some((record) => record.type === 'session.resumed' || record.type === 'effect.resolved')).toBe(false);
    expect(entriesOfRows(records).at(-1)).toMatchObject({ type: 'session.ended', data: { status: 'completed' } });
  } finally {
    await workspace.remove();
  }
};

describe('rein resume of a session another process is running', () => {
  it('is refused with STORE_LOCKED before it checks anything: the live command keeps running and finishes (LevelDB)', () => refusedResume([]));
});

describePostgres('rein resume of a session another process is running (PostgreSQL)', () => {
  it('is refused with STORE_LOCKED before it checks anything: the live command keeps running and finishes', () => refusedResume(['--store', freshSchemaUrl()]));
});
