import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';
import type { ModelEvent, ModelRequest } from '../../models/model-contract.js';
import { createMemoryEventStore } from '../../stores/index.js';
import { CaptureFilter } from '../../src/changes/capture-rules.js';
import { WorkspaceCapture } from '../../src/changes/workspace-capture.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createRein } from '../../src/rein.js';
import { defineTool } from '../../src/tools/tool.js';
import { median } from './bench-support.js';

/** A workspace of `files` files of ~200 bytes, 100 to a folder (folders of 10 under `src/`). */
const makeWorkspace = async (files: number): Promise<string> => {
  const root = await mkdtemp(join(tmpdir(), 'rein-bench-capture-'));
  for (let index = 0; index < files; index++) {
    const folder = join(root, 'src', `m${Math.floor(index / 1000)}`, `p${Math.floor(index / 100) % 10}`);
    if (index % 100 === 0) await mkdir(folder, { recursive: true });
    await writeFile(join(folder, `f${index}.ts`), `export const value${index} = ${index};\n${'// padding line of a source file\n'.repeat(5)}`);
  }
  return root;
};

/** The file the `touch` call of turn `turn` rewrites (spread over the workspace). */
const fileOf = (root: string, files: number, turn: number): string => {
  const index = (turn * 7_919) % files;
  return join(root, 'src', `m${Math.floor(index / 1000)}`, `p${Math.floor(index / 100) % 10}`, `f${index}.ts`);
};

/** Every call writes a content never written before (a rewrite with the same bytes is no change). */
let written = 0;

/** A mutating tool (not read-only, so every call is captured): it rewrites one file of the workspace. */
const touchTool = (root: string, files: number) =>
  defineTool({
    name: 'touch',
    description: 'Rewrites one file.',
    parameters: z.object({ turn: z.number().int() }).strict(),
    annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false, requiresConfirmation: false },
    risk: 'write',
    sideEffect: 'workspace-write',
    resumePolicy: 'rerun-after-check',
    execute: async ({ turn }) => {
      await writeFile(fileOf(root, files, turn), `export const changed = ${++written};\n`);
      return { ok: true, output: 'ok' };
    },
  });

/** One `touch` call per turn for `roundTrips` turns, then an answer. */
const touchProvider = (roundTrips: number): ModelProvider => ({
  name: 'bench',
  model: 'bench',
  async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    const asking = request.turn <= roundTrips;
    yield { type: 'started', model: 'bench' };
    if (asking) yield { type: 'tool-intent', providerCallId: `c${request.turn}`, name: 'touch', arguments: { turn: request.turn } };
    yield { type: 'usage', usage: { inputTokens: 10, outputTokens: 5 } };
    yield { type: 'finished', stopReason: asking ? 'tool_use' : 'end_turn' };
  },
});

/**
 * Wall ms of each mutating call (from the model's answer to the call's settlement) in a session of `roundTrips`
 * calls on an in-memory store: the first (the capture's baseline of the whole workspace) and the median of the rest.
 */
const sessionCalls = async (root: string, files: number, roundTrips: number, capture: boolean): Promise<{ first: number; rest: number; cpu: number; changed: number }> => {
  const store = createMemoryEventStore();
  const rein = await createRein({ store, workspace: root, provider: touchProvider(roundTrips), tools: [touchTool(root, files)], permissions: { approveAll: true }, memory: false, instructions: false, ...(capture ? {} : { capture: false as const }), budgets: { maxTurns: roundTrips + 5, maxToolCalls: roundTrips + 5, maxTokens: 1e12, maxWallTimeMs: 3_600_000 } });
  const session = await rein.createSession({ task: 'bench' });
  const calls: number[] = [];
  let answered = 0;
  session.records$.subscribe((record) => {
    if (record.type === 'model.responded') answered = performance.now();
    if (record.type === 'tool.settled') calls.push(performance.now() - answered);
  });
  let cpuStarted: NodeJS.CpuUsage | undefined;
  session.records$.subscribe((record) => {
    // CPU from the end of the first call (the baseline capture) to the end: the steady per-call cost.
    if (record.type === 'tool.settled' && !cpuStarted) cpuStarted = process.cpuUsage();
  });
  await session.send('bench');
  const result = await session.whenQuiet();
  const used = process.cpuUsage(cpuStarted);
  if (result.status !== 'completed') throw new Error(`bench session ended ${result.status}: ${result.reason ?? ''}`);
  const changed = (await store.read(session.id)).filter((record) => record.type === 'workspace.changed').length;
  if (capture && changed !== roundTrips) throw new Error(`expected ${roundTrips} workspace.changed records, got ${changed}`);
  await rein.close();
  return { first: calls[0]!, rest: median(calls.slice(1)), cpu: (used.user + used.system) / 1000 / (roundTrips - 1), changed };
};

