import { cp, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entriesOfRows, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';
import { scaledTimeout } from '../support/timeouts.js';

const demo = fileURLToPath(new URL('../../scripts/demo/', import.meta.url));
const script = join(demo, 'fix-failing-test.script.json');

/** The lines of `text` that start with one of `starts`, each mapped to the start it matched (in output order). */
const linesStarting = (text: string, starts: readonly string[]): Array<string | undefined> =>
  text
    .split('\n')
    .filter((line) => starts.some((start) => line.startsWith(start)))
    .map((line) => starts.find((start) => line.startsWith(start)));

describe('what the CLI displays is what the log says (the new-user trial)', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  const cli = (args: string[], env: NodeJS.ProcessEnv = {}) => runInProcess(args, { cwd: workspace.path, env: { HOME: workspace.path, REIN_CONFIG_HOME: join(workspace.path, '.config'), ...env } });
  const sessionOf = (stdout: string): string => /session (s-[\w-]+):/.exec(stdout)![1]!;
  beforeEach(async () => {
    workspace = await makeTempDir('rein-display-');
    await cp(join(demo, 'sample-project'), workspace.path, { recursive: true });
  });
  afterEach(() => workspace.remove());

  it('rein run --yes prints each tool result before the next turn text: never a claim before its proof', async () => {
    const run = await cli(['run', 'fix', '--script', script, '--yes']);
    expect(run.code).toBe(0);
    const order = [
      "I'll start by looking at the project layout.",
      '  ✓ list_dir .',
      '  ✓ glob **/*.js',
      'Running the tests to see what fails.',
      '  ✗ bash node --test (exit 1,',
      'Reading the failing test and the implementation.',
      '  ✓ read test/stats.test.js',
      '  ✓ read src/stats.js',
      '`sum` starts at 0',
      '  ✓ edit src/stats.js',
      'Running the tests again.',
      '  ✓ bash node --test (exit 0,',
      'Fixed: `sum` subtracted each value',
    ];
    expect(linesStarting(run.stdout, order)).toEqual(order);
    expect(run.stdout).toMatch(/\n6 turns · 7 tool calls \(1 failed\) · /);
    // The model's last turn read the whole history (no compaction yet: the prefix stays as it was, for the provider's
    // cache), so every earlier call is there in full: what a glob looked for and how the failing command ended. The
    // one-line history summary (`→ bash(node --test) exit 1`) appears only once a compaction replaces older turns.
    const context = (await cli(['context', sessionOf(run.stdout), '--turn', '6'])).stdout;
    expect(context).not.toContain('<history-summary');
    expect(context).toContain('**/*.js');
    expect(context).toContain('node --test');
    expect(context).toContain('not ok 1 - sum adds the values');
  });

  it('resumed three times with --approve: the summary counts the whole log, the trace has one row per call, show and dry-run read the answers', async () => {
    const first = await cli(['run', 'fix', '--script', script]);
    expect(first.code).toBe(3);
    const id = sessionOf(first.stdout);
    const answers = [['--approve', 'bash:node --test'], ['--approve', 'edit'], ['--approve', 'bash:node --test']];
    let last = first;
    for (const answer of answers) last = await cli(['resume', id, ...answer]);
    expect(last.code).toBe(0);
    // The failing test run happened in the first resume: the last process still counts it.
    expect(last.stdout).toMatch(/\ncompleted · outcome \w+[^\n]*\n6 turns · 7 tool calls \(1 failed\) · /);

    const trace = (await cli(['trace', id])).stdout;
    expect(trace).not.toContain('permission —');
    const rows = trace.split('\n').filter((line) => /^ {2}\w+\(.*\) #\d+ → /.test(line));
    expect(rows).toHaveLength(7);
    expect(trace).toMatch(/bash\(node --test\) #\d+ → permission ask \(commands that are not read-only need ap…\) #\d+ → answered allow-once #\d+ → permission allow \(the user allowed it \(allow-once\)\) #\d+ → started #\d+ → ok \(exit 1, \d+ ms\) #\d+ → verification failed #\d+/);

    const show = (await cli(['show', id])).stdout;
    expect(show).toContain('permission ask for bash node --test (mode default: commands that are not read-only need approval)');
    expect(show).not.toContain('mode:default');

    // Under the flags the session ran with, nothing differs: a question a person answered then is a question now.
    const same = await cli(['replay', id, '--dry-run', '--approve', 'edit', '--approve', 'bash:node --test']);
    expect(same.stdout).toMatch(/bash root:e4\.0: then valid\/ask \(answered allow\) → ok · now valid\/allow\n/);
    expect(same.stdout.match(/ bash root:/g)).toHaveLength(2);
    expect(same.stdout).toContain('7 recorded tool calls, 0 would now be decided differently; nothing was executed');
    // Without them, a question answered then is asked again now: the same decision, not a change.
    const bare = await cli(['replay', id, '--dry-run']);
    expect(bare.stdout).toMatch(/edit root:e10\.0: then valid\/ask \(answered allow\) → ok · now valid\/ask\n/);
    expect(bare.stdout).toContain('7 recorded tool calls, 0 would now be decided differently');
    const denied = await cli(['replay', id, '--dry-run', '--deny', 'edit']);
    expect(denied.stdout).toContain('CHANGED: permission: ask then, deny now');
    expect(denied.stdout).toContain('7 recorded tool calls, 1 would now be decided differently');
  });

  it('replay --dry-run counts a call a --deny rule refused, and takes --yes like run does', async () => {
    const run = await cli(['run', 'fix', '--script', script, '--yes', '--deny', 'edit']);
    expect(run.stdout).toMatch(/7 tool calls \(2 failed, 1 denied\)/);
    const id = sessionOf(run.stdout);
    const bare = await cli(['replay', id, '--dry-run']);
    expect(bare.stdout).toMatch(/edit root:e9\.0: then not-run\/deny → error Denied · now valid\/ask · CHANGED: permission: deny then, ask now\n/);
    expect(bare.stdout).toContain('CHANGED: permission: allow then, ask now (then answered in advance by --yes: pass --yes to compare like with like)');
    expect(bare.stdout).toContain('7 recorded tool calls, 3 would now be decided differently');
    const same = await cli(['replay', id, '--dry-run', '--yes', '--deny', 'edit']);
    expect(same.code).toBe(0);
    expect(same.stdout).toContain('7 recorded tool calls, 0 would now be decided differently');
    const verified = await cli(['replay', id, '--yes']);
    expect(verified.code).toBe(2);
    expect(verified.stderr).toBe('rein: USAGE: the permission flags (--mode, --approve, --deny, --yes) apply to rein replay --dry-run only: a verified replay runs no policy\n');
  });

  it('--max-wall-time stops a running command: cancelled, recorded with the reason, then budget-exhausted', async () => {
    await writeFile(join(workspace.path, 'sleep.json'), JSON.stringify({ turns: [{ text: 'Waiting.', toolCalls: [{ name: 'bash', arguments: { command: 'sleep 20' } }] }, { text: 'Done.' }] }));
    // The budget must outlast the session's start (the environment block, the workspace baseline, the sandbox): on a
    // loaded machine that took more than 1.5 s, and the call was then cancelled before its command ran (no SIGKILL to
    // show). Stretched with the load, and still well short of the command's 20 s.
    const budget = Math.min(6_000, scaledTimeout(2_500));
    const run = await cli(['run', 'wait', '--script', 'sleep.json', '--yes', '--max-wall-time', String(budget)]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/✗ bash sleep 20 Cancelled \(SIGKILL, \d+ ms\)/);
    expect(run.stdout).toContain('\nbudget-exhausted — wall-time budget exhausted\n');
    const records = jsonLines((await cli(['show', sessionOf(run.stdout), '--json'])).stdout);
    const entries = entriesOfRows(records);
    const settled = entries.find((record) => record.type === 'tool.settled')!.data;
    expect(settled).toMatchObject({ status: 'error', errorCode: 'Cancelled' });
    expect(settled.observation).toContain(`the command was cancelled (the wall-time budget of ${budget} ms ran out while it ran)`);
    expect(settled.execution.durationMs).toBeLessThan(20_000);
    // session.ended is the last entry of the last step record.
    expect(entries.at(-1)).toMatchObject({ type: 'session.ended', data: { status: 'budget-exhausted' } });
  });

  it('a command-line mistake is one typed USAGE line, exit 2, with no help dump', async () => {
    const cases: Array<[string[], string]> = [
      [['--bogus'], 'rein: USAGE: unknown command --bogus (see rein --help)\n'],
      [['run', '--bogus', 'x'], "rein: USAGE: unknown option '--bogus' (see rein <command> --help)\n"],
      [['show'], "rein: USAGE: missing required argument 'id' (see rein <command> --help)\n"],
      [['memory', 'reject', 'c-1'], "rein: USAGE: required option '--reason <text>' not specified (see rein <command> --help)\n"],
      [['run', 'x', '--max-turns'], "rein: USAGE: option '--max-turns <n>' argument missing (see rein <command> --help)\n"],
    ];
    for (const [args, stderr] of cases) {
      const result = await cli(args);
      expect({ args, code: result.code, stderr: result.stderr, stdout: result.stdout }).toEqual({ args, code: 2, stderr, stdout: '' });
    }
    const help = await cli(['show', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: rein show [options] <id>');
  });

  it('a command of a plugin that is not trusted is one message with its code', async () => {
    const manifest = { id: 'guard', name: 'Guard', version: '1.0.0', contributes: { commands: ['hello'] }, permissions: ['read'] };
    await mkdir(join(workspace.path, '.rein-plugins', 'guard'), { recursive: true });
    await writeFile(join(workspace.path, '.rein-plugins', 'guard', 'rein-plugin.json'), JSON.stringify({ ...manifest, main: 'index.mjs' }));
    await writeFile(join(workspace.path, '.rein-plugins', 'guard', 'index.mjs'), `export default { manifest: ${JSON.stringify(manifest)}, setup: () => ({ commands: [{ name: 'hello', description: 'hi', run: (args, context) => { context.write('hello\\n'); return 0; } }] }) };\n`);
    const result = await cli(['guard', 'hello']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('rein: PLUGIN_UNTRUSTED: plugin guard is disabled, so its commands are unavailable: a project plugin runs only after you trust it (`rein plugins trust`, or `rein run --yes`)\n');
  });
});
