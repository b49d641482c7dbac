import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../scripts/bench/session-setup.bench.js';

describe('the session set-up benchmark', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('prints a session\'s fixed CPU per store with its phases and its ratio to the bare store baseline of the same run', async () => {
    let out = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out += String(chunk);
      return true;
    });
    const figures = await main(1, 0);
    vi.restoreAllMocks();
    expect(out).toMatch(/baseline \(createMemoryEventStore \+ one append\): \d+\.\d{3} ms/);
    for (const label of ['in memory', 'LevelDB \\(synced\\)']) expect(out).toMatch(new RegExp(`${label}: set-up \\d+\\.\\d{2} ms per session \\(\\d+× the baseline\\) · fixed cost -?\\d+\\.\\d{2} ms \\(-?\\d+×\\) · -?\\d+\\.\\d{2} ms per step`));
    expect(out.match(/createRein \d+\.\d{2} · createSession \d+\.\d{2} · run \d+\.\d{2} · end \d+\.\d{2} ms/g)).toHaveLength(4);
    // Figures only (a worker process of the test run may be busy with other files' leftovers: no comparison of times).
    for (const store of ['memory', 'level'] as const) {
      const { one, ten } = figures.stores[store];
      for (const phases of [one, ten]) for (const value of Object.values(phases)) expect(Number.isFinite(value) && value >= 0).toBe(true);
    }
    expect(figures.baselineMs).toBeGreaterThan(0);
    expect(figures.stores.memory.setupMs).toBeGreaterThan(0);
  });
});
