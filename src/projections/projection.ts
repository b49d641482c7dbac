import { defer, scan, shareReplay, startWith, switchMap, type Observable } from 'rxjs';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore } from '../../stores/event-store.js';
import { ProjectionGapError } from './projection-errors.js';

/** Every view knows the last seq it folded; that is what makes folding idempotent and gaps detectable. */
export interface ViewState {
  readonly seq: number;
}

/**
 * A projection of the log: an initial view and a pure step `apply(view, record) => view`. `apply` is only called
 * with the record right after `view.seq` and must not mutate its arguments; its cost must not grow with the
 * length of the session (share structure, keep bounded collections).
 */
export interface Projection<View extends ViewState> {
  readonly name: string;
  initial(): View;
  apply(view: View, record: RecordEnvelope): View;
}

/**
 * The reducer `(view, record) => view` of a projection, with the kernel's delivery rules: a record at or below
 * `view.seq` leaves the view unchanged (duplicate delivery is harmless), the next seq is folded, and anything
 * further throws `ProjectionGapError` (`PROJECTION_GAP`): a view never passes an unfilled gap.
 */
export const reducerOf =
  <View extends ViewState>(projection: Projection<View>) =>
  (view: View, record: RecordEnvelope): View => {
    if (record.seq <= view.seq) return view;
    if (record.seq !== view.seq + 1) throw new ProjectionGapError(projection.name, view.seq + 1, record.seq);
    const next = projection.apply(view, record);
    return next.seq === record.seq ? next : { ...next, seq: record.seq };
  };

/** Rebuild a view by folding records with `reduce` (from the initial view, or from a view built earlier). */
export const rebuildView = <View extends ViewState>(projection: Projection<View>, records: Iterable<RecordEnvelope>, from: View = projection.initial()): View => {
  const reduce = reducerOf(projection);
  let view = from;
  for (const record of records) view = reduce(view, record);
  return view;
};

/**
 * Drive a view live: `scan` the reducer over a record stream and share the latest view with every subscriber
 * (`shareReplay({ bufferSize: 1, refCount: true })`). The upstream is subscribed on the first subscriber and
 * dropped with the last; the view completes when the records complete and errors with `PROJECTION_GAP` on a gap.
 */
export const liveView = <View extends ViewState>(projection: Projection<View>, records$: Observable<RecordEnvelope>, from: View = projection.initial()): Observable<View> =>
  records$.pipe(scan(reducerOf(projection), from), shareReplay({ bufferSize: 1, refCount: true }));

/** A live view over a stored stream: history from `from.seq + 1`, then every append (`store.tail`). */
export const tailView = <View extends ViewState>(store: Pick<EventStore, 'tail'>, stream: string, projection: Projection<View>, from: View = projection.initial()): Observable<View> =>
  liveView(projection, store.tail(stream, from.seq + 1), from);

/**
 * A live view over a stored stream that gives a subscriber the current view first, not every intermediate one: on the
 * first subscription the stored records are read and folded at once (`rebuildView`) and that view is emitted, then
 * each append is folded as it comes (`store.tail` from the next seq: no gap, no record twice). Shared like `liveView`
 * (`shareReplay({ bufferSize: 1, refCount: true })`): a later subscriber gets the latest view, then the live ones;
 * with no subscriber left nothing is maintained, and the next one folds the log again. Per appended record the cost is
 * one `apply`, as `tailView`'s.
 */
export const currentView = <View extends ViewState>(store: Pick<EventStore, 'tail' | 'read'>, stream: string, projection: Projection<View>): Observable<View> =>
  defer(async () => rebuildView(projection, await store.read(stream))).pipe(
    switchMap((view) => store.tail(stream, view.seq + 1).pipe(scan(reducerOf(projection), view), startWith(view))),
    shareReplay({ bufferSize: 1, refCount: true }),
  );
