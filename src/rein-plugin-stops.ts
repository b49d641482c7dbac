import type { EventStore } from '../stores/event-store.js';
import { appendFacts } from './host/append-facts.js';
import { rootPath } from './host/root-path.js';
import type { PluginHost } from './plugins/plugin-host.js';
import type { ReinSession } from './session/session-handle.js';
import { sessionEndedIn } from './host/step-record.js';

/** How a harness records its plugins' stop in the logs of the sessions it ran. */
export interface PluginStops {
  /** Count `session` among those that get the record (when there are plugins and they have not stopped); returns it. */
  remember(session: ReinSession): ReinSession;
  /**
   * Stop the plugins once (later calls get the first call's promise), then append what their stop recorded to the log
   * of every remembered session once it is quiet. A log that cannot be appended to does not get it.
   */
  stop(reason: string): Promise<void>;
}

/** The plugin-stop bookkeeping of one harness over `store`. */
export const pluginStops = ({ pluginHost, store, clock }: { pluginHost: PluginHost; store: EventStore; clock: () => number }): PluginStops => {
  // The sessions this harness ran here, which record their plugins' stop: a handle until the session ended and is
  // quiet, then only its id (a long-lived harness does not keep ended sessions in memory).
  const hosted = new Map<string, ReinSession | undefined>();
  const remember = (session: ReinSession): ReinSession => {
    if (pluginHost.plugins().length === 0 || pluginsStopped) return session;
    hosted.set(session.id, session);
    const subscription = session.records$.subscribe((record) => {
      if (!sessionEndedIn(record)) return;
      queueMicrotask(() => subscription.unsubscribe());
      void session
        .whenQuiet()
        .catch(() => undefined)
        .then(() => {
          if (hosted.get(session.id) === session) hosted.set(session.id, undefined);
        });
    });
    return session;
  };
  let pluginsStopped: Promise<void> | undefined;
  const stopPlugins = (reason: string): Promise<void> =>
    (pluginsStopped ??= (async () => {
      const from = pluginHost.journal().length;
      await pluginHost.stopAll(reason);
      const facts = pluginHost.journal().slice(from);
      for (const [sessionId, session] of hosted) {
        await session?.whenQuiet().catch(() => undefined);
        if (facts.length === 0) continue;
        // A session this harness still runs (waiting for someone) records them through its own step loop: an append
        // beside it would move the head under it.
        if (session && session.result().status === 'paused') await session.recordFacts(facts).catch(() => undefined);
        else await appendFacts(store, sessionId, facts, clock).catch(() => undefined);
      }
      hosted.clear();
    })());
  return { remember, stop: stopPlugins };
};
