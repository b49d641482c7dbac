import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../models/model-contract.js';
import { openLevelEventStore } from '../../stores/level-event-store.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { createRein } from '../../src/rein.js';
import { makeTempDir } from '../support/temp-dir.js';
import { flattenRecords } from '../../src/host/step-record.js';

/** The scripted provider, with one model call held until the test lets it answer (no timing involved). */
const gated = (turns: unknown[], holdCall: number) => {
  const inner = createScriptedProvider(parseScript({ turns }));
  const requests: ModelRequest[] = [];
  let entered!: () => void;
  let release!: () => void;
  const inCall = new Promise<void>((resolve) => (entered = resolve));
  const gate = new Promise<void>((resolve) => (release = resolve));
  const provider: ModelProvider = {
    name: inner.name,
    async *stream(request) {
      requests.push(request);
      if (requests.length === holdCall) {
        entered();
        await gate;
      }
      yield* inner.stream(request);
    },
  };
  return { provider, requests, inCall, release };
};

const texts = (request: ModelRequest) => JSON.stringify(request.messages);

describe('follow-up messages', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  beforeEach(async () => {
    workspace = await makeTempDir('rein-follow-up-');
  });
  afterEach(() => workspace.remove());

  it('a message sent while the last model call runs gets a turn of its own before the session completes (D16)', async () => {
    const store = await openLevelEventStore(`${workspace.path}/.rein`);
    const model = gated([{ text: 'Done.' }, { text: 'Answer to more.' }], 1);
    const rein = await createRein({ store, workspace: workspace.path, provider: model.provider });
    try {
      const session = await rein.startSession({ task: 'go' });
      await model.inCall;
      await session.send('more');
      model.release();
      const result = await session.whenQuiet();
      expect(result.status).toBe('completed');
      expect(model.requests).toHaveLength(2);
      expect(texts(model.requests[0]!)).not.toContain('more');
      expect(texts(model.requests[1]!)).toContain('more');
      const records = await store.read(session.id);
      expect(flattenRecords(records).filter((record) => record.type === 'session.ended')).toHaveLength(1);
    } finally {
      await rein.close();
      await store.close();
    }
  });

  it('a message to an ended session is refused with SESSION_ENDED and nothing is written (D17)', async () => {
    const store = await openLevelEventStore(`${workspace.path}/.rein`);
    const rein = await createRein({ store, workspace: workspace.path, provider: createScriptedProvider(parseScript({ turns: [{ text: 'Done.' }] })) });
    try {
      const session = await rein.startSession({ task: 't' });
      const quiet = await session.whenQuiet();
      expect(quiet.status).toBe('completed');
      await expect(session.send('after end')).rejects.toMatchObject({ code: 'SESSION_ENDED' });
      expect(await store.head(session.id)).toBe(quiet.head);
    } finally {
      await rein.close();
      await store.close();
    }
  });
});
