import type { EffectExecutor } from './effect.js';
import { clearUnrefTimeout } from '../util/unref-timer.js';

/** Waits `ms` unless the signal fires first; resolves false when it was aborted. The timer never keeps the process alive. */
const wait = (ms: number, signal: AbortSignal): Promise<boolean> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', abort);
      resolve(true);
    }, ms);
    timer.unref?.();
    const abort = () => {
      clearUnrefTimeout(timer);
      resolve(false);
    };
    signal.addEventListener('abort', abort, { once: true });
  });

/**
 * Executes `startTimer`: waits until session time (ms since creation, the host clock) reaches `args.deadlineMs`, then
 * settles with `timer.fired`. Machines never read a clock: a deadline is this effect. On resume an in-doubt timer
 * runs again against the same deadline (so one that passed while the process was down fires at once).
 */
export const createStartTimerExecutor = (options: { sleep?: (ms: number, signal: AbortSignal) => Promise<boolean> } = {}): EffectExecutor => {
  const sleep = options.sleep ?? wait;
  return {
    resumePolicy: () => 'rerun-after-check',
    async execute(request, context) {
      const deadline = Number(request.args.deadlineMs);
      const remaining = Number.isFinite(deadline) ? Math.max(0, deadline - context.elapsedMs()) : 0;
      if (remaining > 0) await sleep(remaining, context.signal);
      return { type: 'timer.fired', data: { effectId: request.effectId, elapsedMs: context.elapsedMs() } };
    },
  };
};
