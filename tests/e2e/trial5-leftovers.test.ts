import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entriesOfRows, cliPath, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';
import { everythingPath } from '../support/mcp-servers.js';
import { sessionEndedIn } from '../../src/host/step-record.js';
import type { RecordEnvelope } from '../../models/envelope.js';

/** The fifth trial's leftovers, each through the CLI as the trial met it. */
describe('trial 5 leftovers', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let scripts: { path: string; remove: () => Promise<void> };
  const env = () => ({ HOME: workspace.path, REIN_CONFIG_HOME: join(workspace.path, '.config-home'), REIN_PROVIDER: '' });
  const cli = (args: string[]) => runInProcess(args, { cwd: workspace.path, env: env() });
  const script = async (name: string, value: unknown) => {
    const path = join(scripts.path, name);
    await writeFile(path, JSON.stringify(value));
    return path;
  };
  const sessionId = (stdout: string) => /session (s-[\w-]+)/.exec(stdout)?.[1] ?? /(s-\d{8}-\d{6}-[0-9a-f]+)/.exec(stdout)![1]!;
  beforeEach(async () => {
    workspace = await makeTempDir('rein-trial5-');
    scripts = await makeTempDir('rein-trial5-scripts-');
  });
  afterEach(async () => {
    await workspace.remove();
    await scripts.remove();
  });

  it('the --approve rule printed for a command with glob characters, pasted into a shell, answers exactly that command (E30)', async () => {
    for (const name of ['a', 'b', 'h1.txt']) await writeFile(join(workspace.path, name), 'x\n');
    const path = await script('glob.json', { turns: [{ text: '1', toolCalls: [{ name: 'bash', arguments: { command: 'rm -f * && echo $HOME' } }] }, { text: 'Done.' }] });
    const run = await cli(['run', 'a', '--script', path]);
    expect(run.code, run.stderr).toBe(3);
    const hint = /answer with: (rein resume .*) \(or --yes\)/.exec(run.stdout)![1]!;
    expect(hint).toContain(`--approve 'bash:rm -f \\* && echo $HOME'`);
    // A broader rule than the one printed is not an answer: `?` and an unescaped `*` are patterns, and the line is a delete.
    const id = /rein resume (\S+)/.exec(hint)![1]!;
    for (const broader of ['bash:rm -f ? && echo $HOME', 'bash:rm -f * && echo $HOME', 'bash:rm -f \\* && echo *']) {
      const again = await cli(['resume', id, '--approve', broader]);
      expect(again.code, again.stdout).toBe(3);
      expect(again.stdout).toContain(`answer with: rein resume ${id} --approve 'bash:rm -f \\* && echo $HOME'`);
    }
    expect(existsSync(join(workspace.path, 'a'))).toBe(true);
    // The printed line, run by a real shell as the user would paste it.
    const pasted = await promisify(execFile)('bash', ['-c', hint.replace(/^rein /, `"${process.execPath}" "${cliPath}" `)], { cwd: workspace.path, env: { ...process.env, ...env() } });
    expect(pasted.stdout).toContain('→ allow');
    expect(existsSync(join(workspace.path, 'a'))).toBe(false);
    expect(existsSync(join(workspace.path, 'h1.txt'))).toBe(false);
    const status = jsonLines((await cli(['sessions', '--json'])).stdout).find((session) => session.id === id);
    expect(status).toMatchObject({ status: 'completed' });
  });

  it('a background command stopped at the session end is recorded as stopped, with its signal, and show and trace say so (E18)', async () => {
    const path = await script('bg.json', { turns: [{ text: 'bg', toolCalls: [{ name: 'bash', arguments: { command: 'echo started; sleep 60', run_in_background: true } }] }, { text: 'The dev server is running. Done.' }] });
    const run = await cli(['run', 'b', '--script', path, '--yes', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const records = jsonLines(run.stdout);
    const ended = records.findIndex((record) => sessionEndedIn(record as RecordEnvelope) !== undefined);
    const commandEnded = records.findIndex((record) => record.type === 'command.ended');
    expect(commandEnded).toBeGreaterThan(ended);
    expect(records[commandEnded]!.data).toMatchObject({ callId: 'root:e1.0', ended: 'stopped', stoppedBy: 'session-end', exitCode: null, signal: 'SIGKILL' });
    const id = records[0]!.stream as string;
    const show = await cli(['show', id]);
    expect(show.stdout).toMatch(/session ended: completed\n.*background command of root:e1\.0 stopped by rein at the session's end \(signal SIGKILL\) after \d+\.\d s/);
    const trace = await cli(['trace', id]);
    expect(trace.stdout).toMatch(/ended #\d+: completed\n(?:.*\n)*background command of root:e1\.0 stopped by rein at the session's end \(signal SIGKILL\)/);
  });

  it('a task a UserPromptSubmit hook blocks ends the session cancelled, named, and show prints the block (E27)', async () => {
    await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'echo no secrets in prompts >&2; exit 2' }] }] } }));
    const path = await script('done.json', { turns: [{ text: 'Done.' }] });
    const run = await cli(['run', 'my password is hunter2', '--script', path, '--yes']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('rein: PROMPT_BLOCKED: a userPromptSubmit hook blocked the message: no secrets in prompts');
    const id = /session (s-[\w-]+):/.exec(run.stdout)?.[1];
    expect(id, run.stdout).toBeDefined();
    expect(run.stdout).toContain('cancelled — the task was not sent');
    const [listed] = jsonLines((await cli(['sessions', '--json'])).stdout);
    expect(listed).toMatchObject({ id, status: 'cancelled' });
    const show = await cli(['show', id!]);
    expect(show.stdout).toContain('prompt blocked by command:UserPromptSubmit#1 — no secrets in prompts (the message was not sent)');
    expect(show.stdout).toContain('session ended: cancelled');
  });

  it('the CLI reference says which commands take --workspace, --store, --json and --relaxed, and the CLI agrees (E32)', async () => {
    const readme = await readFile(fileURLToPath(new URL('../../docs/cli.md', import.meta.url)), 'utf8');
    const paragraph = readme.slice(readme.indexOf('Every command that works on a'), readme.indexOf("is `USAGE: unknown option '…'`"));
    const common = ['--workspace', '--store', '--json', '--relaxed'];
    // The exceptions the reference names, e.g. `rein worker --store --json`.
    const exceptions = new Map([...paragraph.replace(/\n/g, ' ').matchAll(/`rein ([a-z ]+?)((?: --[a-z]+)+)`/g)].map((match) => [match[1]!, match[2]!.trim().split(' ')]));
    expect([...exceptions.keys()].sort()).toEqual(['graph', 'plugins list', 'plugins trust', 'sandbox', 'store copy', 'store migrate', 'worker']);
    const takes = async (command: string) => {
      const help = await cli([...command.split(' '), '--help']);
      return common.filter((flag) => new RegExp(`^\\s+${flag}\\b`, 'm').test(help.stdout));
    };
    const commands = ['run', 'resume', 'sessions', 'show', 'replay', 'fork', 'trace', 'context', 'inspect', 'approve', 'memory list', 'memory review', 'mcp list', 'mcp trust', 'hooks trust', 'skills list', ...exceptions.keys()];
    for (const command of commands) expect(await takes(command), command).toEqual(exceptions.get(command) ?? common);
    // An option a command does not take is a usage error, not silently ignored.
    const refused = await cli(['graph', 'session', '--relaxed']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("rein: USAGE: unknown option '--relaxed'");
  });

  it('rein plugins trust with an unknown id next to a valid one names it, exits 2 and trusts nothing (E36)', async () => {
    const manifest = { id: 'tr', name: 'Tr', version: '1.0.0', contributes: {}, permissions: [] };
    await mkdir(join(workspace.path, '.rein-plugins', 'tr'), { recursive: true });
    await writeFile(join(workspace.path, '.rein-plugins', 'tr', 'rein-plugin.json'), JSON.stringify({ ...manifest, main: 'index.mjs' }));
    await writeFile(join(workspace.path, '.rein-plugins', 'tr', 'index.mjs'), `export default { manifest: ${JSON.stringify(manifest)}, setup() {} };\n`);
    const mixed = await cli(['plugins', 'trust', 'tr', 'nope', 'nah']);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain('rein: USAGE: no project plugin named nope, nah (the project plugins here: tr); nothing was trusted');
    expect(mixed.stdout).not.toContain('trusted tr');
    expect(existsSync(join(workspace.path, '.config-home', 'trust.json'))).toBe(false);
    const right = await cli(['plugins', 'trust', 'tr']);
    expect(right.code, right.stderr).toBe(0);
    expect(right.stdout).toContain('trusted tr');
    expect(existsSync(join(workspace.path, '.config-home', 'trust.json'))).toBe(true);
  });

  it('streamed reasoning is shown, escaped, live and by rein show (E41)', async () => {
    const path = await script('reasoning.json', { turns: [{ reasoning: 'Let me think about the \u001b[2Ksecret plan.', text: 'Done.' }] });
    const run = await cli(['run', 'r', '--script', path]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('thinking: Let me think about the \\x1b[2Ksecret plan.\nDone.');
    expect(run.stdout).not.toContain('\u001b');
    const id = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
    const show = await cli(['show', id]);
    expect(show.stdout).toMatch(/#\d+ +reasoning: Let me think about the \\x1b\[2Ksecret plan\.\n +assistant: Done\./);
    expect(show.stdout).not.toContain('\u001b');
  });

  it('a deny rule naming no MCP tool of the session is said, live, in show and in a record, with the tool it meant (E42)', async () => {
    await writeFile(join(workspace.path, '.mcp.json'), JSON.stringify({ mcpServers: { everything: { command: 'node', args: [everythingPath, 'stdio'] } } }));
    const path = await script('md.json', { turns: [{ text: 'Env.', toolCalls: [{ name: 'mcp__everything__get-env', arguments: {} }] }, { text: 'Done.' }] });
    const run = await cli(['run', 'd', '--script', path, '--yes', '--deny', 'mcp__everything__get_env', '--deny', 'mcp__nowhere__*', '--deny', 'mcp__*__get-e*']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('! deny rule mcp__everything__get_env matches no tool of this session (did you mean mcp__everything__get-env?)');
    expect(run.stdout).toContain('! deny rule mcp__nowhere__* matches no tool of this session');
    // The rule that does name the tool is not reported, and it holds.
    expect(run.stdout).not.toContain('mcp__*__get-e* matches');
    const id = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
    const records = jsonLines((await cli(['show', id, '--json'])).stdout);
    expect(entriesOfRows(records).filter((record) => record.type === 'permission.rule-unmatched').map((record) => record.data)).toEqual([
      { rule: 'deny mcp__everything__get_env', suggestion: 'mcp__everything__get-env' },
      { rule: 'deny mcp__nowhere__*' },
    ]);
    expect((await cli(['show', id])).stdout).toContain('! deny rule mcp__everything__get_env matches no tool of this session (did you mean mcp__everything__get-env?)');
  }, 60_000);

  it('a plugin provider works by its full name, and a wrong guess names the plugin providers loaded (E43)', async () => {
    const rein = fileURLToPath(new URL('../../dist/src/index.js', import.meta.url));
    const manifest = { id: 'echoprov', name: 'Echo provider', version: '1.0.0', contributes: { providers: ['echo'] }, permissions: ['model'] };
    const folder = join(scripts.path, 'prov');
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'rein-plugin.json'), JSON.stringify({ ...manifest, main: 'index.mjs' }));
    await writeFile(join(folder, 'index.mjs'), `import { createScriptedProvider, parseScript } from ${JSON.stringify(rein)};
export default { manifest: ${JSON.stringify(manifest)}, setup: () => ({ providers: [{ id: 'echo', create: () => createScriptedProvider(parseScript({ turns: [{ text: 'echo says hi' }] })) }] }) };
`);
    const right = await cli(['run', 'hi', '--plugin', folder, '--provider', 'echoprov__echo', '--model', 'm']);
    expect(right.code, right.stderr).toBe(0);
    expect(right.stdout).toContain('echo says hi');
    const guess = await cli(['run', 'hi', '--plugin', folder, '--provider', 'echo', '--model', 'm']);
    expect(guess.code).toBe(2);
    expect(guess.stderr).toContain(`rein: USAGE: unknown provider "echo": expected openai, anthropic, scripted or recorded, or a plugin's provider: echoprov__echo`);
    const none = await cli(['run', 'hi', '--provider', 'echo', '--model', 'm']);
    expect(none.stderr).toContain('(or <plugin>__<id> for a provider a plugin contributes; none here does)');
    const help = await cli(['run', '--help']);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('<plugin>__<id> for a provider a plugin contributes');
  });
});
