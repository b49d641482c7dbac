import { describe, expect, it } from 'vitest';
import { runInProcess } from '../support/cli-in-process.js';

/* Issue 30 E: `rein help <command>`, flag order and examples in --help, and `rein inspect --serve` without an id. */
describe('help at the command line', () => {
  const cli = (args: string[]) => runInProcess(args, { cwd: process.cwd() });

  it('rein help <command> prints that command\'s help, exit 0, as <command> --help does', async () => {
    const help = await cli(['help', 'show']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: rein show [options] <id>');
    expect((await cli(['show', '--help'])).stdout).toBe(help.stdout);
    expect((await cli(['help', 'run'])).stdout).toContain('Usage: rein run [options] [task]');
  });

  it('rein run --help lists the flags most runs need first, and ends with examples', async () => {
    const help = (await cli(['run', '--help'])).stdout;
    const flags = [...help.matchAll(/^ {2}(--[\w-]+)/gm)].map((match) => match[1]);
    expect(flags.slice(0, 8)).toEqual(['--provider', '--model', '--base-url', '--script', '--from', '--fallback', '--no-fallback', '--yes']);
    expect(flags.indexOf('--approve')).toBeLessThan(flags.indexOf('--max-turns'));
    expect(flags.indexOf('--workspace')).toBeLessThan(flags.indexOf('--inspect'));
    expect(help).toMatch(/\nExamples:\n {2}rein run "fix the failing test" --provider openai/);
    expect(help).toContain('rein inspect --serve & rein run "…" --inspect');
    // The program's examples start where a new user does: rein init, then a run.
    const top = (await cli(['--help'])).stdout;
    expect(top).toMatch(/\nExamples:\n {2}rein init +set up a project[^\n]*\n {2}rein run /);
    expect(top).toMatch(/\nCommands:\n {2}init /);
  });

  it('rein inspect needs an id unless it serves; its help shows the live recipe', async () => {
    const missing = await cli(['inspect']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe('rein: USAGE: rein inspect needs a session id, or --serve to start a relay that rein run --inspect streams a live session to\n');
    expect((await cli(['inspect', '--help'])).stdout).toContain('rein run "fix the test" --inspect');
  });
});
