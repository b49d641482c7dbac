import { describe, expect, it } from 'vitest';
import { summarize } from '../../../scripts/bench/profile-summary.js';

/** root → work (3 samples, 1 ms apart) and root → waited (1 sample after a 100 ms gap: the process waited for a core). */
const profile = {
  nodes: [
    { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: 0 }, children: [2, 3] },
    { id: 2, callFrame: { functionName: 'work', url: 'file:///x/dist/src/a.js', lineNumber: 0 } },
    { id: 3, callFrame: { functionName: 'waited', url: 'file:///x/dist/src/b.js', lineNumber: 0 } },
  ],
  samples: [2, 2, 3, 2],
  timeDeltas: [1000, 1000, 100_000, 1000],
};

describe('profile summary', () => {
  it('weighs a sample by its gap by default, and by one sampling interval with samples', () => {
    const byTime = summarize(profile, 'functions');
    expect(byTime.totalMs).toBe(103);
    expect(byTime.rows[0]).toEqual(['waited src/b.js:1', 100]);
    const bySamples = summarize(profile, 'functions', undefined, 'samples');
    expect(bySamples.totalMs).toBe(4);
    expect(bySamples.rows).toEqual([['work src/a.js:1', 3], ['waited src/b.js:1', 1]]);
  });
});
