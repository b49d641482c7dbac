import type { AppendOptions, EventStore } from '../../stores/event-store.js';
import type { SessionLease } from '../../stores/postgres/postgres-session-queue.js';

/**
 * The store as a worker's session sees it: every append to the leased session's stream carries the lease's owner and
 * epoch, which the store checks inside the append (`STORE_FENCED` once another worker took the session); `hold` of that
 * stream takes nothing (the lease is the hold). Everything else goes straight through; `close` does nothing (the
 * worker owns the store).
 */
export const fencedStore = (store: EventStore, lease: SessionLease): EventStore => {
  const fence = { owner: lease.owner, epoch: lease.epoch };
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'append') {
        return (stream: string, records: Parameters<EventStore['append']>[1], options: AppendOptions) =>
          target.append(stream, records, stream === lease.session ? { ...options, fence } : options);
      }
      // The lease is this process's proof it may write the session (a takeover of an expired lease must not wait for
      // a stalled owner's connection to drop): holding the leased stream takes nothing more.
      if (property === 'hold') return async (stream: string) => (stream === lease.session || target.hold === undefined ? async () => undefined : target.hold(stream));
      if (property === 'close') return async () => undefined;
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
};
