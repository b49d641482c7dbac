import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMemoryEventStore, createRein, createScriptedProvider, parseScript } from '../../src/index.js';
import type { EventStore } from '../../stores/event-store.js';
import { makeTempDir } from '../support/temp-dir.js';

/**
 * An interrupt that lands while the step applying a model reply is being written: the tool calls that reply asks for
 * must not start after `session.interrupted` (found while testing trial 7 G7: the session went on and completed).
 */
describe('an interrupt racing the write of a model reply', () => {
  it('starts none of the reply\'s tool calls: the session ends interrupted and the write never happens', async () => {
    const workspace = await makeTempDir('rein-interrupt-race-');
    try {
      const inner = createMemoryEventStore();
      let reached!: () => void;
      const reachedWrite = new Promise<void>((resolve) => (reached = resolve));
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      // The store, except that the batch holding model.responded waits at the gate.
      const store = new Proxy(inner, {
        get(target, key) {
          const value = Reflect.get(target, key, target) as unknown;
          if (key !== 'append') return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
          return async (stream: string, drafts: ReadonlyArray<{ type: string }>, options: unknown) => {
            if (drafts.some((draft) => draft.type === 'model.responded')) {
              reached();
              await gate;
            }
            return (target.append as (...args: unknown[]) => Promise<unknown>).call(target, stream, drafts, options);
          };
        },
      }) as EventStore;
      const script = { turns: [{ text: 'writing', toolCalls: [{ name: 'write', arguments: { path: 'x.txt', content: 'x' } }] }, { text: 'Done.' }] };
      const rein = await createRein({ store, workspace: workspace.path, provider: createScriptedProvider(parseScript(script)), permissions: { mode: 'accept-edits' } });
      const session = await rein.createSession({ task: 'write' });
      void session.send('write').catch(() => undefined);
      await reachedWrite;
      const interrupted = session.interrupt('the user pressed Ctrl-C');
      release();
      await interrupted;
      const result = await session.whenQuiet();
      expect(result.status).toBe('interrupted');
      const types = (await inner.read(session.id)).map((record) => record.type);
      const at = types.indexOf('session.interrupted');
      expect(at).toBeGreaterThan(-1);
      expect(types.slice(at + 1).filter((type) => type === 'tool.started' || type === 'tool.settled')).toEqual([]);
      expect(types).not.toContain('tool.started');
      expect(existsSync(join(workspace.path, 'x.txt'))).toBe(false);
      await rein.close();
    } finally {
      await workspace.remove();
    }
  });
});
