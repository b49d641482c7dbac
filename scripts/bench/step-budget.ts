import { readFile } from 'node:fs/promises';

/*
 * The per-step budget (docs/performance.md: *The per-step budget*): the in-memory round trip's ratio to the floor of the
 * same run may not grow past the figure recorded in scripts/bench/step-budget.json by more than its noise margin.
 * `step.bench.ts` judges it at the budget's N and sets a non-zero exit code when it is over, so `npm run bench` fails
 * loudly instead of a feature silently adding cost to every step.
 */

/** What scripts/bench/step-budget.json records. */
export interface StepBudget {
  /** The session length the budget is judged at (round trips). */
  roundTrips: number;
  /** The in-memory round trip's wall time divided by the floor's, both medians of the same run: the recorded figure. */
  inMemoryRatio: number;
  /** The noise allowed above it, as a fraction: the run fails when its ratio exceeds `inMemoryRatio × (1 + noiseMargin)`. */
  noiseMargin: number;
  /** Where and when the figure was measured (commit, load average), for whoever raises or lowers it. */
  measured: string;
}

/** The budget file beside the sources (the compiled bench runs from dist/scripts/bench/, a test from scripts/bench/). */
export const stepBudgetUrl = new URL(import.meta.url.includes('/dist/scripts/') ? '../../../scripts/bench/step-budget.json' : './step-budget.json', import.meta.url);

const positive = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value > 0;

/** Parse a budget file's text; an error naming the field when it is not a budget. */
export const parseStepBudget = (text: string): StepBudget => {
  const value = JSON.parse(text) as Partial<Record<keyof StepBudget, unknown>> | null;
  if (typeof value !== 'object' || value === null) throw new Error('the step budget is not a JSON object');
  if (!positive(value.roundTrips) || !Number.isInteger(value.roundTrips)) throw new Error('the step budget needs roundTrips, a positive integer');
  if (!positive(value.inMemoryRatio)) throw new Error('the step budget needs inMemoryRatio, a positive number');
  if (typeof value.noiseMargin !== 'number' || !(value.noiseMargin >= 0)) throw new Error('the step budget needs noiseMargin, a fraction ≥ 0');
  if (typeof value.measured !== 'string') throw new Error('the step budget needs measured, where the figure was taken');
  return { roundTrips: value.roundTrips, inMemoryRatio: value.inMemoryRatio, noiseMargin: value.noiseMargin, measured: value.measured };
};

export const loadStepBudget = async (url: URL = stepBudgetUrl): Promise<StepBudget> => parseStepBudget(await readFile(url, 'utf8'));

/** The verdict on one run's ratio: over when it exceeds the budget plus its margin. */
export const judgeStepBudget = (ratio: number, budget: StepBudget): { over: boolean; limit: number; line: string } => {
  const limit = budget.inMemoryRatio * (1 + budget.noiseMargin);
  const over = !(ratio <= limit);
  const figures = `in-memory ratio ${ratio.toFixed(2)}× the floor against the budget ${budget.inMemoryRatio.toFixed(2)}× + ${Math.round(budget.noiseMargin * 100)}% noise = ${limit.toFixed(2)}× (scripts/bench/step-budget.json)`;
  return { over, limit, line: over ? `STEP BUDGET EXCEEDED: ${figures}` : `step budget kept: ${figures}` };
};
