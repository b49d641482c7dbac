import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLevelEventStore } from '../../stores/index.js';
import { cliPath, jsonLines, runCli } from '../support/cli.js';
import { makeTempDir } from '../support/temp-dir.js';
import { spawn } from 'node:child_process';

const turns = 400;

/** SIGKILLs per run: 22 in `npm test`, more in the soak (`npm run soak`: CRASH_KILLS=110). */
const targetKills = Math.max(22, Number(process.env.CRASH_KILLS) || 0);

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

/** Run the CLI with --json and SIGKILL it once it has acknowledged `killAfter` records (or let it finish). */
const runAndKill = (args: string[], cwd: string, killAfter: number) =>
  new Promise<{ acknowledged: Array<Record<string, any>>; killed: boolean; code: number | null }>((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let killed = false;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (!killed && stdout.split('\n').length > killAfter) {
        killed = child.kill('SIGKILL');
      }
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ acknowledged: jsonLines(stdout), killed, code }));
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
      const acknowledged = new Map<number, string>();
      while (kills < targetKills && attempts < targetKills * 3) {
        attempts++;
        const killAfter = 5 + Math.floor(Math.random() * 400);
        const args = sessionId ? ['resume', sessionId, '--json', '--mode', 'accept-edits'] : ['run', 'crash test', '--script', 'script.json', '--json', '--max-turns', '1000', '--max-tool-calls', '5000', '--mode', 'accept-edits'];
        const outcome = await runAndKill(args, workspace.path, killAfter);
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
  }, Math.max(240_000, targetKills * 12_000));
});
