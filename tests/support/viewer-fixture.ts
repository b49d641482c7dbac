import { join } from 'node:path';
import { createRein, createScriptedProvider, parseScript, type Rein } from '../../src/index.js';
import { openLevelEventStore, type LevelEventStore } from '../../stores/level-event-store.js';
import { listenReinServer, type ListeningReinServer } from '../../src/serve/rein-server.js';
import { writeFile } from 'node:fs/promises';
import { buggyStats, seedStatsProject } from './agent-fixtures.js';
import { makeTempDir } from './temp-dir.js';

/** The demo's script: look around, run the tests (asks for approval), read, fix, run them again, answer. */
export const fixScript = {
  turns: [
    { text: 'I will look at the project layout.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }, { name: 'glob', arguments: { pattern: '**/*.js' } }] },
    { text: 'Running the tests to see what fails.', toolCalls: [{ name: 'bash', arguments: { command: 'node --test', description: 'run the test suite' } }] },
    { text: 'Reading the implementation.', toolCalls: [{ name: 'read', arguments: { path: 'src/stats.js' } }] },
    { text: 'sum subtracts; fixing it to add.', toolCalls: [{ name: 'edit', arguments: { path: 'src/stats.js', old_string: 't - x', new_string: 't + x' } }] },
    { text: 'Running the tests again.', toolCalls: [{ name: 'bash', arguments: { command: 'node --test', description: 'run the test suite' } }] },
    { text: 'Fixed: sum subtracted each value. The tests pass now.' },
  ],
};

/** A workspace with a LevelDB store, a harness over it (bash asks for approval) and a server reading a second store object. */
export interface ViewerFixture {
  workspace: string;
  root: string;
  writer: LevelEventStore;
  reader: LevelEventStore;
  rein: Rein;
  listening: ListeningReinServer;
  token: string;
  /** Run a session of the script here to its end, answering every approval with allow-once. */
  runToEnd(task?: string): Promise<string>;
  /** Restart the server on the same port and token (a new server object and reader). */
  restart(): Promise<void>;
  stopServer(): Promise<void>;
  close(): Promise<void>;
}

export const startViewerFixture = async (options: { port?: number } = {}): Promise<ViewerFixture> => {
  const directory = await makeTempDir('rein-viewer-');
  const workspace = directory.path;
  await seedStatsProject(workspace);
  const root = join(workspace, '.rein');
  const writer = await openLevelEventStore(root, { followIntervalMs: 50 });
  const rein = await createRein({ store: writer, workspace, provider: createScriptedProvider(parseScript(fixScript)), permissions: { mode: 'accept-edits' }, memory: false, protectedPaths: [root] });
  const token = 'test-token-0123456789';
  let reader = await openLevelEventStore(root, { readOnly: true, freshReads: true, followIntervalMs: 50 });
  let listening = await listenReinServer({ rein, store: reader, token, ...(options.port ? { port: options.port } : {}) });
  const fixture: ViewerFixture = {
    workspace,
    root,
    writer,
    get reader() {
      return reader;
    },
    rein,
    get listening() {
      return listening;
    },
    token,
    runToEnd: async (task = 'fix the failing test') => {
      await writeFile(join(workspace, 'src', 'stats.js'), buggyStats);
      const session = await rein.startSession({ task });
      let result = await session.whenQuiet();
      while (result.status === 'paused') {
        const pending = session.pendingApprovals();
        if (pending.length === 0) break;
        for (const request of pending) await session.approve(request.approvalId, { decision: 'allow-once' });
        result = await session.whenQuiet();
      }
      await session.release();
      return session.id;
    },
    stopServer: async () => {
      await listening.close();
      await reader.close();
    },
    restart: async () => {
      const port = listening.port;
      await fixture.stopServer();
      reader = await openLevelEventStore(root, { readOnly: true, freshReads: true, followIntervalMs: 50 });
      listening = await listenReinServer({ rein, store: reader, token, port });
    },
    close: async () => {
      await listening.close().catch(() => undefined);
      await rein.close();
      await reader.close();
      await writer.close();
      await directory.remove();
    },
  };
  return fixture;
};
