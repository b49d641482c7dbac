import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { CapabilityDiff } from '../../models/capability.records.js';
import { createMemoryEventStore } from '../../stores/index.js';
import type { EventStore } from '../../stores/event-store.js';
import { createRein } from '../../src/rein.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { verifyRecords } from '../../src/host/replay.js';
import { demoServer } from '../support/mcp-servers.js';
import { makeTempDir } from '../support/temp-dir.js';
import { modelInputTools, visibleSetsAtEachRound } from '../support/capability-checks.js';
import { flattenRecords } from '../../src/host/step-record.js';

describe('deferred loading: 60 MCP tools with a visible limit of 20', () => {
  let records: RecordEnvelope[] = [];
  let store: EventStore;
  let workspace: { path: string; remove: () => Promise<void> };

  beforeAll(async () => {
    workspace = await makeTempDir();
    store = createMemoryEventStore();
    const script = {
      turns: [
        { text: 'Looking for the right tool.', toolCalls: [{ name: 'mcp__demo__lookup_57', arguments: { key: 'early' } }, { name: 'tool_search', arguments: { query: 'slack channel history' } }] },
        { text: 'Using it.', toolCalls: [{ name: 'mcp__demo__lookup_11', arguments: { key: 'general' } }] },
        { text: 'Done.' },
      ],
    };
    const rein = await createRein({ store, workspace: workspace.path, provider: createScriptedProvider(parseScript(script)), skills: false, capabilities: { visibleLimit: 20 }, mcpServers: { demo: { type: 'in-memory', connect: (transport) => demoServer({ numbered: 60 }).connect(transport as never) } } });
    const session = await rein.startSession({ task: 'read the slack history' });
    await session.whenQuiet();
    records = await store.read(session.id);
  });
  afterAll(() => workspace.remove());

  const diffs = () => flattenRecords(records).filter((record) => record.type === 'capability.diff').map((record) => record.data as CapabilityDiff);
  const settled = (name: string) => flattenRecords(records).filter((record) => record.type === 'tool.settled' && (record.data as { name: string }).name === name).map((record) => record.data as { status: string; errorCode?: string; observation: string; value?: { hits: string[] } });

  it('round one shows 20 tools, tool_search among them, and defers the rest', () => {
    const [first] = diffs();
    expect(first!.visible).toBe(20);
    expect(first!.deferred).toBeGreaterThan(40);
    expect(first!.added.map((entry) => entry.name)).toContain('tool_search');
    expect(first!.added.map((entry) => entry.name)).not.toContain('mcp__demo__lookup_11');
  });

  it('a deferred tool is not callable: Denied, pointing at tool_search', () => {
    expect(settled('mcp__demo__lookup_57')[0]).toMatchObject({ status: 'error', errorCode: 'Denied' });
    expect(settled('mcp__demo__lookup_57')[0]!.observation).toContain('tool_search');
  });

  it('tool_search ranks by name and description with the reasons, and returns the deferred hits', () => {
    const search = settled('tool_search')[0]!;
    const output = JSON.parse(search.observation) as { matches: Array<{ name: string; reasons: string[]; visible: boolean }> };
    expect(output.matches.length).toBeGreaterThan(0);
    expect(output.matches.every((match) => match.reasons.some((reason) => /description matches "(slack|channel|history)"/.test(reason)))).toBe(true);
    expect(search.value!.hits).toContain('mcp__demo__lookup_11');
  });

  it('the hit is visible from the next round, the diff says so, and the call runs', () => {
    const second = diffs()[1]!;
    expect(second.added).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'mcp__demo__lookup_11', reason: 'tool_search' })]));
    expect(second.removed.every((entry) => entry.reason === 'deferred')).toBe(true);
    expect(second.visible).toBe(20);
    expect(second.inputs.searchHits).toContain('mcp__demo__lookup_11');
    expect(settled('mcp__demo__lookup_11')[0]).toMatchObject({ status: 'ok', observation: 'slack channel history 11: general' });
  });

  it('every model input\'s tool list equals the recorded visible set, and replay regenerates every diff', async () => {
    const sets = visibleSetsAtEachRound(records);
    const inputs = await modelInputTools(store, records);
    expect(inputs.length).toBe(3);
    for (const [index, input] of inputs.entries()) expect([...input.tools].sort()).toEqual([...sets[index]!].sort());
    expect(verifyRecords('s', records).verified).toBeGreaterThan(0);
  });
});
