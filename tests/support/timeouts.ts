import { availableParallelism, loadavg } from 'node:os';

/**
 * How much slower than an idle machine this one runs right now: the one-minute load average per core, between 1 and
 * 5 (`REIN_TIMEOUT_SCALE` overrides it). Timeouts are a guard against a hang, never a performance assertion: on a
 * loaded machine they stretch instead of failing a test that is merely waiting its turn for a core.
 */
export const timeoutScale = (): number => {
  const forced = Number(process.env.REIN_TIMEOUT_SCALE);
  if (Number.isFinite(forced) && forced > 0) return forced;
  return Math.min(5, Math.max(1, loadavg()[0]! / availableParallelism()));
};

/** `ms` stretched by `timeoutScale()`. */
export const scaledTimeout = (ms: number): number => Math.round(ms * timeoutScale());
