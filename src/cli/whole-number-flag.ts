import { ReinError } from '../host/host-errors.js';

/**
 * A flag's whole-number value, written as decimal digits only: `Number` alone would read `1e1` as 10, `0x10` as 16
 * and ` 7 ` as 7, so a typo would act on some other seq, port or budget. Outside `min`…`max` (or not digits) it is
 * `USAGE` with `message`; absent, `undefined`.
 */
export const wholeNumberFlag = (value: string | undefined, options: { min: number; max?: number; message: string }): number | undefined => {
  if (value === undefined) return undefined;
  const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(parsed) || parsed < options.min || parsed > (options.max ?? Number.MAX_SAFE_INTEGER)) throw new ReinError('USAGE', `${options.message}, got ${JSON.stringify(value)}`);
  return parsed;
};

/** A positive whole number (`--max-turns 5`). */
export const positiveFlag = (flag: string, value: string | undefined): number | undefined => wholeNumberFlag(value, { min: 1, message: `${flag} must be a positive integer` });
