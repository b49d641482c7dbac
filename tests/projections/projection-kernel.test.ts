import { Subject } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import { liveView, rebuildView, reducerOf, type Projection, type ViewState } from '../../src/projections/projection.js';

interface CountView extends ViewState {
  count: number;
  types: readonly string[];
}

/** A small projection: counts records and keeps their types (enough to see every delivery rule). */
const counting: Projection<CountView> = {
  name: 'counting',
  initial: () => ({ seq: 0, count: 0, types: [] }),
  apply: (view, record) => ({ ...view, count: view.count + 1, types: [...view.types, record.type] }),
};

const record = (seq: number, type = 'user.message'): RecordEnvelope => ({ stream: 's', seq, id: `r${seq}`, type, v: 1, at: seq, actor: 'root', data: {} });
const view = (seq: number): CountView => rebuildView(counting, Array.from({ length: seq }, (_, index) => record(index + 1)));

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

describe('the projection kernel', () => {
  it('folds the next seq, ignores duplicates and refuses a gap with PROJECTION_GAP', () => {
    const reduce = reducerOf(counting);
    const one = reduce(counting.initial(), record(1));
    expect(one).toEqual({ seq: 1, count: 1, types: ['user.message'] });
    expect(reduce(one, record(1))).toBe(one);
    expect(() => reduce(one, record(3))).toThrow(expect.objectContaining({ code: 'PROJECTION_GAP', expectedSeq: 2, receivedSeq: 3 }));
  });

  it('emits one view per record, shares one upstream subscription and completes with the records', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-b-c|', { a: record(1), b: record(2), c: record(3) });
      const live = liveView(counting, source);
      expectObservable(live).toBe('-x-y-z|', { x: view(1), y: view(2), z: view(3) });
      expectObservable(live).toBe('-x-y-z|', { x: view(1), y: view(2), z: view(3) });
      expectSubscriptions(source.subscriptions).toBe('^-----!');
    });
  });

  it('replays the latest view to a late subscriber without resubscribing upstream', () => {
    scheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-a-b-c-d-', { a: record(1), b: record(2), c: record(3), d: record(4) });
      const live = liveView(counting, source);
      expectObservable(live, '^--------').toBe('-w-x-y-z-', { w: view(1), x: view(2), y: view(3), z: view(4) });
      expectObservable(live, '----^----').toBe('----xy-z-', { x: view(2), y: view(3), z: view(4) });
      expectSubscriptions(source.subscriptions).toBe('^--------');
    });
  });

  it('drops the upstream when the last subscriber leaves and restarts from the initial view after that', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-b-c-d|', { a: record(1), b: record(2), c: record(3), d: record(4) });
      const live = liveView(counting, source);
      expectObservable(live, '^--!').toBe('-x-', { x: view(1) });
      expectObservable(live, '-----^---').toBe('------w-x-y-z|', { w: view(1), x: view(2), y: view(3), z: view(4) });
      expectSubscriptions(source.subscriptions).toBe(['^--!', '-----^-------!']);
    });
  });

  it('errors with PROJECTION_GAP at a gap and unsubscribes upstream', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-c-d|', { a: record(1), c: record(3), d: record(4) });
      expectObservable(liveView(counting, source)).toBe('-x-#', { x: view(1) }, expect.objectContaining({ code: 'PROJECTION_GAP' }));
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('duplicated deliveries change nothing: the view only moves on new seqs', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold('-a-a-b-a-b|', { a: record(1), b: record(2) });
      expectObservable(liveView(counting, source)).toBe('-x-x-y-y-y|', { x: view(1), y: view(2) });
    });
  });

  it('continues from a view built earlier (restart from an offset)', () => {
    const records$ = new Subject<RecordEnvelope>();
    const seen: CountView[] = [];
    liveView(counting, records$, view(2)).subscribe((value) => seen.push(value));
    for (const seq of [2, 3, 4]) records$.next(record(seq));
    expect(seen[seen.length - 1]).toEqual(view(4));
  });
});
