/**
 * Cancellation without an AbortSignal on the step path. Node makes an effect's AbortSignal on its first read, and a
 * listener on it costs an EventTarget registration and removal: the host's effect context offers `aborted` and
 * `onAbort`, which read and hook the abort without making the signal. A context without them (a test's, an
 * executor run outside a host) is read through its signal.
 */

/** Something that can be cancelled: its signal, and optionally the signal-free readings of it. */
export interface Abortable {
  readonly signal: AbortSignal;
  /** Whether `signal` aborted, read without making it. */
  readonly aborted?: boolean;
  /** Run `hook` once when `signal` aborts (at once if it already did); returns the hook's removal. Makes no signal. */
  onAbort?(hook: () => void): () => void;
}

const nothing = (): void => undefined;

/** Whether `abortable` was aborted (without making its signal when it can say so itself). */
export const isAborted = (abortable: Abortable): boolean => abortable.aborted ?? abortable.signal.aborted;

/**
 * Run `hook` once when `abortable` aborts (synchronously now if it already did, and then the removal does nothing);
 * returns a function that removes it. Hooked without a signal when `abortable` offers `onAbort`.
 */
export const whenAborted = (abortable: Abortable, hook: () => void): (() => void) => {
  if (abortable.onAbort) return abortable.onAbort(hook);
  const signal = abortable.signal;
  if (signal.aborted) {
    hook();
    return nothing;
  }
  signal.addEventListener('abort', hook, { once: true });
  return () => signal.removeEventListener('abort', hook);
};
