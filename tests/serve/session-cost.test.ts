import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryEventStore, createRein, createScriptedProvider, parseScript, type Rein } from '../../src/index.js';
import { SessionDetail, SessionList } from '../../src/serve/api-schemas.js';
import { listenReinServer, type ListeningReinServer } from '../../src/serve/rein-server.js';
import { makeTempDir } from '../support/temp-dir.js';

// The root's calls report 10,000 input tokens of which 4,000 are cache reads; the child's none. At $100/M input and
// output and $10/M cache reads a root call costs (6,000 × 100 + 4,000 × 10) / 1e6 = $0.64, a child call $1.00.
const rootUsage = { inputTokens: 10_000, outputTokens: 0, cacheReadTokens: 4_000 };
const childUsage = { inputTokens: 10_000, outputTokens: 0 };
const script = parseScript({
  turns: [
    { text: 'd', toolCalls: [{ name: 'delegate_task', arguments: { tasks: [{ id: 'e1', role: 'explorer', objective: 'look' }] } }], usage: rootUsage },
    { text: 'Done.', usage: rootUsage },
  ],
  agents: {
    explorer: {
      turns: [
        { text: 'r', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }], usage: childUsage },
        { text: 's', toolCalls: [{ name: 'submit_report', arguments: { status: 'completed', summary: 'read it', findings: [] } }], usage: childUsage },
      ],
    },
  },
});

const get = async <T>(listening: ListeningReinServer, token: string, path: string, schema: { parse: (value: unknown) => T }): Promise<T> => {
  const response = await fetch(`${listening.origin}${path}`, { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  return schema.parse(await response.json());
};

/** The viewer's API states each session's cost at the server's prices and its cache hit rate, in all and per agent. */
describe('the session cost in rein serve’s API', () => {
  let directory: Awaited<ReturnType<typeof makeTempDir>>;
  let rein: Rein;
  let sessionId: string;

  beforeAll(async () => {
    directory = await makeTempDir('rein-serve-cost-');
    await writeFile(join(directory.path, 'a.txt'), 'hello\n');
    rein = await createRein({ store: createMemoryEventStore(), workspace: directory.path, provider: createScriptedProvider(script), permissions: { mode: 'accept-edits' }, memory: false, prices: { script: { input: 100, output: 100, cacheRead: 10 } } });
    const session = await rein.createSession({ task: 'delegate and finish' });
    sessionId = session.id;
    await session.send('delegate and finish');
    await session.whenQuiet();
  });
  afterAll(async () => {
    await rein?.close();
    await directory?.remove();
  });

  it('lists each session’s cost at the harness’s prices and its cache hit rate, and splits them per agent on the session', async () => {
    const listening = await listenReinServer({ rein, token: 'cost-token' });
    try {
      const { sessions } = await get(listening, 'cost-token', '/api/sessions', SessionList);
      const row = sessions.find((candidate) => candidate.id === sessionId)!;
      expect(row.turns).toBe(4);
      expect(row.costUsd).toBeCloseTo(0.64 * 2 + 1 * 2, 10);
      expect(row.costUnpriced).toBeUndefined();
      expect(row.cacheHitRate).toBeCloseTo(8_000 / 40_000, 10);
      const detail = await get(listening, 'cost-token', `/api/sessions/${sessionId}`, SessionDetail);
      expect(detail.costUsd).toBeCloseTo(3.28, 10);
      const [root, child, ...more] = detail.agents;
      expect(more).toEqual([]);
      expect(root).toMatchObject({ actor: 'root', calls: 2, inputTokens: 20_000, cacheReadTokens: 8_000 });
      expect(root!.costUsd).toBeCloseTo(1.28, 10);
      expect(root!.cacheHitRate).toBeCloseTo(0.4, 10);
      expect(child).toMatchObject({ calls: 2, inputTokens: 20_000, cacheReadTokens: 0, cacheHitRate: 0 });
      expect(child!.actor).toMatch(/^root\/.+\/e1$/);
      expect(child!.costUsd).toBeCloseTo(2, 10);
    } finally {
      await listening.close();
    }
  });

  it('charges at the server’s own prices when it is given them (rein serve passes rein.config.json’s)', async () => {
    const listening = await listenReinServer({ rein, token: 'cost-token-2', prices: { script: { input: 1, output: 1 } } });
    try {
      const detail = await get(listening, 'cost-token-2', `/api/sessions/${sessionId}`, SessionDetail);
      // Without a cache-read price, cache reads are charged as input: 40,000 input tokens at $1/M.
      expect(detail.costUsd).toBeCloseTo(0.04, 10);
      expect(detail.agents.map((agent) => agent.costUsd)).toEqual([expect.closeTo(0.02, 10), expect.closeTo(0.02, 10)]);
    } finally {
      await listening.close();
    }
  });
});
