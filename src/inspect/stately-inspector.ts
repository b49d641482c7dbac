import type { StatelyInspectionEvent } from '@statelyai/inspect';
import { InspectError } from './inspect-errors.js';
import { safeJson } from './safe-json.js';

/** A live connection to a Stately inspector: feed it XState inspection events, then flush and close. */
export interface InspectorConnection {
  readonly url: string;
  /** Pass as an actor's `inspect` option: every actor, event and snapshot is converted and sent in order. */
  readonly inspect: (event: unknown) => void;
  /** Inspection events sent so far. */
  sent(): number;
  /** Resolves once every event handed to `inspect` so far has been written to the socket. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

const loopback = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** Refuse anything but a `ws://` URL on this machine: the inspector stream never leaves it. */
export const assertLocalInspectorUrl = (url: string): URL => {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    throw new InspectError('INSPECTOR_NOT_LOCAL', `${url} is not a URL`, { cause: error });
  }
  if (parsed.protocol !== 'ws:' || !loopback.has(parsed.hostname)) throw new InspectError('INSPECTOR_NOT_LOCAL', `the inspector URL must be ws:// on 127.0.0.1, localhost or [::1], not ${url}`);
  return parsed;
};

const nextTick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * Connect to a Stately inspector's WebSocket on this machine (`@statelyai/inspect` converts the XState events; this
 * adapter only carries them). Rejects with `INSPECTOR_UNREACHABLE` when nothing listens there.
 */
export const connectInspector = async (url: string, options: { timeoutMs?: number } = {}): Promise<InspectorConnection> => {
  assertLocalInspectorUrl(url);
  // Loaded on use: most commands never connect an inspector, and these two cost a tenth of a second at startup.
  const [{ createInspector }, { default: WebSocket }] = await Promise.all([import('@statelyai/inspect'), import('ws')]);
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.terminate();
      reject(new InspectError('INSPECTOR_UNREACHABLE', `no Stately inspector answered at ${url} within ${options.timeoutMs ?? 5000} ms`));
    }, options.timeoutMs ?? 5000);
    socket.once('open', () => {
      clearTimeout(timer);
      resolve();
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(new InspectError('INSPECTOR_UNREACHABLE', `no Stately inspector at ${url} (${error.message}); start one, or use rein inspect --serve`, { cause: error }));
    });
  });
  let sent = 0;
  let pending = 0;
  let failure: Error | undefined;
  const drained: Array<() => void> = [];
  const settle = () => {
    if (pending > 0) return;
    for (const resolve of drained.splice(0)) resolve();
  };
  const inspector = createInspector(
    {
      send(event: StatelyInspectionEvent) {
        if (socket.readyState !== WebSocket.OPEN) return;
        pending++;
        sent++;
        socket.send(safeJson(event), (error) => {
          if (error) failure ??= error;
          pending--;
          settle();
        });
      },
    },
    { autoStart: false },
  );
  return {
    url,
    inspect: (event) => inspector.inspect.next?.(event as never),
    sent: () => sent,
    async flush() {
      // @statelyai/inspect converts each event on a zero-delay timer; one more timer runs after all of them.
      await nextTick();
      await nextTick();
      if (pending > 0) await new Promise<void>((resolve) => drained.push(resolve));
      if (failure) throw new InspectError('INSPECTOR_UNREACHABLE', `the inspector connection failed: ${failure.message}`, { cause: failure });
    },
    async close() {
      if (socket.readyState === WebSocket.CLOSED) return;
      await new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        socket.close();
        setTimeout(resolve, 1000).unref();
      });
    },
  };
};
