import { readdir, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonLines, runCli } from '../support/cli.js';
import { makeTempDir } from '../support/temp-dir.js';

describe('the store never hides damage', () => {
  it('rein sessions with a truncated MANIFEST (and a lost CURRENT) among the sessions lists the healthy ones and flags the damaged (exit 0)', async () => {
    const workspace = await makeTempDir('rein-damaged-');
    try {
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Hello.' }] }));
      const ids: string[] = [];
      for (const task of ['first', 'second', 'third', 'fourth']) {
        const result = await runCli(['run', task, '--script', 'script.json', '--json'], { cwd: workspace.path });
        expect(result.code).toBe(0);
        ids.push(jsonLines(result.stdout)[0]!.stream as string);
      }
      const [first, second, third, fourth] = ids as [string, string, string, string];
      const streams = join(workspace.path, '.rein', 'streams');
      const manifest = (await readdir(join(streams, second))).find((name) => name.startsWith('MANIFEST-'))!;
      await truncate(join(streams, second, manifest), 10);
      await rm(join(streams, fourth, 'CURRENT'));

      const listed = await runCli(['sessions', '--json'], { cwd: workspace.path });
      expect(listed.code).toBe(0);
      const sessions = jsonLines(listed.stdout);
      expect(sessions.map((session) => [session.id, session.status])).toEqual([[first, 'completed'], [third, 'completed'], [second, 'damaged'], [fourth, 'damaged']]);
      for (const damaged of sessions.slice(2)) expect(damaged.damaged).toMatchObject({ code: 'STORE_CORRUPT_RECORD' });

      const text = await runCli(['sessions'], { cwd: workspace.path });
      expect(text.code).toBe(0);
      expect(text.stdout).toContain(`${second}  damaged: STORE_CORRUPT_RECORD`);
      expect(text.stdout).toContain(`${fourth}  damaged: STORE_CORRUPT_RECORD`);
      expect(text.stdout).toContain(first);

      const shown = await runCli(['show', second], { cwd: workspace.path });
      expect(shown.code).toBe(1);
      expect(shown.stderr).toContain('rein: STORE_CORRUPT_RECORD');
    } finally {
      await workspace.remove();
    }
  });
});
