import { describe, expect, it } from 'vitest';
import type { CapabilityDiff } from '../../models/capability.records.js';
import { createMemoryEventStore } from '../../stores/index.js';
import { createRein } from '../../src/rein.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { verifyRecords } from '../../src/host/replay.js';
import { validReport } from '../support/delegation-fixtures.js';
import { demoServer } from '../support/mcp-servers.js';
import { makeTempDir } from '../support/temp-dir.js';
import { flattenRecords } from '../../src/host/step-record.js';

describe('child agents and MCP tools', () => {
  it('a child gets an MCP tool within the rights ceiling, through the same pipeline; a tool the parent cannot see is refused', async () => {
    const workspace = await makeTempDir();
    const store = createMemoryEventStore();
    try {
      const script = {
        turns: [
          {
            text: 'Delegating.',
            toolCalls: [
              {
                name: 'delegate_task',
                arguments: {
                  tasks: [{ id: 'sum', role: 'explorer', objective: 'Add 2 and 3 with the demo server.', tool_policy: { inheritance: 'subset', tools: ['read', 'mcp__demo__add'] } }],
                },
              },
            ],
          },
          {
            text: 'Now one it cannot have.',
            toolCalls: [{ name: 'delegate_task', arguments: { tasks: [{ id: 'nope', role: 'explorer', objective: 'x', tool_policy: { inheritance: 'subset', tools: ['read', 'mcp__elsewhere__tool'] } }] } }],
          },
          { text: 'Done.' },
        ],
        agents: {
          explorer: {
            turns: [
              { text: 'Adding.', toolCalls: [{ name: 'mcp__demo__add', arguments: { a: 2, b: 3 } }] },
              { text: 'Reporting.', toolCalls: [{ name: 'submit_report', arguments: validReport('finding-report', 'completed') }] },
            ],
          },
        },
      };
      const rein = await createRein({ store, workspace: workspace.path, provider: createScriptedProvider(parseScript(script)), skills: false, sandbox: { loginShell: false }, mcpServers: { demo: { type: 'in-memory', connect: (transport) => demoServer().connect(transport as never) } } });
      const session = await rein.startSession({ task: 'delegate the sum' });
      expect((await session.whenQuiet()).status).toBe('completed');
      const records = await store.read(session.id);
      const child = 'root/delegation-2/sum';
      const childDiff = flattenRecords(records).find((record) => record.type === 'capability.diff' && record.actor === child)!.data as CapabilityDiff;
      expect(childDiff.added.map((entry) => entry.name).sort()).toEqual(['mcp__demo__add', 'read', 'submit_report']);
      const callId = flattenRecords(records).find((record) => record.type === 'tool.settled' && record.actor === child && (record.data as { name: string }).name === 'mcp__demo__add')!.corr;
      const childCall = flattenRecords(records).filter((record) => record.corr === callId).map((record) => record.type);
      expect(childCall).toEqual(expect.arrayContaining(['tool.validated', 'permission.decided', 'tool.started', 'tool.settled']));
      expect(flattenRecords(records).find((record) => record.type === 'tool.settled' && record.actor === child && (record.data as { name: string }).name === 'mcp__demo__add')!.data).toMatchObject({ status: 'ok' });
      const refused = flattenRecords(records).find((record) => record.type === 'delegation.validated' && (record.data as { ok: boolean }).ok === false)!.data;
      expect(refused).toMatchObject({ failureClass: 'capability' });
      expect(verifyRecords(session.id, records).verified).toBeGreaterThan(0);
    } finally {
      await workspace.remove();
    }
  });
});
