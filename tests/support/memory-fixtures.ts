import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore } from '../../stores/event-store.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { createRein, type ReinOptions } from '../../src/rein.js';
import type { SessionResult } from '../../src/host/session-host.js';

/** A tiny project whose `node --test` passes: a real test runner for verified observations. */
export const seedPassingTests = async (root: string): Promise<void> => {
  await writeFile(join(root, 'sum.test.mjs'), "import { test } from 'node:test';\nimport assert from 'node:assert';\ntest('adds', () => assert.equal(1 + 1, 2));\n");
};

/** A script that runs `command` through bash (a verification when it runs tests) and then finishes. */
export const verifyScript = (command: string) => ({
  turns: [{ text: 'Running the tests.', toolCalls: [{ name: 'bash', arguments: { command } }] }, { text: 'Done: the tests pass.' }],
});

/** Run one scripted session to quiet in a fresh harness over `store`; every approval is answered in advance. */
export const runMemorySession = async (options: { store: EventStore; workspace: string; script: unknown; task?: string; rein?: Partial<Omit<ReinOptions, 'store' | 'workspace' | 'provider'>> }): Promise<{ result: SessionResult; records: RecordEnvelope[]; sessionId: string }> => {
  // bash runs without a login shell: no profile of this machine takes part in a test.
  const rein = await createRein({ permissions: { approveAll: true }, sandbox: { loginShell: false }, ...options.rein, store: options.store, workspace: options.workspace, provider: createScriptedProvider(parseScript(options.script)) });
  const session = await rein.startSession({ task: options.task ?? 'Check the tests.' });
  const result = await session.whenQuiet();
  return { result, records: await options.store.read(session.id), sessionId: session.id };
};

/** The records of the workspace's governance stream of one type. */
export const governanceOf = async (store: EventStore, type?: string): Promise<RecordEnvelope[]> => (await store.read('memory')).filter((record) => type === undefined || record.type === type);
