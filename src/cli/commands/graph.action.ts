import type { AnyStateMachine } from 'xstate';
import { delegationMachine } from '../../../machines/delegation.machine.js';
import { permissionMachine } from '../../../machines/permission.machine.js';
import { sessionMachine } from '../../../machines/session.machine.js';
import { turnMachine } from '../../../machines/turn.machine.js';
import { mcpConnectionMachine } from '../../../machines/mcp-connection.machine.js';
import { ReinError } from '../../host/host-errors.js';
import { machineGraph, toMermaid } from '../machine-graph.js';
import { graphableNames } from './graph.flags.js';

/** The statecharts `rein graph` can print. */
export const graphableMachines: Record<(typeof graphableNames)[number], AnyStateMachine> = { session: sessionMachine, turn: turnMachine, permission: permissionMachine, delegation: delegationMachine, 'mcp-connection': mcpConnectionMachine };

/** The body of `rein graph`. */
export const graphCommand = (name: string, options: { format?: string; json?: boolean }): void => {
  const machine = (graphableMachines as Record<string, AnyStateMachine>)[name];
  if (!machine) throw new ReinError('USAGE', `unknown machine ${JSON.stringify(name)}; choose one of ${graphableNames.join(', ')}`);
  const format = options.format ?? 'json';
  if (format !== 'json' && format !== 'mermaid') throw new ReinError('USAGE', `--format must be json or mermaid, got ${JSON.stringify(format)}`);
  if (options.json && format !== 'json') throw new ReinError('USAGE', '--json is --format json; it cannot be combined with --format mermaid');
  const graph = machineGraph(name, machine);
  process.stdout.write(format === 'mermaid' ? toMermaid(graph) : `${JSON.stringify(graph, null, 2)}\n`);
};
