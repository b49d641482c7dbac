/**
 * Plain listeners on the host's record subjects (`records$`, `issued$`), for the session's own observers.
 *
 * Every record goes to the session's own folds and watchers (the views, memory, the handle's end watch, the
 * registry). Through rxjs each costs a Subject's loop and three subscriber layers per record; through a tap it is
 * one call. The writer publishes a record to the subject's taps first, in the order they were added, then to the
 * subject itself only when someone subscribed to it: what `records$` and `issued$` emit, and when, is unchanged.
 */
import { config, type Observable, type Subject, type Unsubscribable } from 'rxjs';

interface Tap<Value> {
  readonly listener: (value: Value) => void;
  closed: boolean;
}

/** A subject's taps: replaced, never changed in place, so a publish walks the list it started with. */
export interface Taps<Value> {
  list: ReadonlyArray<Tap<Value>>;
}

const tapsBySubject = new WeakMap<object, Taps<never>>();

/** The taps of `subject` (made on first ask): its publisher keeps them and calls `publish`. */
export const tapsOf = <Value>(subject: Subject<Value>): Taps<Value> => {
  let taps = tapsBySubject.get(subject) as Taps<Value> | undefined;
  if (taps === undefined) tapsBySubject.set(subject, (taps = { list: [] }) as Taps<never>);
  return taps;
};

/** As rxjs does with a subscriber's error: reported on its own (`config.onUnhandledError`, else thrown later), never to the publisher. */
const reportError = (error: unknown): void => {
  setTimeout(() => {
    if (config.onUnhandledError) config.onUnhandledError(error);
    else throw error;
  });
};

/** Hand `value` to the subject's taps, then to its subscribers (when it has any). */
export const publish = <Value>(subject: Subject<Value>, taps: Taps<Value>, value: Value): void => {
  const list = taps.list;
  for (let index = 0; index < list.length; index++) {
    const tap = list[index]!;
    if (tap.closed) continue;
    try {
      tap.listener(value);
    } catch (error) {
      reportError(error);
    }
  }
  if (subject.observed) subject.next(value);
};

/**
 * Listen to `source`'s values: a tap when `source` is a subject a publisher taps (the host's `records$`, `issued$`),
 * else an ordinary subscription. Either way the listener gets every value from now on, in order, until unsubscribed
 * (a tap removed while a value is handed out gets no more of it).
 */
export const listen = <Value>(source: Observable<Value>, listener: (value: Value) => void): Unsubscribable => {
  const taps = tapsBySubject.get(source) as Taps<Value> | undefined;
  if (taps === undefined) return source.subscribe(listener);
  const tap: Tap<Value> = { listener, closed: false };
  taps.list = [...taps.list, tap];
  return {
    unsubscribe: () => {
      if (tap.closed) return;
      tap.closed = true;
      taps.list = taps.list.filter((other) => other !== tap);
    },
  };
};
