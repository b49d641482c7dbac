import { randomBytes } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicConversation, anthropicReplyChunks, modelExchange, shoutingModel, shoutingPolicy } from '../support/loopback-model.js';
import { jsonError, startLoopbackServer, type LoopbackServer } from '../support/loopback-server.js';
import { entriesOfRows, jsonLines } from '../support/cli.js';
import { runInProcess, type InProcessResult } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';
import { openLevelEventStore } from '../../stores/index.js';

// Random, so LevelDB's compression cannot shorten them into back-references and a raw byte search is meaningful.
const apiKey = `sk-e2e-${randomBytes(24).toString('base64url')}`;
const marker = `ticket-${randomBytes(12).toString('hex')}`;
const clean = { REIN_PROVIDER: '', REIN_MODEL: '', REIN_BASE_URL: '', OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '' };

/** Every file under `directory`, recursively. */
const filesUnder = async (directory: string): Promise<string[]> => {
  const entries = await readdir(directory, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
};

describe('rein run against a loopback OpenAI-compatible endpoint', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let server: LoopbackServer;
  const outputs: InProcessResult[] = [];
  const cli = async (args: string[], env: Record<string, string> = {}) => {
    const result = await runInProcess(args, { cwd: workspace.path, env: { ...clean, ...env } });
    outputs.push(result);
    return result;
  };
  let sessionId: string;
  let baseUrl: string;

  beforeAll(async () => {
    workspace = await makeTempDir('rein-provider-e2e-');
    await writeFile(join(workspace.path, 'greeting.txt'), 'hello, world');
    const answer = modelExchange(shoutingModel('greeting.txt'), { headers: { 'x-request-id': 'req_loop' } });
    server = await startLoopbackServer((request) =>
      request.headers.authorization === `Bearer ${apiKey}`
        ? answer(request)
        : jsonError(401, { error: { message: `Incorrect API key provided: ${String(request.headers.authorization).slice(7)}.`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }),
    );
    baseUrl = `${server.url}/v1`;
  });
  afterAll(async () => {
    await server.close();
    await workspace.remove();
  });

  it('completes a read → write → verify task with a live display and a summary', async () => {
    const run = await cli(['run', `shout greeting.txt (${marker})`, '--provider', 'openai', '--base-url', baseUrl, '--model', 'loopback-1', '--mode', 'accept-edits'], { OPENAI_API_KEY: apiKey });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Reading greeting.txt first.');
    expect(run.stdout).toContain('✓ read greeting.txt');
    expect(run.stdout).toContain('✓ write greeting.txt');
    expect(run.stdout).toContain('Verified: greeting.txt now reads "HELLO, WORLD".');
    expect(run.stdout).toMatch(/completed · outcome \w+[^\n]*\n4 turns · 3 tool calls · 480 tokens/);
    expect(await readFile(join(workspace.path, 'greeting.txt'), 'utf8')).toBe('HELLO, WORLD\n');
    sessionId = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
    expect(server.requests).toHaveLength(4);
  });

  it('records the provider without secrets and one model.attempted per call; replay verifies', async () => {
    const records = jsonLines((await cli(['show', sessionId, '--json'])).stdout);
    expect(records[0]!.data.provider).toEqual({ name: 'openai', model: 'loopback-1', source: baseUrl });
    expect(entriesOfRows(records).filter((record) => record.type === 'model.attempted').map((record) => record.data)).toEqual(
      [1, 2, 3, 4].map(() => expect.objectContaining({ attempt: 1, provider: 'openai', model: 'loopback-1', requestId: 'req_loop', outcome: 'ok', decision: 'done' })),
    );
    const replay = await cli(['replay', sessionId]);
    expect(replay.code).toBe(0);
    expect(replay.stdout).toMatch(/^verified \d+ records/);
  });

  it('--provider recorded reproduces the session from its log without calling the endpoint', async () => {
    await writeFile(join(workspace.path, 'greeting.txt'), 'hello, world');
    const before = server.requests.length;
    const run = await cli(['run', '--provider', 'recorded', '--from', sessionId, '--mode', 'accept-edits']);
    expect(run.code).toBe(0);
    expect(server.requests).toHaveLength(before);
    expect(await readFile(join(workspace.path, 'greeting.txt'), 'utf8')).toBe('HELLO, WORLD\n');
    const replayId = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
    const outputsOf = async (id: string) =>
      jsonLines((await cli(['show', id, '--json'])).stdout)
        .filter((record) => record.type === 'model.responded' || record.type === 'tool.settled')
        .map(({ type, data: { elapsedMs: _elapsed, callSpec: _callSpec, callSpecBase: _base, callSpecRef: _ref, ...data } }) => ({ type, data }));
    expect(await outputsOf(replayId)).toEqual(await outputsOf(sessionId));
    const created = jsonLines((await cli(['show', replayId, '--json'])).stdout)[0]!;
    expect(created.data).toMatchObject({ task: `shout greeting.txt (${marker})`, provider: { name: 'recorded', model: 'loopback-1', source: sessionId } });
    expect((await cli(['replay', replayId])).code).toBe(0);
  });

  it('takes the provider from the environment, and from rein.config.json, which tools may not touch', async () => {
    await writeFile(join(workspace.path, 'greeting.txt'), 'hello, world');
    const fromEnv = await cli(['run', 'shout greeting.txt', '--json', '--mode', 'accept-edits'], { REIN_PROVIDER: 'openai', REIN_MODEL: 'loopback-1', REIN_BASE_URL: baseUrl, OPENAI_API_KEY: apiKey });
    expect(fromEnv.code).toBe(0);
    expect(entriesOfRows(jsonLines(fromEnv.stdout)).find((record) => record.type === 'session.ended')).toMatchObject({ type: 'session.ended', data: { status: 'completed' } });

    await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ provider: 'openai', model: 'loopback-1', baseUrl, apiKeyEnv: 'LOOPBACK_API_KEY' }));
    const protectedModel = await startLoopbackServer(modelExchange(shoutingModel('rein.config.json')));
    try {
      const attempt = await cli(['run', 'read the config', '--base-url', `${protectedModel.url}/v1`], { LOOPBACK_API_KEY: apiKey });
      expect(attempt.stdout).toContain('✗ read rein.config.json Denied');
    } finally {
      await protectedModel.close();
    }
    await writeFile(join(workspace.path, 'greeting.txt'), 'hello, world');
    const fromFile = await cli(['run', 'shout greeting.txt', '--mode', 'accept-edits'], { LOOPBACK_API_KEY: apiKey });
    expect(fromFile.code).toBe(0);
    expect(await readFile(join(workspace.path, 'greeting.txt'), 'utf8')).toBe('HELLO, WORLD\n');
    await writeFile(join(workspace.path, 'rein.config.json'), '{ "provider": "openai", "apiKey": "sk-nope" }');
    const invalid = await cli(['run', 'x']);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('CONFIG_INVALID');
    await writeFile(join(workspace.path, 'rein.config.json'), '{}');
  });

  it('a rejected key fails fast with exit 1 and an auth error that does not contain the key', async () => {
    const wrongKey = 'sk-e2e-WRONG-0000111122223333';
    const run = await cli(['run', 'shout greeting.txt', '--provider', 'openai', '--base-url', baseUrl, '--model', 'loopback-1'], { OPENAI_API_KEY: wrongKey });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('model call failed: auth');
    expect(run.stdout + run.stderr).not.toContain(wrongKey);
    const failedId = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
    const shown = await cli(['show', failedId, '--json']);
    expect(jsonLines(shown.stdout).find((record) => record.type === 'model.failed')!.data.error).toMatchObject({ code: 'auth', retryable: false });
    expect(shown.stdout).not.toContain(wrongKey);
  });

  it('missing keys, unknown providers and missing models are usage errors (exit 2)', async () => {
    const noKey = await cli(['run', 'x', '--provider', 'openai', '--model', 'gpt-4.1']);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('USAGE');
    expect(noKey.stderr).toContain('OPENAI_API_KEY');
    const noAnthropicKey = await cli(['run', 'x', '--provider', 'anthropic', '--model', 'claude-sonnet-4-5']);
    expect(noAnthropicKey.code).toBe(2);
    expect(noAnthropicKey.stderr).toContain('ANTHROPIC_API_KEY');
    expect((await cli(['run', 'x', '--provider', 'gemini'])).code).toBe(2);
    expect((await cli(['run', 'x', '--provider', 'openai', '--base-url', baseUrl])).code).toBe(2);
    expect((await cli(['run', 'x', '--provider', 'recorded'])).code).toBe(2);
    expect((await cli(['run', 'x', '--provider', 'recorded', '--from', 's-missing'])).code).toBe(1);
  });

  it('runs the same task against a loopback Anthropic Messages endpoint and replays', async () => {
    await writeFile(join(workspace.path, 'greeting.txt'), 'hello, world');
    const anthropic = await startLoopbackServer((request) =>
      request.headers['x-api-key'] === apiKey && request.path === '/v1/messages'
        ? { chunks: anthropicReplyChunks(shoutingPolicy('greeting.txt')(anthropicConversation(request.body))) }
        : jsonError(401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }),
    );
    try {
      const run = await cli(['run', 'shout greeting.txt', '--provider', 'anthropic', '--base-url', anthropic.url, '--model', 'claude-loopback', '--mode', 'accept-edits'], { ANTHROPIC_API_KEY: apiKey });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('✓ write greeting.txt');
      expect(run.stdout).toContain('Verified: greeting.txt now reads "HELLO, WORLD".');
      expect(anthropic.requests).toHaveLength(4);
      expect(anthropic.requests[3]!.body.messages.at(-1).content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'root_e5_0' });
      const id = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
      expect(jsonLines((await cli(['show', id, '--json'])).stdout)[0]!.data.provider).toEqual({ name: 'anthropic', model: 'claude-loopback', source: anthropic.url });
      expect((await cli(['replay', id])).code).toBe(0);
    } finally {
      await anthropic.close();
    }
  });

  it('never writes the key anywhere: not in the store, the output, or --json', async () => {
    const everything = await cli(['show', sessionId, '--json']);
    const sessions = await cli(['sessions', '--json']);
    const stored = await Promise.all((await filesUnder(join(workspace.path, '.rein'))).map((file) => readFile(file)));
    expect(stored.length).toBeGreaterThan(5);
    // A positive control: a random string the records do hold is found by the same search, so the search can fail.
    expect(stored.some((bytes) => bytes.includes(Buffer.from(marker)))).toBe(true);
    const store = await openLevelEventStore(join(workspace.path, '.rein'));
    try {
      const streams = await store.streams();
      expect(streams.length).toBeGreaterThanOrEqual(6);
      for (const { stream } of streams) {
        const decoded = JSON.stringify(await store.read(stream));
        expect(decoded).not.toContain(apiKey);
        expect(decoded).not.toContain('sk-e2e-');
      }
    } finally {
      await store.close();
    }
    for (const bytes of stored) expect(bytes.includes(Buffer.from(apiKey))).toBe(false);
    for (const output of [...outputs, everything, sessions]) {
      expect(output.stdout).not.toContain(apiKey);
      expect(output.stderr).not.toContain(apiKey);
    }
  });
});
