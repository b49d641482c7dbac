import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliPath, libraryCliPath } from '../support/cli.js';
import { packageOfUrl, readModuleLog, writeResolveHook } from '../support/module-census.js';
import { makeTempDir } from '../support/temp-dir.js';

/*
 * What a short command loads decides how fast it starts (docs/cli.md: *Start-up*). These tests record every module
 * Node resolves while the CLI runs (a resolve hook appends each URL to a file: tests/support/module-census.ts) and
 * check that `rein --help`, `rein sessions` and `rein show` load only what they use: a command file that imports the
 * runtime at the top (see the pattern in src/cli/program.ts) fails here instead of quietly slowing every command down.
 * The time itself is measured by `scripts/bench/cli-startup.bench.ts`, never asserted.
 */

let directory: { path: string; remove: () => Promise<void> };
let preload: string;

beforeAll(async () => {
  directory = await makeTempDir('rein-startup-');
  const hook = await writeResolveHook(directory.path);
  preload = join(directory.path, 'preload.mjs');
  await writeFile(preload, `import { register } from 'node:module';\nregister(${JSON.stringify(hook)}, { data: { file: process.env.REIN_MODULE_LOG } });\n`);
});

afterAll(async () => {
  await directory.remove();
});

/** The packages (by name) and rein modules (by path under dist/) one CLI run loads. */
const loadedBy = async (entry: string, args: readonly string[]): Promise<{ packages: Set<string>; rein: string[]; status: number | null }> => {
  const log = join(directory.path, `modules-${Math.random().toString(36).slice(2)}.log`);
  await writeFile(log, '');
  const result = spawnSync(process.execPath, ['--import', pathToFileURL(preload).href, entry, ...args], { cwd: directory.path, env: { ...process.env, REIN_MODULE_LOG: log }, encoding: 'utf8' });
  const urls = await readModuleLog(log);
  const packages = new Set(urls.flatMap((url) => packageOfUrl(url) ?? []));
  const rein = urls.flatMap((url) => (!url.includes('node_modules') && url.includes('/dist/') ? [url.slice(url.indexOf('/dist/') + 6)] : []));
  return { packages, rein, status: result.status };
};

/** A CommonJS preload file holding `source`. */
const writeProbe = async (source: string): Promise<string> => {
  const path = join(directory.path, `probe-${Math.random().toString(36).slice(2)}.cjs`);
  await writeFile(path, source);
  return path;
};

const heavy = ['zod', 'rxjs', 'xstate', 'hash-wasm', 'gpt-tokenizer', 'ws', '@statelyai/inspect', 'fast-check'];

describe('CLI start-up loads only what the command uses', () => {
  it('rein --help (unbundled) loads commander and the command declarations, nothing of the runtime', async () => {
    const { packages, rein, status } = await loadedBy(libraryCliPath, ['--help']);
    expect(status).toBe(0);
    expect([...packages]).toEqual(['commander']);
    expect(rein.filter((path) => !path.startsWith('src/cli/'))).toEqual([]);
    expect(rein.filter((path) => path.endsWith('.action.js'))).toEqual([]);
  });

  it('rein sessions and rein show load the store, not the runtime (no zod, rxjs, xstate, hash-wasm)', async () => {
    for (const args of [['sessions'], ['show', 'no-such-session']]) {
      const { packages, rein } = await loadedBy(libraryCliPath, args);
      for (const name of heavy) expect(packages.has(name), `${args[0]} loaded ${name}`).toBe(false);
      expect(rein.some((path) => path.startsWith('machines/')), `${args[0]} loaded a machine`).toBe(false);
    }
  });

  it('the bundled rein sessions and rein show load no package from node_modules and neither node:crypto nor node:child_process', async () => {
    for (const args of [['sessions'], ['show', 'no-such-session']]) {
      const { packages } = await loadedBy(cliPath, args);
      expect([...packages], args[0]).toEqual([]);
      const builtins = join(directory.path, `builtins-${args[0]}.txt`);
      const probe = `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(builtins)}, process.moduleLoadList.join('\\n')));`;
      spawnSync(process.execPath, ['--require', await writeProbe(probe), cliPath, ...args], { cwd: directory.path, encoding: 'utf8' });
      const loaded = (await readFile(builtins, 'utf8')).split('\n');
      expect(loaded, args[0]).not.toContain('NativeModule crypto');
      expect(loaded, args[0]).not.toContain('NativeModule child_process');
    }
  });

  it('the bundled rein binary answers --help loading no package but its own chunks', async () => {
    const { packages, status } = await loadedBy(cliPath, ['--help']);
    expect(status).toBe(0);
    expect([...packages]).toEqual([]);
  });
});
