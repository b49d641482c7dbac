import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLevelEventStore } from '../../stores/index.js';
import { cliPath, jsonLines, runCli } from '../support/cli.js';
import { makeTempDir } from '../support/temp-dir.js';
import { scaledTimeout } from '../support/timeouts.js';
import { spawn } from 'node:child_process';

/** SIGKILLs per run: 22 in `npm test`, more in the soak (`npm run soak`: CRASH_KILLS=110). */
const targetKills = Math.max(22, Number(process.env.CRASH_KILLS) || 0);

/** Each run is killed after it has added 5-104 records past the log's head (about 13 records make a turn). */
const killWindow = { least: 5, span: 100 };

/**
 * Turns enough that the kills never finish the session: at most 104 records (8 turns) per kill, 12 turns per kill here.
 * (It was 400 turns, of which the kills used ~40 — each `resume --json` first prints the whole log, and the kill came
 * while it printed — and the last resume ran the other ~360 unkilled.)
 */
const turns = targetKills * 12;

/** A long session: every turn writes a file and reads another, so kills land mid-tool, mid-model and mid-append. */
const longScript = () => ({
  turns: [
    ...Array.from({ length: turns }, (_, index) => ({
      text: `step ${index}`,
      toolCalls: [
        { name: 'write', arguments: { path: `out/f${index % 7}.txt`, content: `turn ${index}\n` } },
        { name: 'read', arguments: { path: `out/f${(index + 3) % 7}.txt` } },
        { name: 'list_dir', arguments: { path: 'out' } },
      ],
    })),
    { text: 'All done.' },
  ],
});

/**
 * Run the CLI with --json and SIGKILL it once it has acknowledged `killAfter` records past `head` (a resume prints the
 * log it resumes first: a kill counted from its first line landed while it printed, before it did any work), or let it
 * finish.
 */
const runAndKill = (args: string[], cwd: string, head: number, killAfter: number) =>
  new Promise<{ acknowledged: Array<Record<string, any>>; killed: boolean; code: number | null }>((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let torn = '';
    let added = 0;
    let killed = false;
    const acknowledged: Array<Record<string, any>> = [];
    child.stdout.on('data', (chunk: Buffer) => {
      const lines = (torn + chunk.toString()).split('\n');
      torn = lines.pop()!;
      for (const record of jsonLines(lines.join('\n'))) {
        acknowledged.push(record);
        if (typeof record.seq === 'number' && record.seq > head) added++;
      }
      if (!killed && added >= killAfter) killed = child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ acknowledged: [...acknowledged, ...jsonLines(torn)], killed, code }));
  });

describe('crash safety', () => {
  it(`survives ${targetKills - 2}+ SIGKILLs: gap-free prefix, nothing acknowledged lost, resume completes, replay verifies`, async () => {
    const workspace = await makeTempDir('rein-crash-');
    try {
      await mkdir(join(workspace.path, 'out'));
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify(longScript()));
      let sessionId: string | undefined;
      let kills = 0;
      let attempts = 0;
      let head = 0;
      const acknowledged = new Map<number, string>();
      while (kills < targetKills && attempts < targetKills * 3) {
        attempts++;
        const killAfter = killWindow.least + Math.floor(Math.random() * killWindow.span);
        const args = sessionId ? ['resume', sessionId, '--json', '--mode', 'accept-edits'] : ['run', 'crash test', '--script', 'script.json', '--json', '--max-turns', '1000', '--max-tool-calls', '5000', '--mode', 'accept-edits'];
        const outcome = await runAndKill(args, workspace.path, head, killAfter);
        for (const record of outcome.acknowledged) {
          if (typeof record.seq === 'number' && typeof record.id === 'string') acknowledged.set(record.seq, record.id);
          sessionId ??= typeof record.stream === 'string' ? record.stream : undefined;
        }
        if (!outcome.killed) break;
        kills++;
        expect(sessionId).toBeDefined();
        const store = await openLevelEventStore(join(workspace.path, '.rein'));
        try {
          const records = await store.read(sessionId!);
          expect(records.map((record) => record.seq)).toEqual(records.map((_, index) => index + 1));
          // The next run is killed only after it has added records past this head: every kill lands mid-work.
          expect(records.length).toBeGreaterThan(head);
          head = records.length;
          const byId = new Map(records.map((record) => [record.seq, record.id]));
          for (const [seq, id] of acknowledged) expect(byId.get(seq)).toBe(id);
        } finally {
          await store.close();
        }
      }
      expect(kills).toBeGreaterThanOrEqual(targetKills - 2);
      const finished = await runCli(['resume', sessionId!, '--mode', 'accept-edits'], { cwd: workspace.path });
      expect(finished.stderr).toBe('');
      expect(finished.stdout).toMatch(/completed/);
      expect(finished.code).toBe(0);
      const replay = await runCli(['replay', sessionId!], { cwd: workspace.path });
      expect(replay.code).toBe(0);
      expect(replay.stdout).toMatch(/^verified \d+ records/);
      const sessions = jsonLines((await runCli(['sessions', '--json'], { cwd: workspace.path })).stdout);
      expect(sessions).toEqual([expect.objectContaining({ id: sessionId, status: 'completed' })]);
    } finally {
      await workspace.remove();
    }
  }, scaledTimeout(Math.max(240_000, targetKills * 12_000)));
});
