import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLevelEventStore } from '../../stores/level-event-store.js';
import { sessionCost } from '../../src/projections/cost.js';
import { usageCost, usageOf } from '../../src/projections/usage-summary.js';
import { sessionsPageOf, maxSessionsPage } from '../../src/cli/commands/sessions.flags.js';
import { ReinError } from '../../src/host/host-errors.js';
import { entriesOfRows, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir, propertyRuns } from '../support/temp-dir.js';
import { costScript as script, scriptPrices } from '../support/cost-script.js';

// The scripted tree makes four calls (two of the root, two of its child) of 10,000 input tokens each: at $100/M for
// the model `script`, $4.00 in all — the listing's cost is the tree's, children included.

type Listed = { id: string; status: string; costUsd?: number; costUnpriced?: string[]; usage?: { calls: number; model?: string } };

/** `rein sessions` prices each session (children included) from the running usage the host keeps, and pages. */
describe('rein sessions: cost and pages', () => {
  let workspace: Awaited<ReturnType<typeof makeTempDir>>;
  let env: Record<string, string>;
  const ids: string[] = [];
  const unpriced = 's-unpriced-by-hand';

  beforeAll(async () => {
    workspace = await makeTempDir('rein-sessions-cost-');
    env = { HOME: workspace.path };
    await writeFile(join(workspace.path, 'a.txt'), 'hello\n');
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
    await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ prices: scriptPrices }));
    for (let index = 0; index < 2; index++) {
      const run = await runInProcess(['run', 'delegate', '--script', 'script.json', '--yes', '--json'], { cwd: workspace.path, env });
      expect(run.code).toBe(0);
      ids.push(entriesOfRows(jsonLines(run.stdout))[0]!.stream as string);
    }
    // A session another writer appended (no running summary): a model with no price, so its cost is unknown.
    const store = await openLevelEventStore(join(workspace.path, '.rein'));
    try {
      await store.append(
        unpriced,
        [
          { id: 'u1', type: 'session.created', v: 1, at: Date.now(), actor: 'root', data: { sessionId: unpriced, task: 'by hand', provider: { name: 'openai', model: 'mystery-1' } } },
          { id: 'u2', type: 'model.responded', v: 1, at: Date.now(), actor: 'root', data: { usage: { inputTokens: 5, outputTokens: 7 } } },
        ],
        { expectedSeq: 0 },
      );
    } finally {
      await store.close();
    }
    ids.push(unpriced);
  }, 120_000);
  afterAll(() => workspace?.remove());

  it('keeps a running usage summary with the log that equals the log folded, and prices it as rein show does', async () => {
    const store = await openLevelEventStore(join(workspace.path, '.rein'), { readOnly: true });
    try {
      const info = await store.info(ids[0]!);
      const records = await store.read(ids[0]!);
      expect(info?.summary?.seq).toBe(info?.head);
      expect(info?.summary?.value).toEqual(usageOf(records));
      expect(usageCost(usageOf(records), scriptPrices)).toEqual({ usd: sessionCost(records, scriptPrices).usd });
      expect((await store.info(unpriced))?.summary).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('lists the tree’s cost in money (children included), unknown for a model with no price (never 0), in text and --json', async () => {
    const listed = jsonLines((await runInProcess(['sessions', '--json'], { cwd: workspace.path, env })).stdout) as Listed[];
    const [first, second] = ids.map((id) => listed.find((session) => session.id === id)!);
    expect(first).toMatchObject({ status: 'completed', costUsd: 4, usage: { calls: 4, model: 'script' } });
    expect(second!.costUsd).toBe(4);
    const byHand = listed.find((session) => session.id === unpriced)!;
    expect(byHand.costUsd).toBeUndefined();
    expect(byHand.costUnpriced).toEqual(['mystery-1']);
    expect(byHand.usage).toMatchObject({ calls: 1, model: 'mystery-1' });
    const text = (await runInProcess(['sessions'], { cwd: workspace.path, env })).stdout;
    expect(text).toMatch(new RegExp(`^${ids[0]}\\s+completed\\s.*records\\s+\\$4\\.00\\s+delegate`, 'm'));
    expect(text).toMatch(new RegExp(`^${unpriced}\\s.*records\\s+unknown\\s+by hand`, 'm'));
    // Without the configured prices the scripted model is a known 0, not unknown.
    await writeFile(join(workspace.path, 'rein.config.json'), '{}');
    try {
      const free = jsonLines((await runInProcess(['sessions', '--json'], { cwd: workspace.path, env })).stdout) as Listed[];
      expect(free.find((session) => session.id === ids[0])?.costUsd).toBe(0);
    } finally {
      await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ prices: scriptPrices }));
    }
  });

  it('pages with --limit and --after, saying how to get the next page, until every session was listed once', async () => {
    const seen: string[] = [];
    let args = ['sessions', '--limit', '1'];
    for (let pages = 0; pages < 10; pages++) {
      const page = await runInProcess(args, { cwd: workspace.path, env });
      expect(page.code).toBe(0);
      const lines = page.stdout.trim().split('\n');
      const next = lines.find((line) => line.startsWith('next page: '));
      seen.push(...lines.filter((line) => !line.startsWith('next page: ')).map((line) => line.split(/\s+/)[0]!));
      if (!next) break;
      args = next.slice('next page: rein '.length).split(' ');
    }
    expect(seen).toEqual(ids);
    const json = await runInProcess(['sessions', '--json', '--limit', '2'], { cwd: workspace.path, env });
    expect((jsonLines(json.stdout) as Listed[]).map((session) => session.id)).toEqual(ids.slice(0, 2));
    expect(json.stderr).toContain(`next page: rein sessions --limit 2 --after ${ids[1]} --json`);
    const filtered = await runInProcess(['sessions', '--status', 'completed', '--after', ids[0]!, '--json'], { cwd: workspace.path, env });
    expect((jsonLines(filtered.stdout) as Listed[]).map((session) => session.id)).toEqual([ids[1]]);
    const last = await runInProcess(['sessions', '--after', unpriced], { cwd: workspace.path, env });
    expect(last.stdout).toBe('no more sessions\n');
  });

  it('refuses a bad page: USAGE for a malformed flag, SESSION_NOT_FOUND for a cursor no session has', async () => {
    for (const args of [['--limit', '0'], ['--limit', 'ten'], ['--limit', '10001'], ['--limit', '1.5'], ['--after', '../x'], ['--status', 'finished']]) {
      const refused = await runInProcess(['sessions', ...args], { cwd: workspace.path, env });
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stderr).toContain('USAGE');
    }
    const unknown = await runInProcess(['sessions', '--after', 's-no-such-session'], { cwd: workspace.path, env });
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('SESSION_NOT_FOUND');
  });

  it('parses any --limit/--after/--status text to a page or a USAGE error, never anything else (property)', () => {
    const text = fc.oneof(fc.string(), fc.stringMatching(/^[0-9]{1,7}$/), fc.constantFrom('completed', 'awaiting-budget', '', ' 1', '1e3', '0x10', '-1'));
    fc.assert(
      fc.property(fc.record({ status: fc.option(text, { nil: undefined }), limit: fc.option(text, { nil: undefined }), after: fc.option(text, { nil: undefined }) }), (flags) => {
        let page;
        try {
          page = sessionsPageOf(flags);
        } catch (error) {
          expect(error).toBeInstanceOf(ReinError);
          expect((error as ReinError).code).toBe('USAGE');
          return;
        }
        if (flags.limit !== undefined) {
          expect(String(page.limit)).toBe(flags.limit);
          expect(page.limit).toBeGreaterThanOrEqual(1);
          expect(page.limit).toBeLessThanOrEqual(maxSessionsPage);
        }
        if (flags.after !== undefined) expect(page.after).toBe(flags.after);
        if (flags.status !== undefined) expect(page.status).toBe(flags.status);
      }),
      { numRuns: propertyRuns(200) },
    );
  });
});
