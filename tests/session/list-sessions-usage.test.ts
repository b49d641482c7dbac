import { describe, expect, it } from 'vitest';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import { listSessions } from '../../src/session/session-catalog.js';
import { usageOf } from '../../src/projections/usage-summary.js';

const created = { id: 'c', type: 'session.created', v: 1, at: 1, actor: 'root', data: { sessionId: 's-u', task: 't', provider: { name: 'openai', model: 'gpt-x' } } };
const responded = (id: string, actor = 'root') => ({ id, type: 'model.responded', v: 1, at: 2, actor, data: { usage: { inputTokens: 10, outputTokens: 3, cacheReadTokens: 4 } } });

/** The listing's usage: the writer's summary, completed from the records after it; the log folded when it is absent or not a usage. */
describe('listSessions: usage', () => {
  it('adds the records after a summary behind the head (any agent), and folds the log when the summary is missing or malformed', async () => {
    const store = createMemoryEventStore();
    const first = [created, responded('r1')];
    await store.append('s-u', first, { expectedSeq: 0, summary: usageOf(first) });
    await store.append('s-u', [responded('r2', 'root/delegation-1/e1')], { expectedSeq: 2 });
    await store.append('s-bad', [created, responded('r1')], { expectedSeq: 0, summary: { calls: 'many' } });
    await store.append('s-none', [created, responded('r1'), responded('r2')], { expectedSeq: 0 });
    // Longer than the tail a listing reads: the records before it are read page by page (no summary), or only those after the summary.
    const long = [created, ...Array.from({ length: 150 }, (_, index) => responded(`l${index}`))];
    await store.append('s-long', long, { expectedSeq: 0 });
    await store.append('s-long-summary', long.slice(0, 10), { expectedSeq: 0, summary: usageOf(long.slice(0, 10)) });
    await store.append('s-long-summary', long.slice(10), { expectedSeq: 10 });
    const listed = Object.fromEntries((await listSessions(store)).map((summary) => [summary.id, summary.usage]));
    expect(listed['s-u']).toEqual({ provider: 'openai', model: 'gpt-x', calls: 2, inputTokens: 20, outputTokens: 6, cacheReadTokens: 8, cacheWriteTokens: 0, models: [{ provider: 'openai', model: 'gpt-x', calls: 2, inputTokens: 20, outputTokens: 6, cacheReadTokens: 8, cacheWriteTokens: 0 }] });
    expect(listed['s-bad']).toMatchObject({ calls: 1, inputTokens: 10 });
    expect(listed['s-none']).toEqual(listed['s-u']);
    expect(listed['s-long']).toMatchObject({ calls: 150, inputTokens: 1500 });
    expect(listed['s-long-summary']).toEqual(listed['s-long']);
  });
});
