import type { EffectContext } from './effect.js';
import { isAborted, whenAborted } from './abort-hooks.js';

/** A provider that did not stop within the grace after its abort: the call is abandoned (call-model records it as cancelled; the error never escapes the call). */
const abandonedError = (message: string): Error => Object.assign(new Error(message), { abandoned: true });
export const isAbandoned = (error: unknown): error is Error => error instanceof Error && (error as { abandoned?: unknown }).abandoned === true;

const abortReason = (signal: AbortSignal): string => {
  const reason: unknown = signal.reason;
  return reason instanceof Error && reason.name !== 'AbortError' ? ` (${reason.message})` : '';
};

/**
 * The provider's events, until it has not stopped `graceMs` after the call was aborted: then the wait for its next
 * event rejects with an error marked abandoned (its iterator is told to return, not awaited: `close`), so a provider
 * that ignores its signal cannot hold a cancel, an interrupt, a close or the wall-time budget. Read by `attemptOnce`
 * directly, not through a second async generator, and woken through one hook on the abort (no listener on the
 * signal, no `Promise.race` collecting a reaction per event on a long-lived promise): a round trip reads ~6 events.
 */
export class ProviderEvents {
  private readonly iterator: AsyncIterator<unknown>;
  private readonly unhook: (() => void) | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Rejects the wait in progress (set while one is). */
  private wake: ((error: Error) => void) | undefined;
  private abandoned: Error | undefined;
  /** The iterator ended or threw: there is nothing to close. */
  private over = false;

  constructor(
    source: AsyncIterable<unknown>,
    private readonly context: EffectContext,
  ) {
    this.iterator = source[Symbol.asyncIterator]();
    const graceMs = context.abandonGraceMs;
    this.unhook =
      graceMs === undefined
        ? undefined
        : whenAborted(context, () => {
            this.timer = setTimeout(() => {
              this.abandoned = abandonedError(`the model call was cancelled${abortReason(context.signal)} and the provider did not stop within ${graceMs} ms: it was abandoned`);
              this.wake?.(this.abandoned);
            }, graceMs);
          });
  }

  /** The provider's next event; rejects when the provider threw or was abandoned. */
  next(): Promise<IteratorResult<unknown>> {
    if (this.unhook === undefined) return this.settled(this.iterator.next());
    if (this.abandoned) return Promise.reject(this.abandoned);
    return new Promise<IteratorResult<unknown>>((resolve, reject) => {
      this.resolve = resolve;
      this.wake = reject;
      this.iterator.next().then(this.onEvent, this.onThrow);
    });
  }

  /** Settles the wait in progress (set while one is). */
  private resolve: ((result: IteratorResult<unknown>) => void) | undefined;

  /** The provider's next event arrived: the wait in progress resolves with it (one handler for every event, not two closures per event). */
  private readonly onEvent = (result: IteratorResult<unknown>): void => {
    if (result.done) this.over = true;
    this.resolve?.(result);
  };

  /** The provider threw: the wait in progress rejects with its error. */
  private readonly onThrow = (error: unknown): void => {
    this.over = true;
    this.wake?.(error as Error);
  };

  private settled(pending: Promise<IteratorResult<unknown>>): Promise<IteratorResult<unknown>> {
    return pending.then(
      (result) => {
        if (result.done) this.over = true;
        return result;
      },
      (error: unknown) => {
        this.over = true;
        throw error;
      },
    );
  }

  /**
   * Stop waiting; an iterator left early (as `for await` would leave it) is asked to return — awaited (the promise
   * returned) unless the call was aborted. Nothing to wait for, the common case, returns undefined (no promise).
   */
  close(): Promise<unknown> | undefined {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.unhook?.();
    this.wake = undefined;
    if (this.over) return undefined;
    this.over = true;
    if (!isAborted(this.context)) return Promise.resolve(this.iterator.return?.());
    void Promise.resolve(this.iterator.return?.()).catch(() => undefined);
    return undefined;
  }
}