/**
 * The capture's own cost per window around a call that rewrites one file, without a session around it: median wall ms
 * and mean CPU ms, with inotify (`auto`) or the `scan` detector (where inotify is missing).
 */
const windowCost = async (root: string, files: number, calls: number, detector: 'auto' | 'scan'): Promise<{ wall: number; cpu: number }> => {
  const store = createMemoryEventStore();
  const capture = new WorkspaceCapture({ root, filter: new CaptureFilter(root), blobs: store.blobs, known: async () => undefined, detector });
  const call = { effectId: 'root:e1', callId: 'root:e1.0', tool: 'touch' };
  await capture.window(call, async () => undefined, async () => undefined);
  const times: number[] = [];
  let cpu = 0;
  for (let turn = 0; turn < calls; turn++) {
    const content = `window ${++written}\n`;
    const file = fileOf(root, files, turn);
    const started = performance.now();
    const cpuStarted = process.cpuUsage();
    await capture.window(call, () => writeFile(file, content), async () => undefined);
    const used = process.cpuUsage(cpuStarted);
    times.push(performance.now() - started);
    cpu += (used.user + used.system) / 1000;
  }
  capture.close();
  return { wall: median(times), cpu: cpu / calls };
};

/**
 * What capturing the workspace costs per mutating call (docs/replay.md: *Time travel*): the same in-memory session of N calls
 * of a tool that rewrites one file, with the capture off (the baseline) and on (inotify), interleaved, on a 100-file
 * and a 10,000-file workspace. Prints the median ms per call, the capture's added ms (targets: ≤ 2 ms at 100 files,
 * ≤ 20 ms at 10,000), the ratio to the baseline, the first call's one-time baseline capture, the window alone, and the `scan` fallback.
 */
export const main = async (roundTrips = 200, runs = 3): Promise<void> => {
  process.stdout.write(`capture: ${roundTrips} mutating calls per session, median of ${runs} runs; load average ${loadavg()[0]!.toFixed(2)}\n`);
  for (const [files, target] of [
    [100, 2],
    [10_000, 20],
  ] as const) {
    const root = await makeWorkspace(files);
    try {
      const off: number[] = [];
      const on: number[] = [];
      const offCpu: number[] = [];
      const onCpu: number[] = [];
      const firsts: number[] = [];
      await sessionCalls(root, files, 20, false);
      for (let run = 0; run < runs; run++) {
        const plain = await sessionCalls(root, files, roundTrips, false);
        off.push(plain.rest);
        offCpu.push(plain.cpu);
        const captured = await sessionCalls(root, files, roundTrips, true);
        on.push(captured.rest);
        onCpu.push(captured.cpu);
        firsts.push(captured.first);
      }
      const baseline = median(off);
      const withCapture = median(on);
      const added = withCapture - baseline;
      const [cpuBaseline, cpuWith] = [median(offCpu), median(onCpu)];
      const inotify = await windowCost(root, files, Math.min(roundTrips, 100), 'auto');
      const scan = await windowCost(root, files, Math.min(roundTrips, 50), 'scan');
      process.stdout.write(
        [
          `  ${files.toLocaleString('en-US')} files:`,
          `    baseline (capture off)      ${baseline.toFixed(3)} ms wall, ${cpuBaseline.toFixed(3)} ms CPU per mutating call`,
          `    capture on (inotify)        ${withCapture.toFixed(3)} ms wall, ${cpuWith.toFixed(3)} ms CPU per mutating call  (${(withCapture / baseline).toFixed(2)}× / ${(cpuWith / cpuBaseline).toFixed(2)}× the baseline; +${added.toFixed(3)} ms wall, +${(cpuWith - cpuBaseline).toFixed(3)} ms CPU; target ≤ ${target} ms: ${added <= target ? 'met' : 'MISSED'})`,
          `    first call (baseline scan)  ${median(firsts).toFixed(1)} ms once per session and process`,
          `    the window alone (inotify)  ${inotify.wall.toFixed(3)} ms wall, ${inotify.cpu.toFixed(3)} ms CPU per call`,
          `    scan fallback (no inotify)  ${scan.wall.toFixed(3)} ms wall, ${scan.cpu.toFixed(3)} ms CPU per call  (${(scan.wall / baseline).toFixed(2)}× the baseline)`,
          '',
        ].join('\n'),
      );
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(Number(process.argv[2] ?? 200), Number(process.argv[3] ?? 3));
