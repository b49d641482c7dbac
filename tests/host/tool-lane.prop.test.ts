import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ToolLane } from '../../src/host/tool-lane.js';
import { propertyRuns } from '../support/temp-dir.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('ToolLane', () => {
  it('commits in request order, runs shared calls concurrently up to the limit, and exclusive calls alone', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ exclusive: fc.boolean(), delay: fc.integer({ min: 0, max: 6 }) }), { minLength: 1, maxLength: 12 }), fc.integer({ min: 1, max: 4 }), async (calls, limit) => {
        const committed: number[] = [];
        let running = 0;
        let exclusiveRunning = false;
        let maxShared = 0;
        let violations = 0;
        const lane = new ToolLane<number>(limit, async (outcome) => {
          if (outcome.ok) committed.push(outcome.value);
        });
        let done: () => void = () => {};
        const allDone = new Promise<void>((resolve) => (done = resolve));
        let finished = 0;
        calls.forEach((call, index) =>
          lane.add(call.exclusive, async () => {
            if (exclusiveRunning || (call.exclusive && running > 0)) violations++;
            running++;
            if (call.exclusive) exclusiveRunning = true;
            maxShared = Math.max(maxShared, running);
            await sleep(call.delay);
            running--;
            if (call.exclusive) exclusiveRunning = false;
            if (++finished === calls.length) setTimeout(done, 5);
            return index;
          }),
        );
        await allDone;
        expect(violations).toBe(0);
        expect(maxShared).toBeLessThanOrEqual(limit);
        expect(committed).toEqual(calls.map((_, index) => index));
        expect(lane.idle).toBe(true);
      }),
      { numRuns: propertyRuns(60) },
    );
  });

  it('really overlaps shared calls', async () => {
    const lane = new ToolLane<number>(4, async () => {});
    let concurrent = 0;
    let peak = 0;
    const jobs = Array.from({ length: 4 }, (_, index) => new Promise<void>((resolve) =>
      lane.add(false, async () => {
        peak = Math.max(peak, ++concurrent);
        await sleep(20);
        concurrent--;
        resolve();
        return index;
      }),
    ));
    await Promise.all(jobs);
    expect(peak).toBe(4);
  });
});
