import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryEventStore, createRein, createScriptedProvider, parseScript, type Rein } from '../../src/index.js';
import { SessionList } from '../../src/serve/api-schemas.js';
import { listenReinServer, type ListeningReinServer } from '../../src/serve/rein-server.js';
import { makeTempDir, propertyRuns } from '../support/temp-dir.js';
import { costScript, scriptPrices } from '../support/cost-script.js';

/** The viewer's API pages the session list (`limit`, `after`, `status`), checks them (400 with the code), and prices each row. */
describe('GET /api/sessions: pages and cost', () => {
  let directory: Awaited<ReturnType<typeof makeTempDir>>;
  let rein: Rein;
  let listening: ListeningReinServer;
  const ids: string[] = [];
  const token = 'page-token';

  const get = async (path: string) => {
    const response = await fetch(`${listening.origin}${path}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };

  beforeAll(async () => {
    directory = await makeTempDir('rein-serve-page-');
    await writeFile(join(directory.path, 'a.txt'), 'hello\n');
    rein = await createRein({ store: createMemoryEventStore(), workspace: directory.path, provider: createScriptedProvider(parseScript(costScript)), permissions: { mode: 'accept-edits' }, memory: false, prices: scriptPrices });
    for (let index = 0; index < 3; index++) {
      const session = await rein.createSession({ task: `task ${index}` });
      ids.push(session.id);
      await session.send('delegate and finish');
      await session.whenQuiet();
    }
    listening = await listenReinServer({ rein, token });
  }, 120_000);
  afterAll(async () => {
    await listening?.close();
    await rein?.close();
    await directory?.remove();
  });

  it('pages with limit and after, naming the next page’s cursor, and prices every row from the listing (children included)', async () => {
    const seen: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 5; pages++) {
      const { status, body } = await get(`/api/sessions?limit=2${after ? `&after=${after}` : ''}`);
      expect(status).toBe(200);
      const page = SessionList.parse(body);
      seen.push(...page.sessions.map((row) => row.id));
      for (const row of page.sessions) {
        expect(row.costUsd).toBe(4);
        expect(row.usage).toMatchObject({ calls: 4, model: 'script', inputTokens: 40_000 });
      }
      after = page.next;
      if (!after) break;
    }
    expect(seen).toEqual(ids);
    const filtered = SessionList.parse((await get(`/api/sessions?status=completed&after=${ids[0]}`)).body);
    expect(filtered.sessions.map((row) => row.id)).toEqual(ids.slice(1));
    expect(filtered.next).toBeUndefined();
  });

  it('answers a bad page with 400 SERVE_BAD_REQUEST, and a cursor no session has with 404 SESSION_NOT_FOUND', async () => {
    for (const query of ['limit=0', 'limit=abc', 'limit=10001', 'limit=1.5', 'after=..%2Fx', 'status=finished']) {
      const { status, body } = await get(`/api/sessions?${query}`);
      expect(status, query).toBe(400);
      expect(body.error.code).toBe('SERVE_BAD_REQUEST');
    }
    const { status, body } = await get('/api/sessions?after=s-no-such-session');
    expect(status).toBe(404);
    expect(body.error.code).toBe('SESSION_NOT_FOUND');
  });

  it('answers any limit/after/status text with a page or a typed 4xx error, never a 500 (property)', async () => {
    const text = fc.oneof(fc.string({ maxLength: 12 }), fc.stringMatching(/^[0-9]{1,6}$/), fc.constantFrom(...ids, 'completed', '', '1e3', '-1'));
    await fc.assert(
      fc.asyncProperty(fc.record({ limit: fc.option(text, { nil: undefined }), after: fc.option(text, { nil: undefined }), status: fc.option(text, { nil: undefined }) }), async (query) => {
        const params = new URLSearchParams(Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined));
        const { status, body } = await get(`/api/sessions?${params.toString()}`);
        if (status === 200) {
          const page = SessionList.parse(body);
          if (query.limit !== undefined) expect(page.sessions.length).toBeLessThanOrEqual(Number(query.limit));
        } else {
          expect([400, 404]).toContain(status);
          expect(['SERVE_BAD_REQUEST', 'SESSION_NOT_FOUND']).toContain(body.error.code);
        }
      }),
      { numRuns: propertyRuns(60) },
    );
  });
});
