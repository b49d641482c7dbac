import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mean, sum } from '../src/stats.js';

test('sum adds the values', () => {
  assert.equal(sum([1, 2, 3]), 6);
});

test('mean divides the sum by the count', () => {
  assert.equal(mean([2, 4, 6]), 4);
});
