import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelExchange, shoutingModel } from '../support/loopback-model.js';
import { jsonError, startLoopbackServer, type LoopbackServer } from '../support/loopback-server.js';
import { entriesOfRows, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

const clean = { REIN_PROVIDER: '', REIN_MODEL: '', REIN_BASE_URL: '', OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '' };

/**
 * A provider that is down (Anthropic-style 529 on every request) with an OpenAI-compatible fallback that works: the
 * run completes on the fallback, says so live, and the log records which provider answered each attempt.
 */
describe('rein run --fallback', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let down: LoopbackServer;
  let spare: LoopbackServer;
  const cli = (args: string[]) => runInProcess(args, { cwd: workspace.path, env: clean });

  beforeAll(async () => {
    workspace = await makeTempDir('rein-fallback-');
    await writeFile(join(workspace.path, 'greeting.txt'), 'hello, world');
    down = await startLoopbackServer(() => jsonError(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, { 'retry-after': '0' }));
    spare = await startLoopbackServer(modelExchange(shoutingModel('greeting.txt')));
  });
  afterAll(async () => {
    await Promise.all([down.close(), spare.close()]);
    await workspace.remove();
  });

  it('falls back after the first provider spent its retries, completes there, and records every attempt', async () => {
    const run = await cli(['run', 'shout greeting.txt', '--provider', 'anthropic', '--base-url', down.url, '--model', 'big-1', '--fallback', `openai:loopback-1@${spare.url}/v1`, '--mode', 'accept-edits']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('↪ overloaded from anthropic/big-1: falling back to openai/loopback-1');
    expect(await readFile(join(workspace.path, 'greeting.txt'), 'utf8')).toBe('HELLO, WORLD\n');
    const sessionId = /session (s-[\w-]+):/.exec(run.stdout)![1]!;

    const records = jsonLines((await cli(['show', sessionId, '--json'])).stdout);
    expect(records[0]).toMatchObject({ type: 'session.created', data: { provider: { name: 'anthropic', model: 'big-1', fallbacks: [{ name: 'openai', model: 'loopback-1', source: `${spare.url}/v1` }] } } });
    const attempts = entriesOfRows(records).filter((record) => record.type === 'model.attempted').map((record) => record.data);
    // The first model call: five overloaded attempts on Anthropic (the default retry budget), the last one falling back.
    expect(attempts.slice(0, 6).map((attempt) => [attempt.attempt, attempt.provider, attempt.errorCode ?? attempt.outcome, attempt.decision])).toEqual([
      [1, 'anthropic', 'overloaded', 'retry'],
      [2, 'anthropic', 'overloaded', 'retry'],
      [3, 'anthropic', 'overloaded', 'retry'],
      [4, 'anthropic', 'overloaded', 'retry'],
      [5, 'anthropic', 'overloaded', 'fallback'],
      [6, 'openai', 'ok', 'done'],
    ]);
    expect(attempts[4]).toMatchObject({ fallbackTo: { provider: 'openai', model: 'loopback-1' } });
    // Later calls start at the fallback that answered (for a minute) instead of waiting out the outage again.
    expect(attempts.slice(6).map((attempt) => [attempt.provider, attempt.outcome])).toEqual(attempts.slice(6).map(() => ['openai', 'ok']));
    expect(attempts.length).toBeGreaterThan(6);
    expect((await cli(['show', sessionId])).stdout).toContain('failed: overloaded → fallback to openai loopback-1');
    const trace = await cli(['trace', sessionId]);
    expect(trace.stdout).toMatch(/attempts: (#\d+ anthropic\/big-1 overloaded → retry · ){4}#\d+ anthropic\/big-1 overloaded → fallback to openai\/loopback-1 · #\d+ openai\/loopback-1 ok/);
    const replay = await cli(['replay', sessionId]);
    expect(replay.code).toBe(0);
  });

  it('--no-fallback runs without the chain rein.config.json names: the overloaded provider fails the run', async () => {
    await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ fallbacks: [{ provider: 'openai', model: 'loopback-1', baseUrl: `${spare.url}/v1` }] }));
    try {
      const run = await cli(['run', 'shout greeting.txt', '--provider', 'anthropic', '--base-url', down.url, '--model', 'big-1', '--no-fallback']);
      expect(run.code).toBe(1);
      expect(run.stdout).not.toContain('falling back');
      const sessionId = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
      const [created] = jsonLines((await cli(['show', sessionId, '--json'])).stdout);
      expect(created!.data.provider).not.toHaveProperty('fallbacks');
    } finally {
      await writeFile(join(workspace.path, 'rein.config.json'), '{}');
    }
  });

  it('a malformed --fallback is a usage error that shows the form, before anything runs', async () => {
    const run = await cli(['run', 'x', '--provider', 'anthropic', '--base-url', down.url, '--model', 'm', '--fallback', 'gemini/pro']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('expected <openai|anthropic>:<model>[@<base url>]');
  });
});
