import type { Command } from 'commander';
import type { AnyStateMachine } from 'xstate';
import { delegationMachine } from '../../../machines/delegation.machine.js';
import { permissionMachine } from '../../../machines/permission.machine.js';
import { sessionMachine } from '../../../machines/session.machine.js';
import { turnMachine } from '../../../machines/turn.machine.js';
import { ReinError } from '../../host/host-errors.js';
import { machineGraph, toMermaid } from '../machine-graph.js';

/** The statecharts `rein graph` can print. */
export const graphableMachines: Record<string, AnyStateMachine> = { session: sessionMachine, turn: turnMachine, permission: permissionMachine, delegation: delegationMachine };

/** `rein graph <machine>`: a statechart's state graph as JSON, or Mermaid with `--format mermaid`. */
export const registerGraph = (program: Command): void => {
  program
    .command('graph')
    .description(`print a machine's state graph (${Object.keys(graphableMachines).join(', ')}) as JSON or Mermaid`)
    .argument('<machine>', 'which machine')
    .option('--format <format>', 'json or mermaid', 'json')
    .action((name: string, options: { format: string }) => {
      const machine = graphableMachines[name];
      if (!machine) throw new ReinError('USAGE', `unknown machine ${JSON.stringify(name)}; choose one of ${Object.keys(graphableMachines).join(', ')}`);
      if (options.format !== 'json' && options.format !== 'mermaid') throw new ReinError('USAGE', `--format must be json or mermaid, got ${JSON.stringify(options.format)}`);
      const graph = machineGraph(name, machine);
      process.stdout.write(options.format === 'mermaid' ? toMermaid(graph) : `${JSON.stringify(graph, null, 2)}\n`);
    });
};
