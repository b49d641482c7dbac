import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { TimelineStep } from '../types.js';
import { Badge } from '../format.js';

const ROW = 26;
const OVERSCAN = 12;
const icons: Record<TimelineStep['kind'], string> = { user: '✉', turn: '◆', call: '▸', approval: '◇', child: '⑂', join: '⑃', note: '•', verification: '✓', end: '■' };

/**
 * The timeline, windowed: only the rows in view (and a few around) are in the DOM, so a session of any length
 * scrolls smoothly. Each actor has a lane (a column of the gutter): a child agent's rows sit in its own lane, which
 * runs from its first row to its last, and its join shows in the parent's.
 */
export const TimelineList = ({ steps, lanes, selected, onSelect, complete = true }: { steps: readonly TimelineStep[]; lanes: readonly string[]; selected: number | undefined; onSelect: (index: number) => void; complete?: boolean }) => {
  const box = useRef<HTMLDivElement>(null);
  const [top, setTop] = useState(0);
  const [height, setHeight] = useState(600);
  const spans = useMemo(() => {
    const found = new Map<string, { first: number; last: number }>();
    steps.forEach((step, index) => {
      const span = found.get(step.actor);
      if (span) span.last = index;
      else found.set(step.actor, { first: index, last: index });
    });
    return found;
  }, [steps]);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    setHeight(element.clientHeight || 600);
    const observer = new ResizeObserver(() => setHeight(element.clientHeight || 600));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  useEffect(() => {
    const element = box.current;
    if (!element || selected === undefined) return;
    const y = selected * ROW;
    if (y < element.scrollTop || y + ROW > element.scrollTop + element.clientHeight) element.scrollTop = Math.max(0, y - element.clientHeight / 3);
  }, [selected]);
  const first = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
  const last = Math.min(steps.length, Math.ceil((top + height) / ROW) + OVERSCAN);
  const laneWidth = Math.min(18, 120 / Math.max(1, lanes.length));
  const rows = [];
  for (let index = first; index < last; index++) {
    const step = steps[index]!;
    const lane = lanes.indexOf(step.actor);
    rows.push(
      <div
        key={index}
        class={`step kind-${step.kind} status-${step.status}${index === selected ? ' selected' : ''}${step.findings ? ' has-finding' : ''}`}
        style={{ top: `${index * ROW}px`, height: `${ROW}px` }}
        data-index={index}
        data-kind={step.kind}
        data-seq={step.seq}
        onClick={() => onSelect(index)}
        title={`${step.actor} · #${step.seq}${step.to !== step.seq ? `..#${step.to}` : ''}`}
      >
        <span class="lanes" style={{ width: `${lanes.length * laneWidth}px` }}>
          {lanes.map((actor, position) => {
            const span = spans.get(actor);
            const active = span !== undefined && span.first <= index && index <= span.last;
            return active ? <span class={`lane${position === lane ? ' here' : ''}`} style={{ left: `${position * laneWidth + laneWidth / 2}px` }} /> : null;
          })}
        </span>
        <span class="seq">#{step.seq}</span>
        <span class="icon">{icons[step.kind]}</span>
        <span class="label">{step.label}</span>
        {step.findings?.map((finding) => <Badge kind="finding" value={finding} />)}
        {step.status !== 'info' && step.status !== 'ok' ? <Badge kind="step" value={step.status} /> : null}
      </div>,
    );
  }
  return (
    <div class="timeline" ref={box} onScroll={(event) => setTop((event.target as HTMLDivElement).scrollTop)} data-testid="timeline" data-total={steps.length} data-complete={String(complete)}>
      <div class="timeline-space" style={{ height: `${steps.length * ROW}px` }}>
        {rows}
      </div>
    </div>
  );
};
