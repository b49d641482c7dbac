import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runScriptedSession } from 'rein/testing';
import { createRein } from '../../src/rein.js';
import { loadRecordedProvider } from '../../src/providers/recorded.provider.js';
import { createMemoryEventStore } from '../../stores/index.js';
import { makeTempDir } from '../support/temp-dir.js';

const script = {
  turns: [
    { text: 'Reading.', reasoning: 'look first', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }, { name: 'list_dir', arguments: {} }] },
    { text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'b.txt', content: 'B\n' } }], usage: { inputTokens: 40, outputTokens: 9 } },
    { text: 'Done.' },
  ],
};

const outputs = (records: ReadonlyArray<{ type: string; data: unknown }>) =>
  records.filter((record) => record.type === 'model.responded').map((record) => {
    // The model's outputs; the CallSpec describes the harness the call ran under (it names the provider).
    const { elapsedMs: _elapsed, callSpec: _callSpec, callSpecBase: _base, callSpecRef: _ref, ...rest } = record.data as Record<string, unknown>;
    return rest;
  });

describe('the recorded provider', () => {
  it('plays a logged session\'s model outputs to a new session, which then reproduces it', async () => {
    const workspace = await makeTempDir('rein-recorded-');
    try {
      await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
      const store = createMemoryEventStore();
      const original = await runScriptedSession({ script, workspace: workspace.path, store, rein: { permissions: { mode: 'accept-edits' } } });
      expect(original.result.status).toBe('completed');
      await rm(join(workspace.path, 'b.txt'));

      const { provider, recorded } = await loadRecordedProvider(store, original.session.id);
      expect(provider).toMatchObject({ name: 'recorded', model: 'script', source: original.session.id });
      expect(recorded.created.task).toBe('Follow the script.');
      const rein = await createRein({ store, workspace: workspace.path, provider, permissions: { mode: 'accept-edits' } });
      const replayed = await rein.startSession({ task: recorded.created.task });
      const result = await replayed.whenQuiet();
      expect(result.status).toBe('completed');
      const records = await store.read(replayed.id);
      expect(outputs(records)).toEqual(outputs(original.records));
      const observations = (list: typeof records) => list.filter((record) => record.type === 'tool.settled').map((record) => (record.data as { observation: string }).observation);
      expect(observations(records)).toEqual(observations(original.records));
      await rein.replaySession(replayed.id);
    } finally {
      await workspace.remove();
    }
  });

  it('a turn the log does not have is script_exhausted; a recorded failure replays as the same non-retryable error', async () => {
    const workspace = await makeTempDir('rein-recorded-');
    try {
      const store = createMemoryEventStore();
      const short = await runScriptedSession({ script: { turns: [{ text: 'one', toolCalls: [{ name: 'list_dir', arguments: {} }] }] }, workspace: workspace.path, store });
      expect(short.result.status).toBe('failed');
      const { provider } = await loadRecordedProvider(store, short.session.id);
      const events = [];
      for await (const event of provider.stream({ runId: 'x', turnId: 't', turn: 2, actor: 'root', messages: [], tools: [], options: {} })) events.push(event);
      expect(events.at(-1)).toEqual({ type: 'error', error: { code: 'script_exhausted', message: expect.any(String), retryable: false } });
      const missing = [];
      for await (const event of provider.stream({ runId: 'x', turnId: 't', turn: 3, actor: 'root', messages: [], tools: [], options: {} })) missing.push(event);
      expect(missing.at(-1)).toMatchObject({ type: 'error', error: { code: 'script_exhausted' } });
      await expect(loadRecordedProvider(store, 's-missing')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    } finally {
      await workspace.remove();
    }
  });
});
