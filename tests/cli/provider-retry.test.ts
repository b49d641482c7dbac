import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelExchange, shoutingModel } from '../support/loopback-model.js';
import { jsonError, startLoopbackServer, type LoopbackServer } from '../support/loopback-server.js';
import { jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

const clean = { REIN_PROVIDER: undefined, REIN_MODEL: undefined, REIN_BASE_URL: undefined, ANTHROPIC_API_KEY: undefined };

/*
 * Issue 30 A2: a session a provider failure ended (a wrong key, an outage, exhausted retries) is continued by
 * `rein resume` once the cause is fixed — a new attempt from the last durable step, recorded as such, with the
 * provider, model and base URL the session was created with.
 */
describe('resuming a session a provider failure ended', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let server: LoopbackServer;
  let goodKey = false;
  const cli = (args: string[], env: Record<string, string | undefined> = {}) => runInProcess(args, { cwd: workspace.path, env: { HOME: workspace.path, ...clean, ...env } });
  beforeAll(async () => {
    workspace = await makeTempDir('rein-provider-retry-');
    await writeFile(join(workspace.path, 'greeting.txt'), 'hello, world');
    const answer = modelExchange(shoutingModel('greeting.txt'));
    server = await startLoopbackServer((request) =>
      request.headers.authorization === 'Bearer sk-right' && goodKey ? answer(request) : jsonError(401, { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }),
    );
  });
  afterAll(async () => {
    await server.close();
    await workspace.remove();
  });

  it('fails on a wrong key with the resume hint (no recorded-provider hint), then resumes as a new attempt once the key is right', async () => {
    const baseUrl = `${server.url}/v1`;
    const run = await cli(['run', 'shout greeting.txt', '--provider', 'openai', '--base-url', baseUrl, '--model', 'loopback-1', '--mode', 'accept-edits'], { OPENAI_API_KEY: 'sk-wrong' });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/\nfailed — model call failed: auth: /);
    const id = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
    expect(run.stdout).toContain(`continue it with rein resume ${id} — a new attempt from the last durable step`);
    expect(run.stdout).not.toContain('--provider recorded');

    goodKey = true;
    const before = server.requests.length;
    // No provider flag: the provider, model and base URL the session was created with.
    const resumed = await cli(['resume', id], { OPENAI_API_KEY: 'sk-right' });
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    const retry = new RegExp(`session ${id} failed on the provider \\(auth: [^\\n]*\\); a new attempt continues it from the last durable step as (s-[\\w-]+) \\(${id} stays failed\\)`).exec(resumed.stdout);
    expect(retry).not.toBeNull();
    const retryId = retry![1]!;
    expect(resumed.stdout).toMatch(/in doubt: root:e\d+ \(callModel\) → rerun/);
    expect(resumed.stdout).toContain('✓ write greeting.txt');
    expect(resumed.stdout).toMatch(/\ncompleted · outcome/);
    expect(server.requests.slice(before).every((request) => request.path === '/v1/chat/completions' && request.body.model === 'loopback-1')).toBe(true);

    const sessions = jsonLines((await cli(['sessions', '--json'])).stdout);
    expect(sessions.find((session) => session.id === id)).toMatchObject({ status: 'failed' });
    expect(sessions.find((session) => session.id === retryId)).toMatchObject({ status: 'completed', forkedFrom: { stream: id } });
    const records = jsonLines((await cli(['show', retryId, '--json'])).stdout);
    const forked = records.find((record) => record.type === 'session.forked')!;
    expect(forked.data).toMatchObject({ parent: id, reason: expect.stringMatching(/^a new attempt at the model call root:e\d+, which failed: auth: /) });
    expect((await cli(['show', retryId])).stdout).toMatch(/forked from s-[\w-]+ at seq \d+: a new attempt at the model call/);
    expect((await cli(['replay', retryId])).code).toBe(0);
  });
});
