import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRein, createScriptedProvider, openLevelEventStore, type EventStore } from 'rein';
import { parseFixture } from 'rein/testing';
import { makeTempDir } from '../support/temp-dir.js';

let dir: { path: string; remove: () => Promise<void> };
let store: EventStore;
const ids = ['s-page-a', 's-page-b', 's-page-c', 's-page-d', 's-page-e'];

beforeAll(async () => {
  dir = await makeTempDir('rein-list-page-');
  store = await openLevelEventStore(join(dir.path, '.rein'));
  const fixture = parseFixture(await readFile(fileURLToPath(new URL('../fixtures/logs/step-answer.ndjson', import.meta.url)), 'utf8'));
  for (const id of ids) {
    const drafts = fixture.records.map(({ stream: _stream, seq: _seq, ...draft }) => (draft.type === 'session.created' ? { ...draft, data: { ...(draft.data as object), sessionId: id } } : draft));
    await store.append(id, drafts, { expectedSeq: 0, blobs: [...fixture.blobs.values()] });
  }
});
afterAll(async () => {
  await store.close();
  await dir.remove();
});

describe('listSessions pages, and lists LevelDB sessions from a cache (issue 30 item 22)', () => {
  it('limit and after page through every session once, oldest first', async () => {
    const rein = await createRein({ store, workspace: dir.path, provider: createScriptedProvider({ turns: [{ text: 'x' }] }), memory: false });
    const all = await rein.listSessions();
    expect(all.map((summary) => summary.id).sort()).toEqual(ids);
    const seen: string[] = [];
    for (let page = await rein.listSessions({ limit: 2 }); page.length > 0; page = await rein.listSessions({ limit: 2, after: page.at(-1)!.id })) {
      expect(page.length).toBeLessThanOrEqual(2);
      seen.push(...page.map((summary) => summary.id));
    }
    expect(seen).toEqual(all.map((summary) => summary.id));
    await expect(rein.listSessions({ limit: 0 })).rejects.toMatchObject({ code: 'USAGE' });
    await rein.close();
  });

  it('a listing caches each summary under its stream\'s content signature; a changed session is read again', async () => {
    const first = await createRein({ store, workspace: dir.path, provider: createScriptedProvider({ turns: [{ text: 'x' }] }), memory: false });
    const before = await first.listSessions();
    const cache = JSON.parse(await readFile(join(dir.path, '.rein', 'listing-cache.json'), 'utf8')) as Record<string, { signature: string; value: { head: number } }>;
    expect(Object.keys(cache).sort()).toEqual(ids);
    const head = before.find((summary) => summary.id === 's-page-c')!.head;
    await store.append('s-page-c', [{ id: 'late-1', type: 'user.message', v: 1, at: Date.now(), actor: 'root', data: { text: 'one more' } }], { expectedSeq: head });
    const after = await first.listSessions();
    expect(after.find((summary) => summary.id === 's-page-c')!.head).toBe(head + 1);
    expect(after.filter((summary) => summary.id !== 's-page-c')).toEqual(before.filter((summary) => summary.id !== 's-page-c'));
    await first.close();
  });
});
