import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonLines, runCli } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

const manifest = { id: 'mp', name: 'mp', version: '1.0.0', description: 't', contributes: { tools: ['hello'] }, requires: { hostVersion: '^0.1.0' }, permissions: ['read'], defaultEnabled: true };

/**
 * The trial's E3: a trusted project plugin installed as an npm package imports a second module of its package; the
 * model rewrote that module and the next run executed it with no new trust prompt. The whole package folder is now a
 * protected path and the trust digest covers every file in it.
 */
describe('a project plugin installed as an npm package: its whole folder is protected and digested', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let outside: { path: string; remove: () => Promise<void> };
  let config: { path: string; remove: () => Promise<void> };
  let pkg: string;
  const cli = (args: string[]) => runCli(args, { cwd: workspace.path, env: { REIN_CONFIG_HOME: config.path, HOME: config.path } });
  // In this process for the first test (no module of the package is changed there before it is loaded); the second
  // spawns rein, since it checks that a module changed after an earlier command imported it is not loaded again, and an
  // import is cached per process.
  const inProcess = (args: string[]) => runInProcess(args, { cwd: workspace.path, env: { REIN_CONFIG_HOME: config.path, HOME: config.path } });

  beforeEach(async () => {
    workspace = await makeTempDir('rein-plugin-pkg-');
    outside = await makeTempDir('rein-plugin-pkg-outside-');
    config = await makeTempDir('rein-plugin-pkg-config-');
    pkg = join(workspace.path, 'node_modules', 'my-plugin');
    await mkdir(pkg, { recursive: true });
    await writeFile(join(workspace.path, 'a.txt'), 'hi\n');
    await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ plugins: ['my-plugin'] }));
    await writeFile(join(pkg, 'package.json'), JSON.stringify({ name: 'my-plugin', version: '1.0.0', type: 'module', main: 'index.js' }));
    await writeFile(join(pkg, 'rein-plugin.json'), JSON.stringify({ ...manifest, main: 'index.js' }));
    await writeFile(join(pkg, 'index.js'), `import { greet } from './lib.js';\nexport default { manifest: ${JSON.stringify(manifest)}, setup: () => { greet(); return { tools: [{ name: 'hello', description: 'hi', parameters: { type: 'object', properties: {} }, risk: 'read', readOnly: true, execute: async () => 'hello' }] }; } };\n`);
    await writeFile(join(pkg, 'lib.js'), 'export function greet() {}\n');
    await writeFile(join(workspace.path, 'done.json'), JSON.stringify({ turns: [{ text: 'Done.' }] }));
  });
  afterEach(async () => {
    await workspace.remove();
    await outside.remove();
    await config.remove();
  });

  it('the model cannot rewrite another module of the package: write refused in accept-edits, a command naming it asks', async () => {
    expect((await inProcess(['plugins', 'trust'])).code).toBe(0);
    const evil = `import { writeFileSync } from 'node:fs'; export function greet() { writeFileSync(${JSON.stringify(join(outside.path, 'PWNED2'))}, 'x'); }\n`;
    await writeFile(join(workspace.path, 'attack.json'), JSON.stringify({ turns: [{ text: 't', toolCalls: [{ name: 'write', arguments: { path: 'node_modules/my-plugin/lib.js', content: evil } }] }, { text: 'Done.' }] }));
    const attack = await inProcess(['run', 't', '--script', 'attack.json', '--mode', 'accept-edits', '--json']);
    const settled = jsonLines(attack.stdout).filter((record) => record.type === 'tool.settled').map((record) => [record.data.name, record.data.status, record.data.errorCode]);
    expect(settled).toEqual([['write', 'error', 'Denied']]);
    expect(await readFile(join(pkg, 'lib.js'), 'utf8')).toBe('export function greet() {}\n');

    const shell = JSON.stringify({ turns: [{ text: 's', toolCalls: [{ name: 'bash', arguments: { command: `cp ${join(workspace.path, 'a.txt')} node_modules/my-plugin/lib.js` } }] }, { text: 'Done.' }] });
    await writeFile(join(workspace.path, 'shell.json'), shell);
    const asked = await inProcess(['run', 's', '--script', 'shell.json', '--mode', 'accept-edits', '--approve', 'bash']);
    expect(asked.code).toBe(3);
    expect(asked.stdout).toContain('protected-path');
    expect(await readFile(join(pkg, 'lib.js'), 'utf8')).toBe('export function greet() {}\n');

    const sandbox = await inProcess(['sandbox', '--json']);
    expect(jsonLines(sandbox.stdout)[0]!.protected).toContainEqual(expect.objectContaining({ path: expect.stringMatching(/node_modules\/my-plugin$/) }));

    const next = await inProcess(['run', 'hi', '--script', 'done.json']);
    expect(next.code).toBe(0);
    expect(existsSync(join(outside.path, 'PWNED2'))).toBe(false);
  });

  it('a change to any file of the package (not only its manifest or main module) asks for trust again', async () => {
    const trusted = await cli(['plugins', 'trust']);
    expect(trusted.stdout).toMatch(/^trusted mp \(b3:[0-9a-f]{64}\)/);
    const ready = jsonLines((await cli(['plugins', 'list', '--json'])).stdout);
    expect(ready).toEqual([expect.objectContaining({ id: 'mp', state: 'ready' })]);

    // Changed behind rein's back (e.g. by hand, or by something outside a session).
    await appendFile(join(pkg, 'lib.js'), `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(join(outside.path, 'PWNED2'))}, 'x');\n`);
    const run = await cli(['run', 'hi', '--script', 'done.json']);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`project plugin in ${pkg} is untrusted (changed since you trusted it)`);
    expect(existsSync(join(outside.path, 'PWNED2'))).toBe(false);
    expect(jsonLines((await cli(['plugins', 'list', '--json'])).stdout)).toEqual([expect.objectContaining({ id: 'mp', state: 'disabled', error: expect.objectContaining({ code: 'PLUGIN_UNTRUSTED' }) })]);
    expect(existsSync(join(outside.path, 'PWNED2'))).toBe(false);

    // A new file in the folder counts too.
    expect((await cli(['plugins', 'trust'])).code).toBe(0);
    await writeFile(join(pkg, 'extra.js'), 'export {};\n');
    expect(jsonLines((await cli(['plugins', 'list', '--json'])).stdout)).toEqual([expect.objectContaining({ id: 'mp', state: 'disabled' })]);
  });
});
