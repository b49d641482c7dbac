import { spawn, execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliPath, type CliResult } from '../support/cli.js';
import { makeTempDir } from '../support/temp-dir.js';
import { scaledTimeout } from '../support/timeouts.js';

/** `rein <args>` with a guard: a command still running after the guard is killed (and the test sees the signal). */
const runGuarded = (args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const guard = setTimeout(() => child.kill('SIGKILL'), scaledTimeout(30_000));
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal, stdout, stderr });
    });
  });

/** A workspace holding a FIFO at `file` (what a cloned repository or one command can leave). */
const workspaceWithFifo = async (file: string) => {
  const workspace = await makeTempDir('rein-fifo-');
  await mkdir(join(workspace.path, dirname(file)), { recursive: true });
  execFileSync('mkfifo', [join(workspace.path, file)]);
  await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Done.' }] }));
  return { ...workspace, script: 'script.json', env: { REIN_CONFIG_HOME: join(workspace.path, '.config-home') } };
};

describe('a FIFO where rein reads a workspace file is a typed error, never a hang (trial 6 F7)', () => {
  it('rein.config.json: run, sessions, sandbox, mcp list and plugins list all end with CONFIG_INVALID naming it', async () => {
    const workspace = await workspaceWithFifo('rein.config.json');
    try {
      const env = workspace.env;
      for (const args of [['run', 'hi', '--script', workspace.script], ['sessions'], ['sandbox'], ['mcp', 'list'], ['plugins', 'list']]) {
        const result = await runGuarded(args, workspace.path, env);
        expect(result.signal, `rein ${args.join(' ')} hung`).toBeNull();
        expect(result.code, result.stderr).toBe(2);
        expect(result.stderr).toMatch(/rein: CONFIG_INVALID: \S*rein\.config\.json is not a regular file \(a FIFO\)/);
      }
    } finally {
      await workspace.remove();
    }
  }, 240_000);

  it('.mcp.json: run and mcp list end with CONFIG_INVALID naming it', async () => {
    const workspace = await workspaceWithFifo('.mcp.json');
    try {
      const env = workspace.env;
      for (const args of [['run', 'hi', '--script', workspace.script], ['mcp', 'list']]) {
        const result = await runGuarded(args, workspace.path, env);
        expect(result.signal, `rein ${args.join(' ')} hung`).toBeNull();
        expect(result.code, result.stderr).toBe(2);
        expect(result.stderr).toContain('.mcp.json is not a regular file (a FIFO)');
      }
    } finally {
      await workspace.remove();
    }
  }, 120_000);

  it('a SKILL.md FIFO is a skill problem (skills list) and the run goes on; a plugin manifest FIFO is a failed plugin', async () => {
    const workspace = await workspaceWithFifo('.agents/skills/x/SKILL.md');
    try {
      await mkdir(join(workspace.path, '.rein-plugins', 'p'), { recursive: true });
      execFileSync('mkfifo', [join(workspace.path, '.rein-plugins', 'p', 'rein-plugin.json')]);
      const env = workspace.env;
      const skills = await runGuarded(['skills', 'list'], workspace.path, env);
      expect(skills.signal, 'rein skills list hung').toBeNull();
      expect(skills.stdout + skills.stderr).toContain('SKILL.md is not a regular file (a FIFO)');
      const plugins = await runGuarded(['plugins', 'list'], workspace.path, env);
      expect(plugins.signal, 'rein plugins list hung').toBeNull();
      expect(plugins.stdout).toContain('PLUGIN_MANIFEST_INVALID');
      expect(plugins.stdout).toContain('rein-plugin.json is not a regular file (a FIFO)');
      const run = await runGuarded(['run', 'hi', '--script', workspace.script], workspace.path, env);
      expect(run.signal, 'rein run hung').toBeNull();
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('Done.');
    } finally {
      await workspace.remove();
    }
  }, 180_000);
  it('a script the config names that is a FIFO is SCRIPT_INVALID naming it', async () => {
    const workspace = await workspaceWithFifo('fifo-script.json');
    try {
      await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ provider: 'scripted', script: 'fifo-script.json' }));
      const result = await runGuarded(['run', 'hi'], workspace.path, workspace.env);
      expect(result.signal, 'rein run hung').toBeNull();
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain('fifo-script.json is not a regular file (a FIFO)');
    } finally {
      await workspace.remove();
    }
  }, 60_000);
});
