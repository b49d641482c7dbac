import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryEventStore, createRein, createScriptedProvider, defaultMaxParallelToolCalls, defineTool, flattenRecords, loadWorkspaceConfig, type ModelRequest, type ModelProvider } from 'rein';
import { makeTempDir } from '../support/temp-dir.js';

let workspace: { path: string; remove: () => Promise<void> };
beforeAll(async () => {
  workspace = await makeTempDir('rein-parallel-limit-');
});
afterAll(() => workspace.remove());

/** A host tool that changes something (not read-only) and counts its runs. */
const counter = () => {
  const ran: number[] = [];
  const tool = defineTool({ name: 'mark', description: 'Mark a number.', parameters: z.object({ n: z.number() }), execute: async ({ n }) => (ran.push(n), `marked ${n}`) });
  return { ran, tool };
};

/** A model replying once with `count` calls of `mark`, then answering with what the second request showed it. */
const wideModel = (count: number): ModelProvider & { requests: ModelRequest[] } => {
  const requests: ModelRequest[] = [];
  return {
    name: 'wide',
    model: 'wide-1',
    requests,
    async *stream(request) {
      requests.push(request);
      yield { type: 'started' };
      if (request.turn === 1) {
        for (let n = 0; n < count; n++) yield { type: 'tool-intent', providerCallId: `c${n}`, name: 'mark', arguments: { n } };
        yield { type: 'finished', stopReason: 'tool_use' };
        return;
      }
      yield { type: 'text-delta', text: 'Done.' };
      yield { type: 'finished', stopReason: 'end_turn' };
    },
  };
};

const settledOf = (records: Parameters<typeof flattenRecords>[0]) =>
  flattenRecords(records).filter((record) => record.type === 'tool.settled').map((record) => record.data as { callId: string; status: string; errorCode?: string; observation: string });

describe('more tool calls in one reply than the parallel-call limit (issue 30 item 18)', () => {
  it('the calls within the default limit run, those past it are refused unrun as results the model sees, and the session completes', async () => {
    const { ran, tool } = counter();
    const provider = wideModel(defaultMaxParallelToolCalls + 3);
    const store = createMemoryEventStore();
    const rein = await createRein({ store, workspace: workspace.path, provider, tools: [tool], permissions: { rules: ['allow mark'] } });
    const session = await rein.startSession({ task: 'mark them all' });
    expect((await session.whenQuiet()).status).toBe('completed');
    expect(ran.sort((a, b) => a - b)).toEqual(Array.from({ length: defaultMaxParallelToolCalls }, (_, n) => n));
    const settled = settledOf(await store.read(session.id));
    expect(settled).toHaveLength(defaultMaxParallelToolCalls + 3);
    const refused = settled.filter((result) => result.status === 'error');
    expect(refused).toHaveLength(3);
    for (const result of refused) {
      expect(result.errorCode).toBe('Denied');
      expect(result.observation).toContain(`at most ${defaultMaxParallelToolCalls} tool calls of one reply run`);
    }
    // The model saw every result, the refusals included, in its next request.
    expect(JSON.stringify(provider.requests[1]?.messages)).toContain('was not run: at most');
    await rein.close();
  });

  it('the limit is a library option, and `maxParallelToolCalls` in rein.config.json', async () => {
    const { ran, tool } = counter();
    const store = createMemoryEventStore();
    const rein = await createRein({ store, workspace: workspace.path, provider: wideModel(5), tools: [tool], permissions: { rules: ['allow mark'] }, maxParallelToolCalls: 2 });
    const session = await rein.startSession({ task: 'mark five' });
    expect((await session.whenQuiet()).status).toBe('completed');
    expect(ran.sort()).toEqual([0, 1]);
    expect(settledOf(await store.read(session.id)).filter((result) => result.status === 'error')).toHaveLength(3);
    await rein.close();
    await expect(createRein({ store, workspace: workspace.path, provider: wideModel(1), maxParallelToolCalls: 0 })).rejects.toMatchObject({ code: 'USAGE', message: expect.stringContaining('maxParallelToolCalls') });

    const configured = join(workspace.path, 'configured');
    await mkdir(configured, { recursive: true });
    await writeFile(join(configured, 'rein.config.json'), JSON.stringify({ maxParallelToolCalls: 3 }));
    expect((await loadWorkspaceConfig(configured))?.maxParallelToolCalls).toBe(3);
    await writeFile(join(configured, 'rein.config.json'), JSON.stringify({ maxParallelToolCalls: 0 }));
    await expect(loadWorkspaceConfig(configured)).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });
});
