import type { EffectExecutor } from './effect.js';
import { isAborted, whenAborted, type Abortable } from './abort-hooks.js';
import { clearUnrefTimeout } from '../util/unref-timer.js';

/**
 * Waits `ms` unless `abortable` aborts first; resolves false when it was aborted. The timer never keeps the process
 * alive. Hooked through `whenAborted`: a host's effect context makes no AbortSignal for it (every child of a
 * delegation runs a deadline timer, aborted when the child ends).
 */
const wait = (ms: number, abortable: Abortable): Promise<boolean> =>
  new Promise((resolve) => {
    if (isAborted(abortable)) return resolve(false);
    const timer = setTimeout(() => {
      removeHook();
      resolve(true);
    }, ms);
    timer.unref?.();
    const removeHook = whenAborted(abortable, () => {
      clearUnrefTimeout(timer);
      resolve(false);
    });
  });

/**
 * Executes `startTimer`: waits until session time (ms since creation, the host clock) reaches `args.deadlineMs`, then
 * settles with `timer.fired`. Machines never read a clock: a deadline is this effect. On resume an in-doubt timer
 * runs again against the same deadline (so one that passed while the process was down fires at once). An injected
 * `sleep` gets the context's signal.
 */
export const createStartTimerExecutor = (options: { sleep?: (ms: number, signal: AbortSignal) => Promise<boolean> } = {}): EffectExecutor => {
  const sleep = options.sleep;
  return {
    resumePolicy: () => 'rerun-after-check',
    async execute(request, context) {
      const deadline = Number(request.args.deadlineMs);
      const remaining = Number.isFinite(deadline) ? Math.max(0, deadline - context.elapsedMs()) : 0;
      if (remaining > 0) await (sleep ? sleep(remaining, context.signal) : wait(remaining, context));
      return { type: 'timer.fired', data: { effectId: request.effectId, elapsedMs: context.elapsedMs() } };
    },
  };
};
