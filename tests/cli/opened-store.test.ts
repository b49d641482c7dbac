import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noteOpenedStore, openedStoreName } from '../../src/cli/opened-store.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

describe('a session id the store does not hold', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  beforeAll(async () => {
    workspace = await makeTempDir('rein-opened-store-');
  });
  afterAll(() => workspace.remove());

  it('names the store rein looked in, so a command run in the wrong folder says where it looked', async () => {
    for (const args of [['show', 's-nowhere'], ['replay', 's-nowhere'], ['resume', 's-nowhere', '--script', 'none.json']]) {
      const result = await runInProcess(args, { cwd: workspace.path, env: { HOME: workspace.path } });
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr).toBe(`rein: SESSION_NOT_FOUND: no session s-nowhere in this store (${join(workspace.path, '.rein')}; --workspace <dir> or --store <dir|url> reads another)\n`);
    }
  });

  it('never repeats a PostgreSQL URL, which may hold a password', () => {
    noteOpenedStore('postgres://rein:secret@127.0.0.1/rein');
    expect(openedStoreName()).toBe('a PostgreSQL store');
    noteOpenedStore(undefined);
    expect(openedStoreName()).toBeUndefined();
  });
});
