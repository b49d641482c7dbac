import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { firstValueFrom, takeWhile, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryEventStore, createOpenAICompatibleProvider, createRein } from '../src/index.js';
import { modelExchange, shoutingModel } from './support/loopback-model.js';
import { startLoopbackServer, type LoopbackServer } from './support/loopback-server.js';
import { makeTempDir } from './support/temp-dir.js';

const fileOf = (body: { messages: Array<{ role: string; content?: string | null }> }): string => /shout (\S+)/.exec(body.messages.find((message) => message.role === 'user')?.content ?? '')?.[1] ?? 'missing.txt';
const shoutAny = (body: any) => shoutingModel(fileOf(body))(body);

let server: LoopbackServer | undefined;
let workspace: { path: string; remove: () => Promise<void> } | undefined;
afterEach(async () => {
  await server?.close();
  await workspace?.remove();
  server = undefined;
  workspace = undefined;
});

describe('the embedding API', () => {
  it('runs several sessions concurrently in one process over one harness', async () => {
    workspace = await makeTempDir('rein-embed-');
    const files = ['a.txt', 'b.txt', 'c.txt', 'd.txt'];
    for (const file of files) await writeFile(join(workspace.path, file), `hello from ${file}`);
    const answer = modelExchange(shoutAny, { delayMs: 5 });
    server = await startLoopbackServer((request) => answer(request));
    const store = createMemoryEventStore();
    const rein = await createRein({ store, workspace: workspace.path, provider: createOpenAICompatibleProvider({ model: 'loopback-1', baseUrl: `${server.url}/v1` }), permissions: { mode: 'accept-edits' } });
    expect(rein.provider).toEqual({ name: 'openai', model: 'loopback-1', source: `${server.url}/v1` });

    const sessions = await Promise.all(files.map((file) => rein.startSession({ task: `shout ${file}` })));
    expect(rein.runningSessions().map((session) => session.id).sort()).toEqual(sessions.map((session) => session.id).sort());
    expect(rein.session(sessions[0]!.id)).toBe(sessions[0]);
    const results = await Promise.all(sessions.map((session) => session.whenQuiet()));

    expect(results.map((result) => result.status)).toEqual(files.map(() => 'completed'));
    expect(new Set(server.requests.slice(0, 4).map((request) => fileOf(request.body))).size).toBe(4);
    for (const file of files) expect(await readFile(join(workspace.path, file), 'utf8')).toBe(`HELLO FROM ${file.toUpperCase()}\n`);
    for (const [index, session] of sessions.entries()) {
      const records = await store.read(session.id);
      const paths = records.filter((record) => record.type === 'tool.settled').map((record) => (record.data as { observation: string }).observation);
      expect(paths.every((observation) => !files.filter((file) => file !== files[index]).some((other) => observation.toLowerCase().includes(`from ${other}`)))).toBe(true);
      expect(await rein.replaySession(session.id)).toEqual({ verified: records.length, inputs: expect.any(Number), regenerated: expect.any(Number), head: records.at(-1)!.seq });
      // Up to the head: facts the session's end work records (the workspace capture's last flush) may follow session.ended.
      const history = await firstValueFrom(rein.records(session.id).pipe(takeWhile((record) => record.seq < records.at(-1)!.seq, true), toArray()));
      expect(history.map((record) => record.seq)).toEqual(records.map((record) => record.seq));
    }
    expect(rein.runningSessions()).toEqual([]);
  });

  it('refuses a workspace that does not exist or is a file with a typed USAGE error', async () => {
    workspace = await makeTempDir('rein-embed-');
    await writeFile(join(workspace.path, 'file.txt'), 'x');
    const provider = createOpenAICompatibleProvider({ model: 'loopback-1', baseUrl: 'http://127.0.0.1:9/v1' });
    await expect(createRein({ store: createMemoryEventStore(), workspace: join(workspace.path, 'nope'), provider })).rejects.toMatchObject({ code: 'USAGE', message: expect.stringContaining('does not exist') });
    await expect(createRein({ store: createMemoryEventStore(), workspace: join(workspace.path, 'file.txt'), provider })).rejects.toMatchObject({ code: 'USAGE', message: expect.stringContaining('is not a directory') });
  });

  it('cancels a session mid-stream, and close() interrupts the rest resumably', async () => {
    workspace = await makeTempDir('rein-embed-');
    await writeFile(join(workspace.path, 'a.txt'), 'hello');
    let slow = true;
    const answer = modelExchange(shoutAny);
    server = await startLoopbackServer((request) => (slow ? { chunks: answer(request).chunks.slice(0, 2), hang: true } : answer(request)));
    const store = createMemoryEventStore();
    const provider = createOpenAICompatibleProvider({ model: 'loopback-1', baseUrl: `${server.url}/v1` });
    const rein = await createRein({ store, workspace: workspace.path, provider, permissions: { mode: 'accept-edits' } });

    const doomed = await rein.startSession({ task: 'shout a.txt' });
    const live = firstValueFrom(doomed.live$.pipe(takeWhile((event) => event.type !== 'model.delta', true), toArray()));
    await live;
    await doomed.cancel('the user changed their mind');
    expect((await doomed.whenQuiet()).status).toBe('cancelled');

    const paused = await rein.startSession({ task: 'shout a.txt' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await rein.close();
    expect(paused.result().status).toBe('interrupted');
    expect(rein.runningSessions()).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.abandoned).toBe(2);

    slow = false;
    const again = await createRein({ store, workspace: workspace.path, provider, permissions: { mode: 'accept-edits' } });
    const { session, report } = await again.resumeSession(paused.id);
    expect(report.resolutions).toEqual([expect.objectContaining({ kind: 'callModel', resolution: 'rerun' })]);
    expect((await session.whenQuiet()).status).toBe('completed');
    expect(await readFile(join(workspace.path, 'a.txt'), 'utf8')).toBe('HELLO\n');
  });
});
