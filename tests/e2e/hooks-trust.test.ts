import { existsSync } from 'node:fs';
import { readFile, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

/**
 * The trial's E8: a repository's `rein.config.json` hooks ran on a plain `rein run` with an empty trust store, outside
 * the sandbox, with the user's environment. They now wait for trust, like the file's MCP servers.
 */
describe('command hooks of rein.config.json run only once trusted', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let outside: { path: string; remove: () => Promise<void> };
  let config: { path: string; remove: () => Promise<void> };
  let marks: string;
  const cli = (args: string[]) => runInProcess(args, { cwd: workspace.path, env: { REIN_CONFIG_HOME: config.path, HOME: config.path } });
  const hooksOf = (tag: string) => ({
    SessionStart: [{ hooks: [{ type: 'command', command: `echo "${tag} SessionStart $(id -u)" >> ${marks}`, sandbox: false }] }],
    PreToolUse: [{ matcher: 'bash', hooks: [{ type: 'command', command: `echo "${tag} PreToolUse" >> ${marks}`, sandbox: false }] }],
    Stop: [{ hooks: [{ type: 'command', command: `echo "${tag} Stop" >> ${marks}`, sandbox: false }] }],
  });
  const ran = async (): Promise<string[]> => (existsSync(marks) ? (await readFile(marks, 'utf8')).trim().split('\n') : []);

  beforeEach(async () => {
    workspace = await makeTempDir('rein-hooks-trust-');
    outside = await makeTempDir('rein-hooks-outside-');
    config = await makeTempDir('rein-hooks-config-');
    marks = join(outside.path, 'PWNED_HOOK');
    await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ hooks: hooksOf('v1') }));
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'x', toolCalls: [{ name: 'bash', arguments: { command: 'echo hi' } }] }, { text: 'Done.' }] }));
  });
  afterEach(async () => {
    await workspace.remove();
    await outside.remove();
    await config.remove();
  });

  it('a plain run with an empty trust store runs none of them, says so on stderr, and the session goes on', async () => {
    const run = await cli(['run', 'hi', '--script', 'script.json', '--approve', 'bash']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('completed');
    expect(run.stderr).toContain('rein: the command hooks of rein.config.json are not trusted: its 3 hook(s) (PreToolUse, Stop, SessionStart) were not loaded (trust them with `rein hooks trust` or --yes)');
    expect(await ran()).toEqual([]);
    expect(existsSync(join(config.path, 'trust.json'))).toBe(false);
    // rein plugins list shows them, not loaded, with why.
    const listed = jsonLines((await cli(['plugins', 'list', '--json'])).stdout).filter((row) => row.type === 'hook');
    expect(listed.map((row) => [row.id, row.state, row.error?.code])).toEqual([
      ['command:PreToolUse#1', 'untrusted', 'HOOK_UNTRUSTED'],
      ['command:Stop#1', 'untrusted', 'HOOK_UNTRUSTED'],
      ['command:SessionStart#1', 'untrusted', 'HOOK_UNTRUSTED'],
    ]);
    expect(await ran()).toEqual([]);
  });

  it('rein hooks trust records the section\'s digest; then they run; a changed section waits again until --yes trusts it', async () => {
    const trusted = await cli(['hooks', 'trust']);
    expect(trusted.code).toBe(0);
    expect(trusted.stdout).toMatch(/^trusted the command hooks of rein\.config\.json \(sha256:[0-9a-f]{12}…\): command:PreToolUse#1, command:Stop#1, command:SessionStart#1\n$/);
    const store = JSON.parse(await readFile(join(config.path, 'trust.json'), 'utf8')) as { entries: Array<Record<string, string>> };
    expect(store.entries).toEqual([expect.objectContaining({ kind: 'hooks', path: join(await realpath(workspace.path), 'rein.config.json'), digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) })]);
    expect(jsonLines((await cli(['hooks', 'trust', '--json'])).stdout)).toEqual([expect.objectContaining({ file: 'rein.config.json', was: 'trusted' })]);

    const first = await cli(['run', 'hi', '--script', 'script.json', '--approve', 'bash']);
    expect(first.code).toBe(0);
    expect(first.stderr).not.toContain('command hooks');
    expect(await ran()).toEqual([`v1 SessionStart ${process.getuid!()}`, 'v1 PreToolUse', 'v1 Stop']);

    // Another setting of the file does not touch the trust; a changed hooks section does.
    await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ sandbox: { mode: 'auto' }, hooks: hooksOf('v1') }));
    await cli(['run', 'hi', '--script', 'script.json', '--approve', 'bash']);
    expect(await ran()).toHaveLength(6);
    await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ hooks: hooksOf('v2') }));
    // Fail closed (trial 7 G15): the hooks trusted before would not guard the session, and nobody can be asked.
    const changed = await cli(['run', 'hi', '--script', 'script.json', '--approve', 'bash']);
    expect(changed.code, changed.stderr).toBe(2);
    expect(changed.stderr).toContain('rein: HOOK_UNTRUSTED: the command hooks of rein.config.json changed since they were trusted: its 3 hook(s) (PreToolUse, Stop, SessionStart) were not loaded; the hooks you trusted before would not guard this session either, so it does not start');
    expect(changed.stdout).not.toContain('session s-');
    // Said once (issue 30 E): the refusal, not a warning about the same hooks before it.
    expect(changed.stderr.match(/changed since they were trusted/g)).toHaveLength(1);
    expect(await ran()).toHaveLength(6);
    const listed = jsonLines((await cli(['plugins', 'list', '--json'])).stdout).filter((row) => row.type === 'hook');
    expect(listed.map((row) => row.state)).toEqual(['untrusted (changed)', 'untrusted (changed)', 'untrusted (changed)']);

    const yes = await cli(['run', 'hi', '--script', 'script.json', '--yes']);
    expect(yes.code).toBe(0);
    expect(yes.stderr).toMatch(/rein: trusted the command hooks of rein\.config\.json \(sha256:[0-9a-f]{12}…\) because of --yes/);
    expect((await ran()).slice(6)).toEqual([`v2 SessionStart ${process.getuid!()}`, 'v2 PreToolUse', 'v2 Stop']);
    const listedAfter = jsonLines((await cli(['plugins', 'list', '--json'])).stdout).filter((row) => row.type === 'hook');
    expect(listedAfter.map((row) => [row.id, row.state])).toEqual([
      ['command:PreToolUse#1', 'loaded'],
      ['command:Stop#1', 'loaded'],
      ['command:SessionStart#1', 'loaded'],
    ]);
  });

  it('a trusted guard hook is not dropped by an unrelated change: without a terminal or --yes the run refuses to start (trial 7 G15)', async () => {
    const guard = { matcher: 'bash', hooks: [{ type: 'command', command: 'grep -q "rm " && { echo no rm >&2; exit 2; }; exit 0' }] };
    await writeFile(join(workspace.path, 'keep.txt'), 'keep\n');
    await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ hooks: { PreToolUse: [guard] } }));
    await writeFile(join(workspace.path, 'rm.json'), JSON.stringify({ turns: [{ text: 'x', toolCalls: [{ name: 'bash', arguments: { command: 'rm -f keep.txt' } }] }, { text: 'Done.' }] }));
    expect((await cli(['hooks', 'trust'])).code).toBe(0);
    const guarded = await cli(['run', 'x', '--script', 'rm.json', '--approve', 'bash:rm -f keep.txt']);
    expect(guarded.stdout, guarded.stderr).toMatch(/✗ bash rm -f keep\.txt.*Denied/);
    expect(existsSync(join(workspace.path, 'keep.txt'))).toBe(true);
    // A teammate's commit adds an unrelated Stop hook: the section's digest changes.
    await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ hooks: { PreToolUse: [guard], Stop: [{ hooks: [{ type: 'command', command: 'true' }] }] } }));
    const unguarded = await cli(['run', 'x', '--script', 'rm.json', '--approve', 'bash:rm -f keep.txt']);
    expect([unguarded.code, unguarded.stderr]).toEqual([2, expect.stringContaining('rein: HOOK_UNTRUSTED: the command hooks of rein.config.json changed since they were trusted')]);
    expect(unguarded.stderr).toContain('`rein hooks trust`');
    expect(existsSync(join(workspace.path, 'keep.txt'))).toBe(true);
    // Trusting the section as it is now lets the session run, with the guard.
    expect((await cli(['hooks', 'trust'])).code).toBe(0);
    const again = await cli(['run', 'x', '--script', 'rm.json', '--approve', 'bash:rm -f keep.txt']);
    expect(again.code, again.stderr).toBe(0);
    expect(existsSync(join(workspace.path, 'keep.txt'))).toBe(true);
  });

  it('rein hooks trust without hooks says there is nothing to trust', async () => {
    await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ hooks: {} }));
    expect(await cli(['hooks', 'trust'])).toMatchObject({ code: 0, stdout: 'no command hooks to trust ("hooks" in rein.config.json)\n' });
    expect(existsSync(join(config.path, 'trust.json'))).toBe(false);
  });
});
