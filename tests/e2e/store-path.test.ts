import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

describe('a store directory that cannot be created (D23)', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  beforeEach(async () => {
    workspace = await makeTempDir('rein-store-path-');
    await writeFile(join(workspace.path, 'done.json'), JSON.stringify({ turns: [{ text: 'Done.' }] }));
  });
  afterEach(() => workspace.remove());

  it.each([
    ['/proc/rein-no-such-store', 'cannot be made here'],
    ['/dev/null/x', 'not a directory'],
  ])('rein run --store %s fails at once with STORE_IO, not a hang or a raw errno', async (store, why) => {
    const run = await runInProcess(['run', 'x', '--script', 'done.json', '--store', store], { cwd: workspace.path });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^rein: STORE_IO: the store directory .* cannot be created: /);
    expect(run.stderr).toContain(why);
  });
});
