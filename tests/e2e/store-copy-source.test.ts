import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';
import { damageStreamLog } from '../support/damage.js';
import { hashTree } from '../support/tree-hash.js';

describe('rein store copy reads its source read-only', () => {
  it('copies the healthy sessions of a LevelDB store with a damaged .log, reports the damaged one, and leaves the source byte-identical', async () => {
    const workspace = await makeTempDir('rein-copy-source-');
    try {
      // Enough recorded text that the damaged session's .log spans several 32 KiB blocks.
      const turns = Array.from({ length: 4 }, (_, index) => ({ text: `part ${index} ${'lorem ipsum '.repeat(1200)}`, toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] }));
      await writeFile(join(workspace.path, 'short.json'), JSON.stringify({ turns: [{ text: 'a healthy one' }] }));
      await writeFile(join(workspace.path, 'long.json'), JSON.stringify({ turns: [...turns, { text: 'Done.' }] }));
      const healthy = jsonLines((await runInProcess(['run', 'healthy', '--script', 'short.json', '--json'], { cwd: workspace.path })).stdout)[0]!.stream as string;
      const made = await runInProcess(['run', 'long', '--script', 'long.json', '--json'], { cwd: workspace.path });
      expect(made.code, made.stderr).toBe(0);
      const damaged = jsonLines(made.stdout)[0]!.stream as string;
      const source = join(workspace.path, '.rein');
      const directory = join(source, 'streams', damaged);
      await damageStreamLog(directory);
      const before = await hashTree(source);

      const copied = await runInProcess(['store', 'copy', '--from', source, '--to', join(workspace.path, 'copy'), '--json'], { cwd: workspace.path });
      expect(copied.code).toBe(1);
      expect(copied.stderr).toContain('STORE_COPY_INCOMPLETE');
      const outcomes = Object.fromEntries(jsonLines(copied.stdout).map((line) => [line.stream, line]));
      expect(outcomes[healthy]).toMatchObject({ outcome: 'copied' });
      expect(outcomes[damaged]).toMatchObject({ outcome: 'failed', error: { code: 'STORE_CORRUPT_RECORD' } });
      // An open in place would have let LevelDB's recovery drop the damaged tail and rewrite the stream's files.
      expect(await hashTree(source)).toEqual(before);
      expect((await runInProcess(['store', 'copy', '--from', source, '--to', join(workspace.path, 'copy')], { cwd: workspace.path })).stdout).toContain(`failed ${damaged}: STORE_CORRUPT_RECORD`);
      expect(await hashTree(source)).toEqual(before);
    } finally {
      await workspace.remove();
    }
  });
});
