import type { AnyStateMachine } from 'xstate';
import { toDirectedGraph } from 'xstate/graph';

/** A statechart's structure: every state node and every transition (event, guard, targets). */
export interface MachineGraph {
  machine: string;
  states: Array<{ id: string; type: string; initial?: string }>;
  transitions: Array<{ source: string; event: string; guard?: string; targets: string[] }>;
}

type DirectedNode = ReturnType<typeof toDirectedGraph>;

const guardName = (guard: unknown): string | undefined => {
  if (typeof guard === 'string') return guard;
  if (guard && typeof guard === 'object' && 'type' in guard) return String((guard as { type: unknown }).type);
  if (typeof guard === 'function') return guard.name || 'inline';
  return undefined;
};

/** The static graph of a machine (from `xstate/graph`'s directed graph), with guard names kept. */
export const machineGraph = (name: string, machine: AnyStateMachine): MachineGraph => {
  const graph: MachineGraph = { machine: name, states: [], transitions: [] };
  const visit = (node: DirectedNode) => {
    const stateNode = node.stateNode;
    graph.states.push({ id: node.id, type: stateNode.type, ...(stateNode.initial?.target[0] ? { initial: stateNode.initial.target[0].id } : {}) });
    for (const edge of node.edges) {
      const transition = edge.transition as { guard?: unknown; target?: Array<{ id: string }> };
      const guard = guardName(transition.guard);
      graph.transitions.push({ source: edge.source.id, event: edge.label.text, ...(guard ? { guard } : {}), targets: (transition.target ?? []).map((target) => target.id) });
    }
    // Eventless transitions (`always`) are not edges of the directed graph; they are most of a typestate's checks.
    for (const transition of (stateNode.always ?? []) as Array<{ guard?: unknown; target?: Array<{ id: string }> }>) {
      const guard = guardName(transition.guard);
      graph.transitions.push({ source: node.id, event: 'always', ...(guard ? { guard } : {}), targets: (transition.target ?? []).map((target) => target.id) });
    }
    for (const child of node.children) visit(child);
  };
  visit(toDirectedGraph(machine));
  return graph;
};

const mermaidId = (id: string): string => id.replace(/[^A-Za-z0-9_]/g, '_');

/** Render a machine graph as a Mermaid `stateDiagram-v2` (flattened: compound states by their full ids). */
export const toMermaid = (graph: MachineGraph): string => {
  const lines = ['stateDiagram-v2'];
  const [root, ...states] = graph.states;
  if (root?.initial) lines.push(`  [*] --> ${mermaidId(root.initial)}`);
  for (const state of states) {
    lines.push(`  state "${state.id}" as ${mermaidId(state.id)}`);
    if (state.initial) lines.push(`  ${mermaidId(state.id)} --> ${mermaidId(state.initial)}: initial`);
    if (state.type === 'final') lines.push(`  ${mermaidId(state.id)} --> [*]`);
  }
  for (const transition of graph.transitions) {
    const label = `${transition.event}${transition.guard ? ` [${transition.guard}]` : ''}`.replace(/:/g, '#colon;');
    for (const target of transition.targets) lines.push(`  ${mermaidId(transition.source)} --> ${mermaidId(target)}: ${label}`);
  }
  return `${lines.join('\n')}\n`;
};
