import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import { recordTypes, ReinRecordSchema } from '../../models/records.js';
import type { EventStore } from '../../stores/event-store.js';
import { createMemoryEventStore, openLevelEventStore } from '../../stores/index.js';
import { parseFixture, refsIn, type LogFixture } from '../../scripts/fixtures/fixture-format.js';
import { memoryHealth } from '../../src/memory/memory-health.js';
import { memoryStream } from '../../src/memory/memory-stream.js';
import { valuesOf } from '../../src/projections/persistent-map.js';
import { rebuildContextView, rebuildMemoryView, rebuildTraceView } from '../../src/projections/rebuild.js';
import { summarizeSession } from '../../src/session/session-catalog.js';
import { readSessionRecords } from '../../src/session/read-session.js';
import { replaySession } from '../../src/session/replay-session.js';
import { blobText } from '../../src/session/session-records.js';
import { analyzeTrace } from '../../src/trace/trace-analyzer.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';
import { flattenRecords } from '../../src/host/step-record.js';
import type { StepDerived } from '../../models/step.records.js';

/**
 * Golden logs: sessions an earlier build wrote (captured by `npm run fixtures:capture`, committed, never edited by
 * hand) must stay readable and replay exactly with this build. A failure here means stored sessions in users'
 * workspaces would stop verifying: add an upcaster (stores/upcasters.ts) or make the change compatible — do not
 * re-capture to make it pass.
 */

const logsDirectory = fileURLToPath(new URL('../fixtures/logs/', import.meta.url));

/** Record types no golden log holds yet, and why; a new record type must be captured or listed here. */
const notCaptured: Record<string, string> = {
  'effect.failed': 'needs an executor that throws instead of settling; covered by tests/host',
  'snapshot.rejected': 'needs a snapshot written by another machine version; covered by tests/session',
  'memory.expired': 'rein never writes it itself (hosts and imports do); covered by tests/memory',
  'mcp.degraded': 'needs a server whose tool list cannot be refreshed; covered by tests/machines (the connection machine)',
  'mcp.reconnecting': 'needs an HTTP server that goes away; covered by tests/mcp/mcp-http.test.ts',
  'mcp.closed': 'written only when a resumed session no longer configures a server; covered by tests/machines (the connection machine)',
  'plugin.stopped': 'written when a harness stops its plugins on close, after its sessions were interrupted; covered by tests/plugins',
  'memory.unavailable': 'needs a damaged memory stream on disk; covered by tests/e2e/memory-cli.test.ts',
  'command.ended': 'needs a background command (run_in_background) in a captured scenario; covered by tests/e2e/orphans.test.ts and tests/e2e/background-protected.test.ts',
  'permission.rule-unmatched': 'needs an MCP server and a deny rule that names none of its tools; covered by tests/e2e/trial5-leftovers.test.ts',
  'plan.updated': 'needs a script that calls update_plan in a captured scenario; covered by tests/tools/update-plan.test.ts and tests/e2e/meet-people-cli.test.ts',
  'instructions.loaded': 'needs an AGENTS.md in a captured workspace; covered by tests/session/project-instructions.test.ts',
  'workspace.changed': 'needs a golden log captured after the workspace capture landed; covered by tests/changes and tests/e2e/time-travel-cli.test.ts',
  'workspace.rewind-started': 'needs a rewound session in a captured scenario; covered by tests/e2e/time-travel-cli.test.ts and tests/e2e/rewind-crash.test.ts',
};

const fixtures: Array<{ name: string; fixture: LogFixture }> = [];
let workspace: { path: string; remove: () => Promise<void> };
let store: EventStore;

beforeAll(async () => {
  for (const file of (await readdir(logsDirectory)).filter((name) => name.endsWith('.ndjson')).sort()) {
    fixtures.push({ name: file.replace(/\.ndjson$/, ''), fixture: parseFixture(await readFile(join(logsDirectory, file), 'utf8'), file) });
  }
  workspace = await makeTempDir('rein-golden-');
  store = await openLevelEventStore(join(workspace.path, '.rein'));
  // Import each log through the public append path: one atomic batch, with the blobs it references.
  for (const { fixture } of fixtures) {
    const drafts = fixture.records.map(({ stream: _stream, seq: _seq, ...draft }) => draft);
    await store.append(fixture.stream, drafts, { expectedSeq: 0, blobs: [...fixture.blobs.values()] });
  }
});

