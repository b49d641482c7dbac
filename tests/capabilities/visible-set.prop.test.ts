import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CapabilityCatalog } from '../../models/capability.records.js';
import type { McpToolInfo } from '../../models/mcp.records.js';
import { createMemoryEventStore } from '../../stores/index.js';
import { createRein } from '../../src/rein.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { verifyRecords } from '../../src/host/replay.js';
import { patternMatches } from '../../src/policy/permission-rules.js';
import { demoServer } from '../support/mcp-servers.js';
import { makeTempDir, propertyRuns } from '../support/temp-dir.js';
import { modelInputTools, visibleSetsAtEachRound } from '../support/capability-checks.js';

const queries = ['weather forecast', 'invoice', 'github pull request checks', 'database schema', 'slack history', 'calendar', 'delete a note', 'add numbers', 'nothing at all'];

const call = (numbered: number) =>
  fc.oneof(
    fc.constantFrom(...queries).map((query) => ({ name: 'tool_search', arguments: { query } })),
    fc.nat({ max: Math.max(0, numbered - 1) }).map((index) => ({ name: `mcp__demo__lookup_${index}`, arguments: { key: 'k' } })),
    fc.constant({ name: 'mcp__demo__add', arguments: { a: 1, b: 'two' } }),
    fc.constant({ name: 'read', arguments: { path: 'missing.txt' } }),
  );

const scenario = fc.integer({ min: 0, max: 70 }).chain((numbered) =>
  fc.record({
    numbered: fc.constant(numbered),
    visibleLimit: fc.integer({ min: 3, max: 40 }),
    mode: fc.constantFrom('default' as const, 'plan' as const),
    deny: fc.subarray(['mcp__*__lookup_1*', 'bash', 'mcp__demo__add']),
    turns: fc.array(fc.array(call(numbered), { minLength: 1, maxLength: 3 }), { maxLength: 4 }),
  }),
);

describe('the visible set over random catalogs and searches', () => {
  it('is within catalog ∩ permitted and the limit, equals every model input\'s tool list, and replays', async () => {
    const workspace = await makeTempDir();
    try {
      await fc.assert(
        fc.asyncProperty(scenario, async ({ numbered, visibleLimit, mode, deny, turns }) => {
          const store = createMemoryEventStore();
          const script = { turns: [...turns.map((toolCalls, index) => ({ text: `step ${index}`, toolCalls })), { text: 'Done.' }] };
          const rein = await createRein({
            store,
            workspace: workspace.path,
            provider: createScriptedProvider(parseScript(script)),
            skills: false,
            memory: false,
            capabilities: { visibleLimit },
            permissions: { mode, rules: deny.map((tool) => `deny ${tool}`) },
            mcpServers: { demo: { type: 'in-memory', connect: (transport) => demoServer({ numbered }).connect(transport as never) } },
          });
          const session = await rein.startSession({ task: 'random work' });
          await session.whenQuiet();
          const records = await store.read(session.id);

          const catalog = records.find((record) => record.type === 'capability.catalog')!.data as CapabilityCatalog;
          const known = new Map(catalog.capabilities.map((descriptor) => [descriptor.name, descriptor]));
          for (const record of records) if (record.type === 'mcp.connected' || record.type === 'mcp.tools-listed') for (const tool of (record.data as { tools: McpToolInfo[] }).tools) known.set(tool.name, tool);

          const sets = visibleSetsAtEachRound(records);
          for (const set of sets) {
            expect(set.size).toBeLessThanOrEqual(visibleLimit);
            for (const name of set) {
              const descriptor = known.get(name);
              expect(descriptor, `${name} is in the catalog`).toBeDefined();
              if (mode === 'plan') expect(descriptor!.readOnly || descriptor!.risk === 'delegate', `${name} in plan mode`).toBe(true);
              for (const pattern of deny) expect(pattern === name || patternMatches(pattern, name), `${name} hidden by deny ${pattern}`).toBe(false);
            }
          }
          const inputs = await modelInputTools(store, records);
          expect(inputs.length).toBe(sets.length);
          for (const [index, input] of inputs.entries()) expect([...input.tools].sort()).toEqual([...sets[index]!].sort());
          expect(() => verifyRecords(session.id, records)).not.toThrow();
        }),
        { numRuns: propertyRuns(8) },
      );
    } finally {
      await workspace.remove();
    }
  }, 240_000);
});
