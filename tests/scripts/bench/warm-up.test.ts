import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../scripts/bench/warm-up.bench.js';

describe('the warm-up benchmark', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('prints each session of a fresh process and the steady state, with ratios to the floor of the same run', async () => {
    let out = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out += String(chunk);
      return true;
    });
    const figures = await main(3, 12);
    vi.restoreAllMocks();
    expect(out).toMatch(/floor \d[\d,]* µs per round trip/);
    expect(out).toMatch(/first session: set-up \+ round trips 1–10 \d[\d,]* µs \(\d+\.\d{2}×\) · the rest \d[\d,]* µs \(\d+\.\d{2}×\)/);
    expect(out).toMatch(/per session \(wall\/CPU per round trip, µs\): \d+\/\d+ \d+\/\d+ \d+\/\d+\n/);
    expect(out).toMatch(/steady state \(median of the last 3\) \d[\d,]* µs · ratio \d+\.\d{2}× the floor · within 20% of it after \d[\d,]* round trips/);
    expect(figures.sessions).toHaveLength(3);
    for (const figure of figures.sessions) expect(figure.wallUs > 0 && figure.cpuUs > 0).toBe(true);
    expect(figures.roundTripsToSteady % 12).toBe(0);
  });
});
