import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLevelEventStore } from '../../stores/index.js';
import { jsonLines, startCli } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { modelExchange, openAIReplyChunks, shoutingModel } from '../support/loopback-model.js';
import { startLoopbackServer, type LoopbackServer } from '../support/loopback-server.js';
import { eventually } from '../support/sandbox.js';
import { makeTempDir } from '../support/temp-dir.js';
import { scaledTimeout } from '../support/timeouts.js';

describe('Ctrl-C during a slow model call', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let server: LoopbackServer;
  let slow = true;

  beforeAll(async () => {
    workspace = await makeTempDir('rein-sigint-');
    await writeFile(join(workspace.path, 'greeting.txt'), 'hello, world');
    const answer = modelExchange(shoutingModel('greeting.txt'));
    // Slow: a long reply, one small piece every 100 ms (about a minute in all).
    server = await startLoopbackServer((request) => (slow ? { chunks: openAIReplyChunks({ text: 'Thinking about it. '.repeat(40) }, 1), delayMs: 100 } : answer(request)));
  });
  afterAll(async () => {
    await server.close();
    await workspace.remove();
  });

  it('cancels the running call cleanly (exit 130), leaving a session that resumes to completion', async () => {
    const env = { OPENAI_API_KEY: '', REIN_PROVIDER: '', REIN_MODEL: '', REIN_BASE_URL: '' };
    const child = startCli(['run', 'shout greeting.txt', '--provider', 'openai', '--base-url', `${server.url}/v1`, '--model', 'loopback-1', '--mode', 'accept-edits'], { cwd: workspace.path, env });
    let stdout = '';
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes('Thinking about it.')) resolve();
      });
    });
    const signalledAt = Date.now();
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    // Promptly, not after the minute-long reply: 5 s on a quiet machine, stretched by the load (a guard, not a benchmark).
    expect(Date.now() - signalledAt).toBeLessThan(scaledTimeout(5_000));
    expect(stderr).toContain('interrupting');
    expect(stdout).toContain('interrupted');
    await eventually(() => server.abandoned, (abandoned) => abandoned > 0, scaledTimeout(5_000));
    expect(server.abandoned).toBe(1);

    const sessionId = /session (s-[\w-]+):/.exec(stdout)![1]!;
    const store = await openLevelEventStore(join(workspace.path, '.rein'));
    try {
      const records = await store.read(sessionId);
      expect(records.at(-1)).toMatchObject({ type: 'session.interrupted', data: { running: ['root:e1'] } });
      expect(records.some((record) => record.type === 'model.responded' || record.type === 'model.failed')).toBe(false);
    } finally {
      await store.close();
    }
    const listed = jsonLines((await runInProcess(['sessions', '--json'], { cwd: workspace.path })).stdout);
    expect(listed.find((summary) => summary.id === sessionId)).toMatchObject({ status: 'interrupted' });

    slow = false;
    const resumed = await runInProcess(['resume', sessionId, '--mode', 'accept-edits'], { cwd: workspace.path, env });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('in doubt: root:e1 (callModel) → rerun');
    expect(resumed.stdout).toContain('completed');
    expect(await readFile(join(workspace.path, 'greeting.txt'), 'utf8')).toBe('HELLO, WORLD\n');
    expect((await runInProcess(['replay', sessionId], { cwd: workspace.path })).code).toBe(0);
  });
});

describe('Ctrl-C while the session is being created', () => {
  it('is kept until the session exists, which is then recorded as interrupted before its task is sent; the id and rein resume are printed (exit 130)', async () => {
    const workspace = await makeTempDir('rein-sigint-start-');
    try {
      // A start-up hook that takes a while: the window between `session.created` and the session's first step.
      await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ hooks: { SessionStart: [{ hooks: [{ type: 'command', command: 'touch hook-started; sleep 3' }] }] } }));
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Done.' }] }));
      // --yes trusts the workspace's hooks; the trust store is the test's own.
      const child = startCli(['run', 'the task from the command line', '--script', 'script.json', '--yes'], { cwd: workspace.path, env: { REIN_CONFIG_HOME: join(workspace.path, '.config-home') } });
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const deadline = Date.now() + 60_000;
      while (!(await readFile(join(workspace.path, 'hook-started')).then(() => true, () => false)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      child.kill('SIGINT');
      expect(await exited, `${stdout}\n${stderr}`).toBe(130);
      expect(stderr).toContain('interrupting');
      const sessionId = /session (s-[\w-]+):/.exec(stdout)?.[1];
      expect(sessionId, stdout).toBeDefined();
      expect(stdout).toContain(`rein resume ${sessionId}`);
      const store = await openLevelEventStore(join(workspace.path, '.rein'));
      try {
        const records = await store.read(sessionId!);
        expect(records[0]).toMatchObject({ type: 'session.created', data: { task: 'the task from the command line' } });
        expect(records.at(-1)).toMatchObject({ type: 'session.interrupted', data: { running: [] } });
        expect(records.some((record) => record.type === 'user.message' || record.type === 'model.responded')).toBe(false);
      } finally {
        await store.close();
      }
      const listed = jsonLines((await runInProcess(['sessions', '--json'], { cwd: workspace.path })).stdout);
      expect(listed.find((summary) => summary.id === sessionId)).toMatchObject({ status: 'interrupted' });
    } finally {
      await workspace.remove();
    }
  }, 120_000);
});

describe('stdout closed while a session runs (rein run … | head -1)', () => {
  it('interrupts the session like Ctrl-C: recorded, said on stderr, exit 130 — not a silent exit 0', async () => {
    const workspace = await makeTempDir('rein-epipe-');
    try {
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'one', toolCalls: [{ name: 'bash', arguments: { command: 'sleep 1; echo a' } }] }, { text: 'two', toolCalls: [{ name: 'bash', arguments: { command: 'sleep 1; echo b' } }] }, { text: 'Done.' }] }));
      const child = startCli(['run', 'two slow steps', '--script', 'script.json', '--yes'], { cwd: workspace.path });
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      // The reader takes the first line and goes away, as `head -1` does.
      await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
      child.stdout!.destroy();
      expect(await exited, stderr).toBe(130);
      const id = /interrupting session (s-[\w-]+)/.exec(stderr)?.[1];
      expect(id, stderr).toBeDefined();
      expect(stderr).toContain(`rein resume ${id}`);
      const listed = jsonLines((await runInProcess(['sessions', '--json'], { cwd: workspace.path })).stdout);
      expect(listed.find((summary) => summary.id === id)).toMatchObject({ status: 'interrupted' });
    } finally {
      await workspace.remove();
    }
  }, 120_000);
});
