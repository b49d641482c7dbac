import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { firstValueFrom, toArray, take } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryEventStore, createRein, createScriptedProvider, mapValues, rebuildMemoryView } from 'rein';
import { parseFixture } from 'rein/testing';
import { makeTempDir } from '../support/temp-dir.js';

let workspace: { path: string; remove: () => Promise<void> };
beforeAll(async () => {
  workspace = await makeTempDir('rein-current-views-');
});
afterAll(() => workspace.remove());

/** Reads a file, then asks before a write: the session stays paused (alive) with a log of some length. */
const pausedSession = async () => {
  const provider = createScriptedProvider({
    turns: [
      { text: 'Looking.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] },
      { text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'a.txt', content: 'x' } }] },
      { text: 'Done.' },
    ],
  });
  const rein = await createRein({ store: createMemoryEventStore(), workspace: workspace.path, provider });
  const session = await rein.startSession({ task: 'write a.txt' });
  const result = await session.whenQuiet();
  expect(result.status).toBe('paused');
  return { rein, session, head: result.head };
};

describe('the views give a late subscriber the current view first (issue 30 item 12)', () => {
  it('context$, trace$ and memory$ emit the view at the head first, not the first record\'s', async () => {
    const { rein, session, head } = await pausedSession();
    expect(head).toBeGreaterThan(5);
    expect((await firstValueFrom(session.context$)).seq).toBe(head);
    expect((await firstValueFrom(session.trace$)).seq).toBe(head);
    expect((await firstValueFrom(session.memory$)).session.seq).toBe(head);
    // A second subscriber while the first holds the shared view gets the latest one too.
    const held = session.trace$.subscribe();
    expect((await firstValueFrom(session.trace$)).seq).toBe(head);
    held.unsubscribe();
    // Then the live ones: approving appends records, each folded once.
    const next = firstValueFrom(session.context$.pipe(take(2), toArray()));
    await session.approve(session.pendingApprovals()[0]!.approvalId, { decision: 'allow-once' });
    const [current, after] = await next;
    expect(current!.seq).toBe(head);
    expect(after!.seq).toBeGreaterThan(head);
    await session.whenQuiet();
    await rein.close();
  });

  it('contextView(), traceView() and memoryView() are the current values', async () => {
    const { rein, session, head } = await pausedSession();
    expect((await session.contextView()).seq).toBe(head);
    expect((await session.traceView()).seq).toBe(head);
    const memory = await session.memoryView();
    expect(memory.session.seq).toBe(head);
    // Plain data when serialised: the candidate and record maps are objects by id, not a trie.
    const plain = JSON.parse(JSON.stringify(memory)) as { session: { candidates: unknown; records: unknown } };
    expect(plain.session.candidates).toEqual({});
    expect(plain.session.records).toEqual({});
    await rein.close();
  });

  it('rebuildMemoryView serialises its candidates as plain objects by id', async () => {
    const text = await readFile(fileURLToPath(new URL('../fixtures/logs/step-memory.ndjson', import.meta.url)), 'utf8');
    const view = rebuildMemoryView(parseFixture(text).records);
    const candidates = mapValues(view.candidates);
    expect(candidates.length).toBeGreaterThan(0);
    const plain = JSON.parse(JSON.stringify(view)) as { candidates: Record<string, { candidateId: string }> };
    expect(Object.keys(plain.candidates).sort()).toEqual(candidates.map((candidate) => candidate.candidateId).sort());
    for (const [id, candidate] of Object.entries(plain.candidates)) expect(candidate.candidateId).toBe(id);
    expect(JSON.stringify(view)).not.toContain('"slots"');
  });
});