afterAll(async () => {
  await store.close();
  await workspace.remove();
});

const sessionFixtures = () => fixtures.filter(({ fixture }) => fixture.stream !== memoryStream);

describe('golden logs', () => {
  it('are all present, well formed and gap-free, and every blob a record references is in the log', () => {
    expect(fixtures.map(({ name }) => name)).toEqual(
      expect.arrayContaining(['answer', 'budget-exhausted', 'budget-raised', 'cancelled', 'capabilities', 'delegation', 'fallback', 'fork', 'interrupted-in-flight', 'memory', 'memory-governance', 'model-failed', 'repairs-and-refusals', 'restart-resume', 'sandbox', 'tools-approvals']),
    );
    for (const { name, fixture } of fixtures) {
      expect(fixture.records.map((record) => record.seq), name).toEqual(fixture.records.map((_, index) => index + 1));
      expect(new Set(fixture.records.map((record) => record.stream)), name).toEqual(new Set([fixture.stream]));
      for (const ref of fixture.records.flatMap((record) => refsIn(record.data))) expect(fixture.blobs.has(ref), `${name}: ${ref}`).toBe(true);
    }
  });

  it('hold every record type this build knows, except the few listed with their reason', () => {
    const seen = new Set(fixtures.flatMap(({ fixture }) => fixture.records.map((record) => record.type)));
    const missing = Object.keys(recordTypes).filter((type) => !seen.has(type));
    expect(missing.sort()).toEqual(Object.keys(notCaptured).sort());
  });

  it('round-trip through the LevelDB codec unchanged, and every record, lifted by the upcasters, parses with the current schemas', async () => {
    for (const { name, fixture } of fixtures) {
      // The stored bytes decode to exactly what was written; reading through the upcasters then lifts every record to
      // this build's versions, where it must parse.
      expect(await store.read(fixture.stream), name).toEqual(fixture.records);
      const lifted = await readSessionRecords(store, fixture.stream);
      for (const record of lifted) expect(() => ReinRecordSchema.parse(record), `${name}#${record.seq} ${record.type}`).not.toThrow();
      for (const [ref, bytes] of fixture.blobs) expect(Buffer.from(await store.readBlob(fixture.stream, ref)).equals(Buffer.from(bytes)), `${name}: ${ref}`).toBe(true);
    }
  });

  it('replay exactly: every derived record is regenerated by this build and equal to the stored one', async () => {
    for (const { name, fixture } of sessionFixtures()) {
      const result = await replaySession(store, fixture.stream).catch((error: unknown) => {
        throw new Error(`${name} no longer replays: ${(error as Error).message}`);
      });
      expect(result.verified, name).toBe(fixture.records.length);
      expect(result.regenerated, name).toBeGreaterThan(0);
      expect(result.verified, name).toBe(result.head);
      expect(result.head, name).toBe(fixture.records.length);
    }
  });

  it('would catch a behaviour change: the same log with one transition altered no longer replays', async () => {
    const tools = fixtures.find(({ name }) => name === 'tools-approvals')!.fixture;
    const target = tools.records.findLast((record) => record.type === 'actor.transitioned')!;
    const altered = tools.records.map(({ stream: _stream, seq: _seq, ...draft }) =>
      draft.id === target.id ? { ...draft, data: { ...(draft.data as object), to: 'somewhere-else' } } : draft,
    );
    const scratch = createMemoryEventStore();
    await scratch.append(tools.stream, altered, { expectedSeq: 0 });
    await expect(replaySession(scratch, tools.stream)).rejects.toMatchObject({ name: 'DivergenceError', seq: target.seq });
  });

  it('would catch a behaviour change in the step layout too: one transition of a step record altered, or a step record dropped', async () => {
    const tools = fixtures.find(({ name }) => name === 'step-tools-approvals')!.fixture;
    const target = tools.records.findLast((record) => record.type === 'step.derived' && (record.data as StepDerived).derived.some((entry) => entry[0] === 0))!;
    const altered = tools.records.map(({ stream: _stream, seq: _seq, ...draft }) => {
      if (draft.id !== target.id) return draft;
      const step = draft.data as StepDerived;
      return { ...draft, data: { ...step, derived: step.derived.map((entry) => (entry[0] === 0 ? [0, entry[1], entry[2], entry[3], 'somewhere-else'] : entry)) } };
    });
    const scratch = createMemoryEventStore();
    await scratch.append(tools.stream, altered, { expectedSeq: 0 });
    await expect(replaySession(scratch, tools.stream)).rejects.toMatchObject({ name: 'DivergenceError', seq: target.seq });
    const dropped = createMemoryEventStore();
    await dropped.append(tools.stream, tools.records.filter((record) => record.id !== target.id).map(({ stream: _stream, seq: _seq, ...draft }) => draft), { expectedSeq: 0 });
    await expect(replaySession(dropped, tools.stream)).rejects.toMatchObject({ name: 'DivergenceError' });
  });

  it('rebuild their context, trace and memory views, and end with the outcome they were written with', async () => {
    for (const { name, fixture } of sessionFixtures()) {
      const records: RecordEnvelope[] = fixture.records;
      const ended = flattenRecords(records).findLast((record) => record.type === 'session.ended' && record.actor === 'root')?.data as { status: string } | undefined;
      const summary = await summarizeSession(store, fixture.stream);
      // A fork that was never continued is forked (issue 30 A4): it can be resumed from its fork point.
      expect(summary?.status, name).toBe(ended?.status ?? (name === 'fork' || name === 'step-fork' ? 'forked' : 'active'));
      const context = rebuildContextView(records);
      expect(context.actors.get('root'), name).toBeDefined();
      const trace = rebuildTraceView(records);
      const report = await analyzeTrace(trace, blobText(store, fixture.stream));
      expect(report.outcome, name).toEqual(expect.any(String));
      rebuildMemoryView(records);
    }
  });

  it('keep a raised budget: the raise is recorded before the resume, its model call after it, the root ends twice, and the replayed machine continues past the first end', async () => {
    const raised = fixtures.find(({ name }) => name === 'budget-raised')!.fixture;
    const flat = flattenRecords(raised.records);
    const raise = flat.find((record) => record.type === 'session.budgets-raised')!;
    expect(raise.data).toEqual({ maxTurns: 5 });
    const resumed = flat.find((record) => record.type === 'session.resumed')!;
    expect(raise.seq).toBeLessThan(resumed.seq);
    // The next model call the raise requested starts only once the resume is recorded.
    expect(flat.find((record) => record.type === 'model.responded' && record.seq > raise.seq)!.seq).toBeGreaterThan(resumed.seq);
    expect(flat.filter((record) => record.type === 'session.ended' && record.actor === 'root').map((record) => (record.data as { status: string }).status)).toEqual(['budget-exhausted', 'completed']);
    expect(flat.filter((record) => record.type === 'model.responded')).toHaveLength(4);
    expect((await replaySession(store, raised.stream)).verified).toBe(raised.records.length);
  });

  it('keep the governance decisions: one record promoted then revoked, the other candidates rejected', () => {
    const governance = fixtures.find(({ fixture }) => fixture.stream === memoryStream)!.fixture;
    const view = rebuildMemoryView(governance.records);
    const records = valuesOf(view.records);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ status: 'revoked', content: expect.stringContaining('two-space') });
    expect(valuesOf(view.candidates).map((candidate) => candidate.status).sort()).toEqual(['approved', 'rejected']);
    expect(memoryHealth(view, Date.UTC(2026, 0, 2), () => true)).toEqual(expect.any(Array));
  });

  it('are served by the CLI: sessions, show, trace and replay on the imported store', async () => {
    const tools = fixtures.find(({ name }) => name === 'tools-approvals')!.fixture;
    await store.close();
    try {
      const cwd = workspace.path;
      const replay = await runInProcess(['replay', tools.stream], { cwd });
      expect(replay.stderr).toBe('');
      expect(replay.code).toBe(0);
      expect(replay.stdout).toContain(`${tools.records.length} records`);
      const sessions = await runInProcess(['sessions', '--json'], { cwd });
      expect(sessions.code).toBe(0);
      for (const { fixture } of sessionFixtures()) expect(sessions.stdout).toContain(fixture.stream);
      const show = await runInProcess(['show', tools.stream], { cwd });
      expect(show.code).toBe(0);
      expect(show.stdout).toContain('no new files, please');
      const trace = await runInProcess(['trace', tools.stream, '--json'], { cwd });
      expect(trace.code).toBe(0);
      expect(JSON.parse(trace.stdout)).toMatchObject({ outcome: expect.any(String) });
    } finally {
      store = await openLevelEventStore(join(workspace.path, '.rein'));
    }
  });
});
