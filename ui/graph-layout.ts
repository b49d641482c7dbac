import type { MachineList } from './types.js';

type Graph = MachineList['machines'][number];

export interface LaidNode {
  id: string;
  label: string;
  x: number;
  y: number;
  width: number;
  height: number;
  type: string;
}

export interface LaidEdge {
  source: string;
  target: string;
  label: string;
  path: string;
  labelX: number;
  labelY: number;
}

export interface Layout {
  nodes: LaidNode[];
  edges: LaidEdge[];
  width: number;
  height: number;
}

const NODE_HEIGHT = 30;
const ROW_GAP = 22;
const COLUMN_GAP = 90;
const MARGIN = 20;

/**
 * A layered layout of a statechart, computed here (no service, no network): states are ranked by their distance from
 * the initial state along transitions (a compound state leads to its initial child), each rank is a column, and
 * edges are curves from a state's right side to its target's left side (back edges loop below). Deterministic.
 */
export const layoutMachine = (graph: Graph): Layout => {
  const [root, ...states] = graph.states;
  const byId = new Map(states.map((state) => [state.id, state]));
  const next = new Map<string, string[]>();
  const link = (from: string, to: string) => {
    if (!byId.has(from) || !byId.has(to) || from === to) return;
    const list = next.get(from) ?? [];
    if (!list.includes(to)) list.push(to);
    next.set(from, list);
  };
  for (const state of states) if (state.initial) link(state.id, state.initial);
  for (const transition of graph.transitions) for (const target of transition.targets) link(transition.source, target);
  const rank = new Map<string, number>();
  const order: string[] = [];
  const start = root?.initial && byId.has(root.initial) ? root.initial : states[0]?.id;
  const queue = start ? [start] : [];
  if (start) rank.set(start, 0);
  while (queue.length > 0) {
    const id = queue.shift()!;
    order.push(id);
    for (const target of next.get(id) ?? []) {
      if (rank.has(target)) continue;
      rank.set(target, rank.get(id)! + 1);
      queue.push(target);
    }
  }
  const deepest = Math.max(0, ...rank.values());
  for (const state of states) {
    if (rank.has(state.id)) continue;
    rank.set(state.id, deepest + 1);
    order.push(state.id);
  }
  const prefix = `${root?.id ?? graph.machine}.`;
  const columns: string[][] = [];
  for (const id of order) (columns[rank.get(id)!] ??= []).push(id);
  const nodes: LaidNode[] = [];
  let x = MARGIN;
  let height = 0;
  for (const column of columns) {
    if (!column) continue;
    const labels = column.map((id) => (id.startsWith(prefix) ? id.slice(prefix.length) : id));
    const width = Math.max(...labels.map((label) => label.length * 7 + 24));
    column.forEach((id, row) => {
      const y = MARGIN + row * (NODE_HEIGHT + ROW_GAP);
      nodes.push({ id, label: labels[row]!, x, y, width, height: NODE_HEIGHT, type: byId.get(id)?.type ?? 'atomic' });
      height = Math.max(height, y + NODE_HEIGHT + MARGIN);
    });
    x += width + COLUMN_GAP;
  }
  const placed = new Map(nodes.map((node) => [node.id, node]));
  const edges: LaidEdge[] = [];
  // One curve per pair of states, labelled with every transition between them.
  const pairs = new Map<string, { source: string; target: string; labels: string[] }>();
  for (const transition of graph.transitions) {
    for (const target of transition.targets) {
      const key = `${transition.source}\u0000${target}`;
      const pair = pairs.get(key) ?? { source: transition.source, target, labels: [] };
      pair.labels.push(`${transition.event}${transition.guard ? ` [${transition.guard}]` : ''}`);
      pairs.set(key, pair);
    }
  }
  for (const pair of pairs.values()) {
    const from = placed.get(pair.source);
    {
      const to = placed.get(pair.target);
      if (!from || !to) continue;
      const label = pair.labels.join(' · ');
      if (from === to) {
        const cx = from.x + from.width / 2;
        edges.push({ source: from.id, target: to.id, label, path: `M ${cx - 8} ${from.y} C ${cx - 20} ${from.y - 22}, ${cx + 20} ${from.y - 22}, ${cx + 8} ${from.y}`, labelX: cx, labelY: from.y - 18 });
        continue;
      }
      const forward = to.x > from.x;
      const x1 = forward ? from.x + from.width : from.x + from.width / 2;
      const y1 = forward ? from.y + from.height / 2 : from.y + from.height;
      const x2 = forward ? to.x : to.x + to.width / 2;
      const y2 = forward ? to.y + to.height / 2 : to.y + to.height;
      const bend = forward ? Math.max(30, (x2 - x1) / 2) : 40 + Math.abs(x1 - x2) / 8;
      const path = forward ? `M ${x1} ${y1} C ${x1 + bend} ${y1}, ${x2 - bend} ${y2}, ${x2} ${y2}` : `M ${x1} ${y1} C ${x1} ${y1 + bend}, ${x2} ${y2 + bend}, ${x2} ${y2}`;
      edges.push({ source: from.id, target: to.id, label, path, labelX: (x1 + x2) / 2, labelY: forward ? (y1 + y2) / 2 - 4 : Math.max(y1, y2) + bend * 0.75 });
      height = Math.max(height, forward ? height : Math.max(y1, y2) + bend + MARGIN);
    }
  }
  return { nodes, edges, width: x, height };
};

/** The state ids an XState state value names in a machine: `{ running: 'awaitingModel' }` → `session.running`, `session.running.awaitingModel`. */
export const activeIds = (machineId: string, value: unknown): string[] => {
  if (typeof value === 'string') return [`${machineId}.${value}`];
  if (value && typeof value === 'object') return Object.entries(value as Record<string, unknown>).flatMap(([key, inner]) => [`${machineId}.${key}`, ...activeIds(`${machineId}.${key}`, inner)]);
  return [];
};
