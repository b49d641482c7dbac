import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventStore } from '../../stores/event-store.js';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { createRein } from '../../src/rein.js';
import { governanceOf } from '../support/memory-fixtures.js';
import { makeTempDir } from '../support/temp-dir.js';

let workspace: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  workspace = await makeTempDir('rein-memory-pass-');
});
afterEach(() => workspace.remove());

/** A store whose first append to the governance stream fails (a process dying in the middle of the end-of-session pass). */
const failingOnce = (store: EventStore): EventStore => {
  let failed = false;
  return new Proxy(store, {
    get(target, property) {
      if (property !== 'append') {
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return (stream: string, ...rest: Parameters<EventStore['append']> extends [string, ...infer Tail] ? Tail : never) => {
        if (stream === 'memory' && !failed) {
          failed = true;
          return Promise.reject(Object.assign(new Error('disk went away'), { code: 'EIO' }));
        }
        return target.append(stream, ...rest);
      };
    },
  });
};

describe('the end-of-session governance pass', () => {
  it('a pass cut short leaves the session intact, and resuming the ended session governs its candidates once', async () => {
    const store = createMemoryEventStore();
    const script = { turns: [{ text: 'Noting.', toolCalls: [{ name: 'memory_write', arguments: { content: 'The API docs live in docs/api', kind: 'project_fact' } }] }, { text: 'Done.' }] };
    const first = await createRein({ store: failingOnce(store), workspace: workspace.path, provider: createScriptedProvider(parseScript(script)) });
    const session = await first.startSession({ task: 'Note where the docs are.' });
    expect((await session.whenQuiet()).status).toBe('completed');
    expect(await governanceOf(store)).toEqual([]);

    const second = await createRein({ store, workspace: workspace.path, provider: createScriptedProvider(parseScript(script)) });
    const { session: resumed, report } = await second.resumeSession(session.id);
    expect(report.alreadyEnded).toBe(true);
    await resumed.whenQuiet();
    expect((await governanceOf(store, 'memory.submitted')).map((record) => (record.data as { sessionId: string }).sessionId)).toEqual([session.id]);
    const again = await second.resumeSession(session.id);
    await again.session.whenQuiet();
    expect(await governanceOf(store, 'memory.submitted')).toHaveLength(1);
  });
});
