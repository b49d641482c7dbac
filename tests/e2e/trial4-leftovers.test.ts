import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonLines, runCli } from '../support/cli.js';
import { makeTempDir } from '../support/temp-dir.js';

/** The fourth trial's leftovers, each through the CLI as the trial met it. */
describe('trial 4 leftovers', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  const cli = (args: string[]) => runCli(args, { cwd: workspace.path, env: { HOME: workspace.path } });
  const script = (name: string, value: unknown) => writeFile(join(workspace.path, name), JSON.stringify(value));
  beforeEach(async () => {
    workspace = await makeTempDir('rein-trial4-');
    await writeFile(join(workspace.path, 'a.txt'), 'x\n');
  });
  afterEach(() => workspace.remove());

  it('with a full visible set, tool_search makes its top hit visible, and the model can call it next turn (D19)', async () => {
    const grep = { name: 'grep', arguments: { pattern: 'x' } };
    await script('vis.json', { turns: [{ text: 'One.', toolCalls: [grep] }, { text: 'Two.', toolCalls: [{ name: 'tool_search', arguments: { query: 'grep search file contents' } }] }, { text: 'Three.', toolCalls: [grep] }, { text: 'Done.' }] });
    for (const limit of ['2', '3']) {
      const run = await cli(['run', 'vis', '--script', 'vis.json', '--visible-limit', limit, '--json']);
      expect(run.code, run.stderr).toBe(0);
      const records = jsonLines(run.stdout);
      const search = records.find((record) => record.type === 'tool.settled' && record.data.name === 'tool_search')!.data as { value: { hits: string[] } };
      expect(search.value.hits[0]).toBe('grep');
      const greps = records.filter((record) => record.type === 'tool.settled' && record.data.name === 'grep').map((record) => record.data);
      // Deferred before the search; visible and run after it.
      expect(greps.map((data) => data.status)).toEqual(['error', 'ok']);
      const diffs = records.filter((record) => record.type === 'capability.diff').map((record) => record.data as { added: Array<{ name: string; reason: string }>; inputs: { searchHits: string[] } });
      const afterSearch = diffs[diffs.length - 1]!;
      expect(afterSearch.added).toContainEqual(expect.objectContaining({ name: 'grep', reason: 'tool_search' }));
      expect(afterSearch.inputs.searchHits[0]).toBe('grep');
    }
  });
});
