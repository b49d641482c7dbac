import type { RecordEnvelope } from '../../models/envelope.js';
import { foldEntries } from '../host/step-record.js';
import type { ContextView } from './context.view.js';
import { wantsContextType } from './context.view.js';
import type { Projection } from './projection.js';
import { ProjectionGapError } from './projection-errors.js';

/** The records that change more than the agent they belong to: applied as they come. */
const sharedTypes: ReadonlySet<string> = new Set(['session.created', 'delegation.started', 'delegation.joined', 'delegation.completed', 'delegation.failed']);

/**
 * The session's live context view, folded per agent when that agent's context is read (decision 3 of issue 26: a view
 * no one reads is not maintained live). A record of one agent (its user messages, replies, tool results, projections,
 * report notes, hook context) only changes that agent's context, so it waits in the agent's queue until `viewFor`
 * reads the agent (before each of its model calls); the records that reach across agents are applied as they come,
 * after the queues they depend on: a `delegation.started` (the child is seeded from its parent) and a
 * `delegation.joined` (the reports settle the parent's call) fold the parent's queue first, and a
 * `delegation.completed` / `delegation.failed` drops the ended child's queue unfolded — the view deletes that child,
 * so nothing in the queue could be read again. That is what a delegation's children cost less: the records of a
 * child's last round are never folded.
 *
 * The agent `viewFor` names sees exactly the view the projection's reducer would have built from the same records
 * (the property test in tests/projections/context-live.prop.test.ts); the other agents in the returned view may be
 * behind. Same delivery rules as `reducerOf`: a record at or below the view's seq is ignored, a gap throws
 * `PROJECTION_GAP`.
 */
export class LiveContextView {
  private view: ContextView;
  private seq: number;
  private readonly queued = new Map<string, RecordEnvelope[]>();

  constructor(private readonly projection: Projection<ContextView>) {
    this.view = projection.initial();
    this.seq = this.view.seq;
  }

  /** Take the session's next record. */
  observe(record: RecordEnvelope): void {
    if (record.seq <= this.seq) return;
    if (record.seq !== this.seq + 1) throw new ProjectionGapError(this.projection.name, this.seq + 1, record.seq);
    this.seq = record.seq;
    foldEntries(undefined, record, this.take, wantsContextType);
  }

  /** The view with `actor`'s context up to date (and the seq, goal and workspace of the session). */
  viewFor(actor: string): ContextView {
    this.flush(actor);
    if (this.view.seq !== this.seq) this.view = { ...this.view, seq: this.seq };
    return this.view;
  }

  /** Every agent's context up to date: the reducer's view. */
  whole(): ContextView {
    for (const actor of [...this.queued.keys()]) this.flush(actor);
    return this.viewFor('');
  }

  private readonly take = (_: undefined, entry: RecordEnvelope): undefined => {
    const type = entry.type;
    if (!sharedTypes.has(type)) {
      const queue = this.queued.get(entry.actor);
      if (queue) queue.push(entry);
      else this.queued.set(entry.actor, [entry]);
      return undefined;
    }
    const data = entry.data as { parent?: string; child?: string };
    if (type === 'delegation.started' || type === 'delegation.joined') this.flush(String(data.parent));
    else if (type !== 'session.created') this.queued.delete(String(data.child));
    this.view = this.projection.apply(this.view, entry);
    return undefined;
  };

  private flush(actor: string): void {
    const queue = this.queued.get(actor);
    if (!queue) return;
    this.queued.delete(actor);
    let view = this.view;
    for (const entry of queue) view = this.projection.apply(view, entry);
    this.view = view;
  }
}
