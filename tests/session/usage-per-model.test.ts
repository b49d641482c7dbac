import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ModelEvent, ModelRequest } from '../../models/model-contract.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import { createRein } from '../../src/rein.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { listSessions } from '../../src/session/session-catalog.js';
import { usageCost, usageOf, type UsageSummary } from '../../src/projections/usage-summary.js';
import { costOfUsage, sessionCost } from '../../src/projections/cost.js';
import { flattenRecords } from '../../src/host/step-record.js';
import { makeTempDir } from '../support/temp-dir.js';

// The root delegates one task; the child reads a file and reports.
const script = parseScript({
  turns: [
    { text: 'Delegating.', toolCalls: [{ name: 'delegate_task', arguments: { tasks: [{ id: 'look', role: 'explorer', objective: 'Read a.txt.' }] } }] },
    { text: 'Done.' },
  ],
  agents: { explorer: { turns: [{ text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] }, { text: 'Reporting.', toolCalls: [{ name: 'submit_report', arguments: { status: 'completed', summary: 'a.txt holds alpha', findings: [] } }] }] } },
});

/** The script's replies under another provider and model name (as a real endpoint's `started` would name it). */
const scriptedAs = (name: string, model: string, refuseChildren: boolean): ModelProvider => {
  const scripted = createScriptedProvider(script);
  return {
    name,
    model,
    async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
      // The root's provider is overloaded for child agents: their calls fall back to the other model.
      if (refuseChildren && request.actor !== 'root') {
        yield { type: 'error', error: { code: 'overloaded', message: 'busy', retryable: true } };
        return;
      }
      for await (const event of scripted.stream(request)) yield event.type === 'started' ? { ...event, model } : event;
    },
  };
};

const prices = { 'root-model': { input: 1, output: 2 }, 'child-model': { input: 100, output: 200 } };

/** A child answered by another model than the root's is priced at its own model: in the summary, the listing and `rein show`. */
describe('usage per model', () => {
  it('prices a delegation whose child ran on another model at each model, the same in the listing and in the log', async () => {
    const workspace = await makeTempDir();
    try {
      await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
      const store = createMemoryEventStore();
      const rein = await createRein({
        store,
        workspace: workspace.path,
        provider: scriptedAs('openai', 'root-model', true),
        fallbacks: [scriptedAs('openai', 'child-model', false)],
        retry: { maxAttempts: 1 },
        prices,
        sandbox: { loginShell: false },
      });
      const session = await rein.createSession({ task: 'go' });
      await session.send('go');
      const result = await session.whenQuiet();
      expect(result.status).toBe('completed');
      const records = await store.read(session.id);
      const flat = flattenRecords(records);
      const replies = flat.filter((record) => record.type === 'model.responded');
      const childReplies = replies.filter((record) => record.actor !== 'root');
      expect(childReplies.length).toBe(2);
      // The model that answered each call (its last attempt): the child's calls fell back to child-model (and the calls
      // after the fallback stay on it); the root's first call was answered by root-model.
      const answeredBy = new Map(flat.filter((record) => record.type === 'model.attempted' && (record.data as { decision?: string }).decision === 'done').map((record) => [(record.data as { effectId: string }).effectId, (record.data as { model: keyof typeof prices }).model]));
      const modelOf = (record: (typeof replies)[number]) => answeredBy.get((record.data as { effectId: string }).effectId)!;
      expect(childReplies.map(modelOf)).toEqual(['child-model', 'child-model']);
      expect(modelOf(replies[0]!)).toBe('root-model');
      const usageOfReply = (record: (typeof replies)[number]) => (record.data as { usage: Parameters<typeof costOfUsage>[0] }).usage;
      const expected = replies.reduce((sum, record) => sum + costOfUsage(usageOfReply(record), prices[modelOf(record)]), 0);
      const atRootPrice = replies.reduce((sum, record) => sum + costOfUsage(usageOfReply(record), prices['root-model']), 0);
      expect(expected).toBeGreaterThan(atRootPrice);
      const count = (model: string) => replies.filter((record) => modelOf(record) === model).length;

      // The writer's running summary, the listing (from it) and the log folded agree, per model.
      const summary = (await store.info(session.id))?.summary?.value as UsageSummary;
      expect(summary.models?.map((entry) => [entry.model, entry.calls])).toEqual([
        ['root-model', count('root-model')],
        ['child-model', count('child-model')],
      ]);
      expect(usageOf(records)).toEqual(summary);
      const cost = usageCost(summary, prices);
      expect('usd' in cost && cost.usd).toBeCloseTo(expected, 12);
      const listed = (await listSessions(store)).find((entry) => entry.id === session.id);
      expect(listed?.usage).toEqual(summary);
      // `rein show`'s fold prices the same way, and attributes the child's share to the child.
      const shown = sessionCost(records, prices);
      expect(shown.usd).toBeCloseTo(expected, 12);
      const child = [...shown.byActor].find(([actor]) => actor !== 'root')?.[1];
      const childExpected = childReplies.reduce((sum, record) => sum + costOfUsage(usageOfReply(record), prices['child-model']), 0);
      expect(child?.usd).toBeCloseTo(childExpected, 12);
      // Without a price for the child's model the listing says unknown, naming it (never the root model's price).
      expect(usageCost(summary, { 'root-model': prices['root-model'] })).toEqual({ unpriced: 'child-model' });
      await rein.close();
    } finally {
      await workspace.remove();
    }
  });
});
