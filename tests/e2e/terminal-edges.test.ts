import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cliPath, startCli } from '../support/cli.js';
import { makeTempDir } from '../support/temp-dir.js';

const driver = fileURLToPath(new URL('../support/pty-driver.py', import.meta.url));

/* Issue 30 E: what a real terminal gets — `TERM=dumb` — and `rein inspect --serve` with no session. */
describe('terminal edges', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  beforeEach(async () => {
    workspace = await makeTempDir('rein-terminal-');
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'out.txt', content: 'x\n' } }] }, { text: 'Done.' }] }));
  });
  afterEach(() => workspace.remove());

  it('TERM=dumb on a terminal: no colour, no spinner redrawn in place, no line editing at the prompt', async () => {
    const spec = { argv: [process.execPath, cliPath, 'run', 'write it', '--script', 'script.json'], cwd: workspace.path, answers: [{ expect: 'allow\\? \\[y\\]es once', send: 'y\n' }], timeout: 60 };
    const { stdout } = await promisify(execFile)('python3', [driver, JSON.stringify(spec)], { env: { ...process.env, HOME: workspace.path, TERM: 'dumb' } });
    const run = JSON.parse(stdout) as { code: number; output: string; answered: number };
    expect(run.answered).toBe(1);
    expect(run.code).toBe(0);
    expect(run.output).toContain('✓ write out.txt');
    expect(run.output).not.toContain('\u001b[');
  });

  it('rein inspect --serve without a session id starts the relay and says how rein run streams to it', async () => {
    const child = startCli(['inspect', '--serve', '0'], { cwd: workspace.path, env: { HOME: workspace.path } });
    let out = '';
    const line = await new Promise<string>((resolve) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(out);
      });
    });
    const page = /open (http:\/\/127\.0\.0\.1:\d+) in a browser/.exec(line)![1]!;
    expect(line).toMatch(/then stream a live session to it with rein run "<task>" --inspect ws:\/\/127\.0\.0\.1:\d+; Ctrl-C to stop/);
    expect((await fetch(page)).status).toBe(200);
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  });
});
