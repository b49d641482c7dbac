import { fileURLToPath } from 'node:url';
import { recordClassOf } from '../../models/records.js';
import { SessionCreated } from '../../models/session.records.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import { createSessionTree } from '../../src/host/session-tree.js';
import { resolveCallSpecs } from '../../stores/call-spec-refs.js';
import { median, runBenchSession } from './bench-support.js';

/*
 * The machine tree's share of a round trip (issue 26, decision 2; docs/performance.md goal 2): the input records of an
 * in-memory bench session re-applied to a fresh interpreted tree — the session and turn machines' pure transitions,
 * the spawn of each reply's turn, the derived drafts — with nothing else (no store, no projection, no effect), beside
 * the whole in-memory round trip measured in the same run. CPU time (`process.cpuUsage`), not wall time: on a shared
 * machine the CPU per round trip is the steadier figure, and the share (tree CPU / round trip CPU) steadier still.
 *
 *   npm run build && node dist/scripts/bench/machine-tree.bench.js [roundTrips] [rounds]
 */

const cpuMicros = (since: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(since);
  return used.user + used.system;
};

/**
 * Re-apply a session's input records to a fresh tree — the machines' compiled form (the host's default), or xstate's
 * own `transition` (`compiled: false`) — and return the number of drafts it derived (so nothing is optimised away).
 */
const reapply = (inputs: readonly RecordEnvelope[], compiled: boolean, collect?: unknown[]): number => {
  const [created, ...rest] = inputs;
  const made = createSessionTree(SessionCreated.parse(created!.data), { compiled });
  let drafts = made.drafts.length;
  collect?.push(made.drafts);
  for (const record of rest) {
    const derived = made.tree.apply(record);
    drafts += derived.length;
    collect?.push(derived);
  }
  made.tree.stop();
  return drafts;
};

export const main = async (roundTrips = 1_000, rounds = 5): Promise<{ treeMicros: number; xstateMicros: number; roundTripMicros: number }> => {
  // A warm-up session, then the one whose inputs are re-applied.
  await (await runBenchSession({ roundTrips: 200, durability: 'memory' })).cleanup();
  const tree: number[] = [];
  const xstate: number[] = [];
  const whole: number[] = [];
  let drafts = 0;
  let inputs: RecordEnvelope[] = [];
  for (let round = 0; round < rounds; round++) {
    let since = process.cpuUsage();
    const run = await runBenchSession({ roundTrips, durability: 'memory' });
    whole.push(cpuMicros(since) / roundTrips);
    // A CallSpec the stream already holds is stored by reference: the machines get it whole, as the host does.
    inputs = resolveCallSpecs(await run.store.read(run.sessionId)).filter((record) => recordClassOf(record.type) === 'input');
    await run.cleanup();
    if (round === 0) {
      // The compiled form derives exactly xstate's drafts (the property test proves it per event; this is a guard).
      const compiledDrafts: unknown[] = [];
      const xstateDrafts: unknown[] = [];
      reapply(inputs, true, compiledDrafts);
      reapply(inputs, false, xstateDrafts);
      if (JSON.stringify(compiledDrafts) !== JSON.stringify(xstateDrafts)) throw new Error('the compiled machines derived other drafts than xstate');
    }
    // Interleaved: the compiled form (what the host runs), then xstate's transition on the same inputs.
    since = process.cpuUsage();
    drafts = reapply(inputs, true);
    tree.push(cpuMicros(since) / roundTrips);
    // Each round trip derives several drafts (its transitions, witnesses, intents): fewer means the inputs stopped
    // driving the tree (an input it could not read), and the figure would time nothing.
    if (drafts < 5 * roundTrips) throw new Error(`the tree derived ${drafts} drafts from ${inputs.length} inputs: it stopped following the session`);
    since = process.cpuUsage();
    reapply(inputs, false);
    xstate.push(cpuMicros(since) / roundTrips);
  }
  const treeMicros = median(tree);
  const xstateMicros = median(xstate);
  const roundTripMicros = median(whole);
  process.stdout.write(`machine tree: ${roundTrips} round trips re-applied (${inputs.length} inputs, ${drafts} derived drafts), ${rounds} rounds\n`);
  process.stdout.write(`  tree CPU ${treeMicros.toFixed(0)} µs per round trip (xstate's transition: ${xstateMicros.toFixed(0)} µs, ${(xstateMicros / treeMicros).toFixed(1)}x) · whole in-memory round trip CPU ${roundTripMicros.toFixed(0)} µs · tree share ${((100 * treeMicros) / roundTripMicros).toFixed(1)}%\n`);
  return { treeMicros, xstateMicros, roundTripMicros };
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(Number(process.argv[2] ?? 1_000), Number(process.argv[3] ?? 5));
