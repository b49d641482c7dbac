import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { judgeStepBudget, parseStepBudget, stepBudgetUrl } from '../../../scripts/bench/step-budget.js';

describe('the per-step budget', () => {
  it('the recorded budget parses and names where it was measured', async () => {
    const budget = parseStepBudget(await readFile(stepBudgetUrl, 'utf8'));
    expect(budget.roundTrips).toBeGreaterThan(0);
    expect(budget.inMemoryRatio).toBeGreaterThan(0);
    expect(budget.noiseMargin).toBeGreaterThanOrEqual(0);
    expect(budget.measured.length).toBeGreaterThan(0);
  });

  it('a ratio past the budget plus its margin is over; at or below it is kept', () => {
    const budget = { roundTrips: 1_000, inMemoryRatio: 10, noiseMargin: 0.5, measured: 'test' };
    expect(judgeStepBudget(15, budget)).toMatchObject({ over: false, limit: 15 });
    expect(judgeStepBudget(9, budget).line).toMatch(/^step budget kept/);
    const over = judgeStepBudget(15.01, budget);
    expect(over.over).toBe(true);
    expect(over.line).toMatch(/^STEP BUDGET EXCEEDED/);
    expect(judgeStepBudget(Number.NaN, budget).over).toBe(true);
  });

  it('a file that is not a budget is refused with the field it lacks', () => {
    expect(() => parseStepBudget('[]')).toThrow(/roundTrips/);
    expect(() => parseStepBudget('null')).toThrow(/JSON object/);
    expect(() => parseStepBudget(JSON.stringify({ roundTrips: 1000, inMemoryRatio: -1, noiseMargin: 0.2, measured: 'x' }))).toThrow(/inMemoryRatio/);
    expect(() => parseStepBudget(JSON.stringify({ roundTrips: 1000, inMemoryRatio: 12, noiseMargin: -0.1, measured: 'x' }))).toThrow(/noiseMargin/);
    expect(() => parseStepBudget(JSON.stringify({ roundTrips: 1000, inMemoryRatio: 12, noiseMargin: 0.2 }))).toThrow(/measured/);
  });
});
