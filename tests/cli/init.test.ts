import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadWorkspaceConfig } from '../../src/providers/provider-settings.js';
import { cliPath } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { modelExchange, openAIConversation, type Reply } from '../support/loopback-model.js';
import { startLoopbackServer, type LoopbackServer } from '../support/loopback-server.js';
import { serveOnce } from '../support/serve-once.js';
import { makeTempDir } from '../support/temp-dir.js';
import { scaledTimeout } from '../support/timeouts.js';

const lookingModel = (body: unknown): Reply =>
  openAIConversation(body as Parameters<typeof openAIConversation>[0]).calls.length === 0
    ? { text: 'Looking.', toolCalls: [{ id: 'call_1', name: 'list_dir', arguments: { path: '.' } }] }
    : { text: 'A small project.' };

describe('rein init', () => {
  let home: { path: string; remove: () => Promise<void> };
  let server: LoopbackServer;
  beforeAll(async () => {
    home = await makeTempDir('rein-init-home-');
    server = await startLoopbackServer(modelExchange(lookingModel));
  });
  afterAll(async () => {
    await server?.close();
    await home?.remove();
  });

  it(
    'writes a configuration every command accepts, ignores .rein/, and the three commands it prints run as printed',
    async () => {
      const project = await makeTempDir('rein-init-');
      try {
        await writeFile(join(project.path, '.gitignore'), 'node_modules/');
        const env = { HOME: home.path, NO_COLOR: '1', REIN_BASE_URL: '' };
        const init = await runInProcess(['init', '--provider', 'openai', '--model', 'loopback-1', '--base-url', `${server.url}/v1`], { cwd: project.path, env });
        expect(init.code, init.stderr).toBe(0);
        expect(await loadWorkspaceConfig(project.path)).toMatchObject({ provider: 'openai', model: 'loopback-1', baseUrl: `${server.url}/v1` });
        expect(await readFile(join(project.path, '.gitignore'), 'utf8')).toBe("node_modules/\n# rein's event store (sessions, blobs)\n.rein/\n");
        // A local endpoint needs no key: the next commands are exactly three, and each runs as printed.
        const next = init.stdout.slice(init.stdout.indexOf('next:')).split('\n').slice(1).map((line) => line.trim()).filter(Boolean);
        expect(next).toEqual(['npx rein run "describe this project in three sentences"', 'npx rein sessions', 'npx rein ui']);
        const run = await runInProcess(['run', 'describe this project in three sentences'], { cwd: project.path, env });
        expect(run.code, run.stderr).toBe(0);
        expect(run.stdout).toContain('✓ list_dir .');
        const sessions = await runInProcess(['sessions'], { cwd: project.path, env });
        expect(sessions.stdout).toMatch(/s-\S+\s+completed/);
        const ui = await serveOnce([cliPath, 'ui'], project.path, { ...process.env, ...env });
        expect(ui.page).toMatch(/^200 <!doctype html>/i);
        // Run again, it refuses to replace the file; --force replaces it and leaves one ignore line.
        const again = await runInProcess(['init', '--provider', 'anthropic'], { cwd: project.path, env });
        expect(again.code).toBe(2);
        expect(again.stderr).toContain('rein init --force');
        const forced = await runInProcess(['init', '--provider', 'anthropic', '--force'], { cwd: project.path, env });
        expect(forced.code, forced.stderr).toBe(0);
        expect(forced.stdout).toContain('export ANTHROPIC_API_KEY=…');
        expect(forced.stdout).toContain('.gitignore already ignores .rein/');
        expect(await loadWorkspaceConfig(project.path)).toMatchObject({ provider: 'anthropic', model: 'claude-sonnet-4-5' });
      } finally {
        await project.remove();
      }
    },
    scaledTimeout(120_000),
  );

  it('refuses a provider it does not know and a scripted provider with a model, writing nothing', async () => {
    const project = await makeTempDir('rein-init-bad-');
    try {
      for (const args of [['--provider', 'gemini'], ['--provider', 'scripted', '--model', 'x'], ['--base-url', 'ftp://x']]) {
        const result = await runInProcess(['init', ...args], { cwd: project.path, env: { HOME: home.path } });
        expect(result.code, args.join(' ')).toBe(2);
        expect(result.stderr).toMatch(/^rein: USAGE: /);
      }
      expect(await loadWorkspaceConfig(project.path)).toBeUndefined();
    } finally {
      await project.remove();
    }
  });

  it('run in a folder of a git repository, writes the configuration at its root, where the commands it prints look', async () => {
    const project = await makeTempDir('rein-init-repo-');
    try {
      await mkdir(join(project.path, '.git'));
      const folder = join(project.path, 'packages', 'app');
      await mkdir(folder, { recursive: true });
      const env = { HOME: home.path, NO_COLOR: '1' };
      const init = await runInProcess(['init', '--provider', 'scripted'], { cwd: folder, env });
      expect(init.code, init.stderr).toBe(0);
      expect(init.stdout).toContain(`wrote ${join(project.path, 'rein.config.json')}`);
      expect(init.stderr).toContain(`workspace ${project.path}: the root of the git repository you are in`);
      expect(await loadWorkspaceConfig(folder)).toBeUndefined();
      const run = await runInProcess(['run', 'look around'], { cwd: folder, env });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('✓ list_dir .');
      // --workspace still picks the folder itself.
      const here = await runInProcess(['init', '--provider', 'scripted', '--workspace', '.'], { cwd: folder, env });
      expect(here.code, here.stderr).toBe(0);
      expect(await loadWorkspaceConfig(folder)).toMatchObject({ provider: 'scripted' });
    } finally {
      await project.remove();
    }
  });

  it('sets up the scripted provider with a script, so a first run needs no key and no network', async () => {
    const project = await makeTempDir('rein-init-scripted-');
    try {
      const init = await runInProcess(['init', '--provider', 'scripted'], { cwd: project.path, env: { HOME: home.path } });
      expect(init.code, init.stderr).toBe(0);
      expect(init.stdout).toContain('created .gitignore with .rein/');
      const run = await runInProcess(['run', 'look around'], { cwd: project.path, env: { HOME: home.path, NO_COLOR: '1' } });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('✓ list_dir .');
    } finally {
      await project.remove();
    }
  });
});
