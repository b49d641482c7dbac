import fc from 'fast-check';
import { firstValueFrom, take, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Budgets } from '../models/budgets.js';
import { createMemoryEventStore } from '../stores/index.js';
import { createRein, type Rein } from '../src/rein.js';
import { createScriptedProvider, parseScript } from '../src/providers/scripted-provider.js';
import { makeTempDir, propertyRuns } from './support/temp-dir.js';

const budgetKey = fc.constantFrom('maxTurns', 'maxToolCalls', 'maxTokens', 'maxWallTimeMs', 'maxTurn', 'bogus', 'max_turns');
const budgetValue = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.integer({ min: 1, max: 10_000_000 }), fc.double(), fc.constantFrom(Number.NaN, Infinity, 2 ** 60, '5', 'abc', null, undefined, true, [3], {}));
const sessionBudgets = fc.oneof(fc.dictionary(budgetKey, budgetValue, { maxKeys: 4 }), fc.constantFrom(null, 'abc', 7, [1]));
/** The budgets a session can apply: exactly what the session machine's schema accepts. */
const applicable = (budgets: unknown): boolean => Budgets.partial().strict().safeParse(budgets).success;

describe('a session is refused the budgets and tasks it cannot apply, writing nothing (trial 6 F13)', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let store: ReturnType<typeof createMemoryEventStore>;
  let rein: Rein;
  beforeAll(async () => {
    workspace = await makeTempDir('rein-session-options-');
    store = createMemoryEventStore();
    rein = await createRein({ store, workspace: workspace.path, provider: createScriptedProvider(parseScript({ turns: [{ text: 'Done.' }] })), memory: false, skills: false });
  });
  afterAll(async () => {
    await rein.close();
    await workspace.remove();
  });
  const sessionCount = async () => (await rein.listSessions()).length;

  it('createSession accepts budgets exactly when the session schema does; a refusal is USAGE naming the field and writes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(sessionBudgets, async (budgets) => {
        const before = await sessionCount();
        const attempt = rein.createSession({ task: 'x', budgets: budgets as never });
        if (applicable(budgets)) {
          const session = await attempt;
          await session.release();
          expect(await sessionCount()).toBe(before + 1);
        } else {
          await expect(attempt).rejects.toMatchObject({ code: 'USAGE', message: expect.stringMatching(/^createSession\(\{ budgets/) });
          expect(await sessionCount()).toBe(before);
        }
      }),
      { numRuns: propertyRuns(60) },
    );
  }, 120_000);

  it('the trial’s cases: "abc", -1, 1.5, an unknown key; createRein and startSession refuse them too', async () => {
    for (const budgets of [{ maxTurns: 'abc' }, { maxTurns: -1 }, { maxTokens: 1.5 }, { bogus: 1 }]) {
      await expect(rein.createSession({ task: 'x', budgets: budgets as never })).rejects.toMatchObject({ code: 'USAGE' });
      await expect(rein.startSession({ task: 'x', budgets: budgets as never })).rejects.toMatchObject({ code: 'USAGE' });
      await expect(createRein({ store, workspace: workspace.path, provider: createScriptedProvider(parseScript({ turns: [] })), budgets: budgets as never })).rejects.toMatchObject({ code: 'USAGE', message: expect.stringContaining('createRein({ budgets.') });
    }
    const ok = await rein.startSession({ task: 'x', budgets: { maxTurns: 3, maxToolCalls: 0 } });
    expect((await ok.whenQuiet()).status).toBe('completed');
  });

  it('a blank or non-string task is USAGE and a blank send is INPUT_INVALID, each writing nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.stringMatching(/^[ \t\n\r]*$/), fc.constantFrom(undefined, null, 3, ['x'])), async (task) => {
        const before = await sessionCount();
        await expect(rein.createSession({ task: task as never })).rejects.toMatchObject({ code: 'USAGE', message: expect.stringContaining('task') });
        await expect(rein.startSession({ task: task as never })).rejects.toMatchObject({ code: 'USAGE' });
        expect(await sessionCount()).toBe(before);
      }),
      { numRuns: propertyRuns(30) },
    );
    const session = await rein.createSession({ task: 'x' });
    const head = await store.head(session.id);
    for (const text of ['', '   ', '\n\t']) await expect(session.send(text)).rejects.toMatchObject({ code: 'INPUT_INVALID' });
    expect(await store.head(session.id)).toBe(head);
    await session.send('x');
    expect((await session.whenQuiet()).status).toBe('completed');
  });

  it('records(<unknown id>) errors SESSION_NOT_FOUND instead of never settling; a known session still streams', async () => {
    await expect(firstValueFrom(rein.records('nope'))).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    const session = await rein.startSession({ task: 'x' });
    await session.whenQuiet();
    const head = await store.head(session.id);
    const seen = await firstValueFrom(rein.records(session.id).pipe(take(head), toArray()));
    expect(seen).toHaveLength(head);
  });
});
