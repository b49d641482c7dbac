import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryEventStore, createRein, createScriptedProvider, parseScript, type Rein } from '../../src/index.js';
import { SessionDetail, SessionList, TraceBody } from '../../src/serve/api-schemas.js';
import { listenReinServer, type ListeningReinServer } from '../../src/serve/rein-server.js';
import { makeTempDir } from '../support/temp-dir.js';

const failingTest = "const test = require('node:test');\nconst assert = require('node:assert');\ntest('adds', () => { assert.strictEqual(1 + 1, 3); });\n";
const claimsSuccess = { turns: [{ text: 'Running the tests.', toolCalls: [{ name: 'bash', arguments: { command: 'node --test' } }] }, { text: 'All tests pass now.' }] };

/*
 * Issue 30 A1: the viewer carries the trace outcome beside the lifecycle status — a session that `completed` while its
 * last verification failed is listed and shown `failed`, as `rein sessions`, the summary and the exit code say.
 */
describe('the viewer’s outcome of a completed run whose tests fail', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let rein: Rein;
  let listening: ListeningReinServer;
  let id: string;
  const token = 'outcome-token-0123456789';
  const get = async (path: string): Promise<unknown> => (await fetch(`${listening.origin}${path}`, { headers: { authorization: `Bearer ${token}` } })).json();

  beforeAll(async () => {
    workspace = await makeTempDir('rein-serve-outcome-');
    await mkdir(join(workspace.path, 'test'));
    await writeFile(join(workspace.path, 'test', 'add.test.js'), failingTest);
    const store = createMemoryEventStore();
    rein = await createRein({ store, workspace: workspace.path, provider: createScriptedProvider(parseScript(claimsSuccess)), permissions: { rules: ['allow bash:node --test'] }, memory: false });
    const session = await rein.startSession({ task: 'make the tests pass' });
    expect((await session.whenQuiet()).status).toBe('completed');
    id = session.id;
    listening = await listenReinServer({ rein, token });
  });
  afterAll(async () => {
    await listening?.close();
    await rein?.close();
    await workspace.remove();
  });

  it('lists it completed with the outcome failed, and its page and trace say the same', async () => {
    const { sessions } = SessionList.parse(await get('/api/sessions'));
    expect(sessions.find((session) => session.id === id)).toMatchObject({ status: 'completed', outcome: 'failed' });
    expect(SessionDetail.parse(await get(`/api/sessions/${id}`))).toMatchObject({ status: 'completed', outcome: 'failed' });
    expect(TraceBody.parse(await get(`/api/sessions/${id}/trace`))).toMatchObject({ outcome: 'failed', claimedSuccess: true });
  });

  it('a fork nobody resumed is listed forked (issue 30 A4), not running', async () => {
    const records = await rein.store.read(id);
    const settled = records.find((record) => record.type === 'tool.settled')!;
    const boundary = records.find((record) => record.seq > settled.seq && record.type === 'model.responded')!.seq - 1;
    const fork = await rein.forkSession(id, boundary);
    const { sessions } = SessionList.parse(await get('/api/sessions'));
    expect(sessions.find((session) => session.id === fork)).toMatchObject({ status: 'forked', outcome: 'forked', forkedFrom: { stream: id, seq: boundary } });
  });
});
