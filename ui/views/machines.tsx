import { useEffect, useMemo, useState } from 'preact/hooks';
import type { Source } from '../source.js';
import type { ActorStates, MachineList, TimelineStep } from '../types.js';
import { activeIds, layoutMachine } from '../graph-layout.js';

type Graph = MachineList['machines'][number];

const Diagram = ({ graph, active, caption }: { graph: Graph; active: ReadonlySet<string>; caption: string }) => {
  const layout = useMemo(() => layoutMachine(graph), [graph]);
  return (
    <figure class="machine" data-machine={graph.machine}>
      <figcaption>{caption}</figcaption>
      <svg width={layout.width} height={layout.height} viewBox={`0 0 ${layout.width} ${layout.height}`} role="img" aria-label={`${graph.machine} statechart`}>
        <defs>
          <marker id={`arrow-${graph.machine}`} viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" class="arrowhead" />
          </marker>
        </defs>
        {layout.edges.map((edge) => (
          <g class={`edge${active.has(edge.source) ? ' from-active' : ''}`}>
            <path d={edge.path} marker-end={`url(#arrow-${graph.machine})`}>
              <title>{edge.label}</title>
            </path>
            {active.has(edge.source) ? (
              <text x={edge.labelX} y={edge.labelY} text-anchor="middle">
                {edge.label.length > 28 ? `${edge.label.slice(0, 27)}…` : edge.label}
              </text>
            ) : null}
          </g>
        ))}
        {layout.nodes.map((node) => (
          <g class={`node type-${node.type}${active.has(node.id) ? ' active' : ''}`} data-state={node.id}>
            <rect x={node.x} y={node.y} width={node.width} height={node.height} rx={node.type === 'final' ? 14 : 6} />
            <text x={node.x + node.width / 2} y={node.y + node.height / 2 + 4} text-anchor="middle">
              {node.label}
            </text>
          </g>
        ))}
      </svg>
    </figure>
  );
};

/**
 * The session's statechart and the turn typestate's (from `rein graph`'s data, laid out here), with the states the
 * selected step left its actors in highlighted, and the transitions out of them labelled.
 */
export const MachinesView = ({ source, sessionId, step }: { source: Source; sessionId: string; step: TimelineStep | undefined }) => {
  const [machines, setMachines] = useState<MachineList | undefined>(undefined);
  const [states, setStates] = useState<ActorStates | undefined>(undefined);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  useEffect(() => {
    source.machines().then(setMachines, (error: Error) => setProblem(error.message));
  }, [source]);
  const seq = step?.to;
  useEffect(() => {
    if (seq === undefined) return;
    source.states(sessionId, seq).then(setStates, (error: Error) => setProblem(error.message));
  }, [source, sessionId, seq]);
  const session = machines?.machines.find((graph) => graph.machine === 'session');
  const turn = machines?.machines.find((graph) => graph.machine === 'turn');
  const rootActor = step?.actor ?? 'root';
  const turnActor = step?.turn !== undefined ? `${rootActor}/turn-${step.turn}` : undefined;
  const sessionActive = new Set(states ? activeIds('session', states.actors[rootActor]) : []);
  const turnActive = new Set(states && turnActor ? activeIds('turn', states.actors[turnActor]) : []);
  return (
    <div class="machines" data-testid="machines">
      {problem ? <p class="error">{problem}</p> : null}
      <p class="muted">{step ? `as of #${step.to} (${step.label})` : 'select a step in the timeline to see the states it left'}</p>
      {session ? <Diagram graph={session} active={sessionActive} caption={`session · ${rootActor}${states?.actors[rootActor] ? ` in ${JSON.stringify(states.actors[rootActor])}` : ''}`} /> : null}
      {turn ? <Diagram graph={turn} active={turnActive} caption={`turn typestate${turnActor ? ` · ${turnActor}${states?.actors[turnActor] ? ` in ${JSON.stringify(states.actors[turnActor])}` : ''}` : ''}`} /> : null}
    </div>
  );
};
