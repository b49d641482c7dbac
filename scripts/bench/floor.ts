import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ClassicLevel } from 'classic-level';
import { pack } from 'msgpackr';
import { directoryBytes } from './bench-support.js';

/**
 * The floor of every step ratio: a raw loop appending one msgpackr batch per round trip to classic-level with
 * `sync: true` — what a round trip costs when it does nothing but make one record durable.
 */
export const floorRun = async (roundTrips: number): Promise<{ perRoundTripUs: number; bytesPerRoundTrip: number }> => {
  const directory = await mkdtemp(join(tmpdir(), 'rein-bench-floor-'));
  const db = new ClassicLevel<string, Uint8Array>(join(directory, 'db'), { valueEncoding: 'view' });
  await db.open();
  const started = performance.now();
  for (let turn = 1; turn <= roundTrips; turn++) {
    const value = pack({ seq: turn, type: 'round-trip', at: Date.now(), model: { turn, text: 'go', toolCalls: [{ callId: `c${turn}`, name: 'noop', arguments: {} }] }, tool: { callId: `c${turn}`, status: 'ok', observation: 'ok' } });
    await db.batch([{ type: 'put', key: `r!${String(turn).padStart(12, '0')}`, value }], { sync: true });
  }
  const elapsed = performance.now() - started;
  await db.close();
  const bytes = await directoryBytes(join(directory, 'db'));
  await rm(directory, { recursive: true, force: true });
  return { perRoundTripUs: (elapsed * 1000) / roundTrips, bytesPerRoundTrip: bytes / roundTrips };
};
