import { cp, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entriesOfRows, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

const demo = fileURLToPath(new URL('../../scripts/demo/', import.meta.url));

/** Explorer and reviewer children joined with `all`, then the root's final turn. */
const delegation = {
  turns: [
    { text: 'Splitting the work.', toolCalls: [{ name: 'delegate_task', arguments: { tasks: [
      { id: 'map', role: 'explorer', objective: 'Find where add is defined.', scope: { files: ['add.js'] } },
      { id: 'review', role: 'reviewer', objective: 'Review add.js.', context_mode: 'clean' },
    ], join: { policy: 'all' } } }] },
    { text: 'Done.' },
  ],
  agents: {
    explorer: { turns: [
      { text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'add.js' } }] },
      { text: 'Reporting.', toolCalls: [{ name: 'submit_report', arguments: { status: 'completed', summary: 'add is defined in add.js', checked_paths: ['add.js'], findings: [{ claim: 'add is defined on line 1', evidence: [{ file: 'add.js', line: 1 }], confidence: 'high' }], recommendation: 'none' } }] },
    ] },
    reviewer: { turns: [
      { text: 'Reviewing.', toolCalls: [{ name: 'submit_report', arguments: { status: 'completed', summary: 'looks fine', verdict: 'pass', findings: [], residual_risk: ['no tests'] } }] },
    ] },
  },
};

describe('what the CLI displays is what the log says (the third new-user trial)', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  const cli = (args: string[]) => runInProcess(args, { cwd: workspace.path, env: { HOME: workspace.path, REIN_CONFIG_HOME: join(workspace.path, '.config') } });
  const sessionOf = (stdout: string): string => /session (s-[\w-]+):/.exec(stdout)![1]!;
  beforeEach(async () => {
    workspace = await makeTempDir('rein-trial3-');
  });
  afterEach(() => workspace.remove());

  it('with delegation, the children\'s completions and the join print before the next turn\'s text, as in the log', async () => {
    await writeFile(join(workspace.path, 'add.js'), 'export const add = (a, b) => a + b;\n');
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(delegation));
    const run = await cli(['run', 'go', '--script', 'script.json']);
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    const at = (start: string) => lines.findIndex((line) => line.startsWith(start));
    const done = at('Done.');
    for (const line of ['  ↳ task map completed', '  ↳ task review completed', '  ✓ delegate_task joined (all): satisfied, 2 task(s)']) {
      expect(at(line), line).toBeGreaterThan(0);
      expect(at(line), line).toBeLessThan(done);
    }
    // The same order as `rein show`.
    const show = (await cli(['show', sessionOf(run.stdout)])).stdout;
    expect(show.indexOf('↳ joined (all)')).toBeLessThan(show.indexOf('assistant: Done.'));
  });

  it('a command\'s duration is the recorded one, live and in rein show alike', async () => {
    await cp(join(demo, 'sample-project'), workspace.path, { recursive: true });
    const run = await cli(['run', 'fix', '--script', join(demo, 'fix-failing-test.script.json'), '--yes']);
    expect(run.code).toBe(0);
    const live = [...run.stdout.matchAll(/bash node --test \((exit \d, \d+ ms)\)/g)].map((match) => match[1]);
    const shown = [...(await cli(['show', sessionOf(run.stdout)])).stdout.matchAll(/bash \((exit \d, \d+ ms)\)/g)].map((match) => match[1]);
    expect(live).toHaveLength(2);
    expect(live).toEqual(shown);
  });

  it('a hook that stops the session before the second model call ran: the summary counts one turn', async () => {
    await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'bash', hooks: [{ type: 'command', command: `echo '{"continue": false, "stopReason": "enough"}'` }] }] } }));
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 's', toolCalls: [{ name: 'bash', arguments: { command: 'echo hi' } }] }, { text: 'Done.' }] }));
    const run = await cli(['run', 'x', '--script', 'script.json', '--yes']);
    expect(run.stdout).toContain('cancelled — stopped by hook command:PreToolUse#1: enough');
    const records = jsonLines((await cli(['show', sessionOf(run.stdout), '--json'])).stdout);
    // The second model call was requested, then the stop: it never answered.
    expect(entriesOfRows(records).filter((record) => record.type === 'effect.requested' && record.data.kind === 'callModel')).toHaveLength(2);
    expect(entriesOfRows(records).filter((record) => record.type === 'model.responded')).toHaveLength(1);
    expect(run.stdout).toMatch(/\n1 turn · 1 tool call \(1 denied\) · /);
  });

  it('a tool failure names its code once in rein show', async () => {
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'r', toolCalls: [{ name: 'read', arguments: { path: '../x' } }, { name: 'read', arguments: { path: 'nope.txt' } }] }, { text: 'Done.' }] }));
    const run = await cli(['run', 'x', '--script', 'script.json']);
    const show = (await cli(['show', sessionOf(run.stdout)])).stdout;
    expect(show).toMatch(/✗ read Denied: read: \.\.\/x is outside/);
    expect(show).toMatch(/✗ read NotFound: read: nope\.txt does not exist/);
    expect(show).not.toMatch(/(Denied|NotFound): \1:/);
  });

  it('a --plugin that did not load is printed and shown; plugin commands take --plugin', async () => {
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Done.' }] }));
    const missing = join(workspace.path, 'no-such-plugin');
    const run = await cli(['run', 'x', '--script', 'script.json', '--plugin', missing]);
    expect(run.code).toBe(0);
    const line = `✗ plugin unreadable#1 (cli) failed at manifest: PLUGIN_NOT_FOUND: ${missing}: no rein-plugin.json in ${missing}: ENOENT`;
    expect(run.stdout.split('\n')).toContain(line);
    expect((await cli(['show', sessionOf(run.stdout)])).stdout).toContain(line);

    const manifest = { id: 'test-runner', name: 'Test runner', version: '1.0.0', contributes: { commands: ['detect'] }, permissions: ['read'] };
    const directory = join(workspace.path, 'plugin');
    await mkdir(directory);
    await writeFile(join(directory, 'rein-plugin.json'), JSON.stringify({ ...manifest, main: 'index.mjs' }));
    await writeFile(join(directory, 'index.mjs'), `export default { manifest: ${JSON.stringify(manifest)}, setup: () => ({ commands: [{ name: 'detect', description: 'd', run: (args, context) => { context.write('detected ' + JSON.stringify(args) + '\\n'); return 0; } }] }) };\n`);
    const command = await cli(['test-runner', 'detect', '--plugin', directory, 'a', '--', '--plugin', 'b']);
    expect({ code: command.code, stdout: command.stdout, stderr: command.stderr }).toEqual({ code: 0, stdout: 'detected ["a","--plugin","b"]\n', stderr: '' });
    const absent = await cli(['test-runner', 'detect', `--plugin=${missing}`]);
    expect(absent.code).toBe(1);
    expect(absent.stderr).toBe(`rein: PLUGIN_NOT_FOUND: the --plugin ${missing} did not load (manifest), so test-runner detect is unavailable: ${missing}: no rein-plugin.json in ${missing}: ENOENT\n`);
  });
});
