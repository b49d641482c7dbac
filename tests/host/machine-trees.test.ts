import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { AnyStateMachine } from 'xstate';
import { childSessionMachine, sessionMachine } from '../../machines/session.machine.js';
import { turnMachine } from '../../machines/turn.machine.js';
import { permissionMachine } from '../../machines/permission.machine.js';
import { graphableMachines } from '../../src/cli/commands/graph.action.js';
import { InterpretedTree } from '../../src/host/machine-tree.js';
import { compiledOf } from '../../src/host/compiled-machine.js';
import { interpretedOf } from '../../src/host/machine-stand-ins.js';
import { verifyRecords } from '../../src/host/replay.js';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import { createRein } from '../../src/rein.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { makeTempDir } from '../support/temp-dir.js';

describe('the machine trees', () => {
  it('run the definitions `rein graph` draws and the model checks explore (compiled from those same objects), and derive the same records either way', async () => {
    const workspace = await makeTempDir();
    try {
      await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
      const store = createMemoryEventStore();
      // A tool turn, an approval (a permission actor), a delegation with a child agent and its own turn.
      const script = {
        turns: [
          { text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] },
          { text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'b.txt', content: 'b\n' } }] },
          { text: 'Delegating.', toolCalls: [{ name: 'delegate_task', arguments: { tasks: [{ id: 'look', role: 'explorer', objective: 'Read a.txt.' }] } }] },
          { text: 'Done.' },
        ],
        agents: { explorer: { turns: [{ text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] }, { text: 'Reporting.', toolCalls: [{ name: 'submit_report', arguments: { status: 'completed', summary: 'a.txt holds alpha', findings: [] } }] }] } },
      };
      const rein = await createRein({ store, workspace: workspace.path, provider: createScriptedProvider(parseScript(script)), sandbox: { loginShell: false } });
      const session = await rein.createSession({ task: 'go' });
      session.approvals$.subscribe((request) => void session.approve(request.approvalId, { decision: 'allow-once' }));
      await session.send('go');
      await session.whenQuiet();
      const records = await store.read(session.id);
      const interpreted = verifyRecords(session.id, records);
      const running = verifyRecords(session.id, records, { inspect: () => {} });
      expect(running.regenerated).toBe(interpreted.regenerated);
      expect(running.tree?.persisted()).toEqual(interpreted.tree?.persisted());
      // Every actor the interpreted tree ran is one of the drawn machines: the same definition (the delegation machine
      // is the drawn one with its children's logic provided: the same configuration).
      const definitions = [...(interpreted.tree as InterpretedTree).definitions()];
      // A child agent runs the session machine's child form (a final budgetExhausted; model-checked with the root's).
      const drawn = [...(Object.values(graphableMachines) as AnyStateMachine[]), childSessionMachine as AnyStateMachine];
      for (const definition of definitions) expect(drawn.some((machine) => machine === definition || machine.config === definition.config)).toBe(true);
      for (const machine of [sessionMachine, turnMachine, permissionMachine]) expect(definitions).toContain(machine);
      expect(definitions.some((definition) => definition.config === graphableMachines.delegation.config)).toBe(true);
      // And the host runs each of them in its compiled form, derived from that same definition: the compiled machine is
      // the definition with its children's logic replaced by stand-ins (the same config, the same state nodes' source).
      expect([...(interpreted.tree as InterpretedTree).compiledDefinitions()]).toEqual(definitions);
      for (const definition of definitions) {
        const compiled = compiledOf(interpretedOf(definition));
        expect(compiled?.machine).toBe(interpretedOf(definition));
        expect(compiled?.machine.config).toBe(definition.config);
      }
      expect(graphableMachines.session).toBe(sessionMachine);
      expect(graphableMachines.turn).toBe(turnMachine);
      await rein.close();
    } finally {
      await workspace.remove();
    }
  });
});
