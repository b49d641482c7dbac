import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createMemoryEventStore, openLevelEventStore } from '../../stores/index.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { createRein } from '../../src/rein.js';
import { definePlugin, type AnyPluginHook } from '../../src/plugins/plugin-contract.js';
import type { CommandHooksConfig } from '../../src/hooks/command-hooks.js';
import { median, noopTool } from './bench-support.js';

type Variant = { label: string; plugins?: ReturnType<typeof definePlugin>[]; hooks?: CommandHooksConfig };

/** A plugin with `count` in-process preToolUse hooks that allow every call (what a policy hook costs when it says yes). */
const allowing = (count: number) =>
  definePlugin({
    manifest: { id: `allow-${count}`, name: 'allow', version: '1.0.0', contributes: { hooks: count > 0 ? ['preToolUse'] : [] } },
    setup: () => ({ hooks: Array.from({ length: count }, (_, index): AnyPluginHook => ({ id: `h${index}`, point: 'preToolUse', run: () => ({ decision: 'allow' }) })) }),
  });

/**
 * Milliseconds per tool call of one scripted session of `calls` model → noop round trips: CPU time of this process
 * (user + system; what the hooks add, and far less disturbed by other processes on a shared machine than wall time),
 * and wall time.
 */
const perCall = async (variant: Variant, calls: number, durability: 'memory' | 'relaxed'): Promise<{ cpu: number; wall: number }> => {
  const directory = await mkdtemp(join(tmpdir(), 'rein-bench-hooks-'));
  const store = durability === 'memory' ? createMemoryEventStore() : await openLevelEventStore(join(directory, '.rein'), { durability: 'relaxed' });
  try {
    const script = parseScript({ turns: [...Array.from({ length: calls }, () => ({ text: 'go', toolCalls: [{ name: 'noop', arguments: {} }] })), { text: 'done' }] });
    const rein = await createRein({
      store,
      workspace: directory,
      provider: createScriptedProvider(script),
      tools: [noopTool],
      memory: false,
      budgets: { maxTurns: calls + 5, maxToolCalls: calls + 5, maxTokens: 1e12, maxWallTimeMs: 3_600_000 },
      ...(variant.plugins ? { plugins: variant.plugins } : {}),
      ...(variant.hooks ? { hooks: variant.hooks } : {}),
    });
    const started = performance.now();
    const cpu = process.cpuUsage();
    const session = await rein.startSession({ task: 'bench' });
    const result = await session.whenQuiet();
    if (result.status !== 'completed') throw new Error(`${variant.label}: ended ${result.status}: ${result.reason ?? ''}`);
    const used = process.cpuUsage(cpu);
    return { cpu: (used.user + used.system) / 1000 / calls, wall: (performance.now() - started) / calls };
  } finally {
    await store.close();
    await rm(directory, { recursive: true, force: true });
  }
};

/**
 * The hook kernel's cost per tool call: the same scripted session (model → noop tool round trips) without any
 * plugin (the baseline), with a plugin host and no hook, and with 1 and 10 in-process `preToolUse` hooks — runs
 * interleaved, median of the rounds — then one command hook (a process spawned per call). Prints ms per call and the
 * ratio to the baseline measured in the same run. Target: in-process hooks add ≤ 5 % per call.
 */
export const main = async (calls = 300, rounds = 5): Promise<void> => {
  process.stdout.write(`hook kernel overhead per tool call (${calls} round trips, median of ${rounds} interleaved rounds)\n`);
  const variants: Variant[] = [
    { label: 'no plugins (baseline)' },
    { label: 'plugin host, 0 hooks', plugins: [allowing(0)] },
    { label: '1 in-process hook', plugins: [allowing(1)] },
    { label: '10 in-process hooks', plugins: [allowing(10)] },
  ];
  for (const durability of ['memory', 'relaxed'] as const) {
    const times = new Map<string, Array<{ cpu: number; wall: number }>>(variants.map((variant) => [variant.label, []]));
    await perCall(variants[0]!, 50, durability);
    // Each round starts at another variant, so no variant always runs first (warm-up) or last.
    for (let round = 0; round < rounds; round++) {
      for (let index = 0; index < variants.length; index++) {
        const variant = variants[(index + round) % variants.length]!;
        times.get(variant.label)!.push(await perCall(variant, calls, durability));
      }
    }
    const of = (label: string, key: 'cpu' | 'wall') => median(times.get(label)!.map((entry) => entry[key]));
    const baseline = { cpu: of(variants[0]!.label, 'cpu'), wall: of(variants[0]!.label, 'wall') };
    process.stdout.write(`  store: ${durability === 'memory' ? 'in memory' : 'LevelDB, relaxed'}\n`);
    for (const variant of variants) {
      const cpu = of(variant.label, 'cpu');
      const wall = of(variant.label, 'wall');
      process.stdout.write(`    ${variant.label.padEnd(24)} cpu ${cpu.toFixed(3)} ms per call · ${(cpu / baseline.cpu).toFixed(3)}× (${((cpu / baseline.cpu - 1) * 100).toFixed(1)} % added) · wall ${wall.toFixed(3)} ms · ${(wall / baseline.wall).toFixed(3)}×\n`);
    }
  }
  const spawned = 40;
  const commandHooks: CommandHooksConfig = { PreToolUse: [{ hooks: [{ type: 'command', command: 'true' }] }] };
  const base = median([(await perCall({ label: 'base' }, spawned, 'memory')).wall, (await perCall({ label: 'base' }, spawned, 'memory')).wall, (await perCall({ label: 'base' }, spawned, 'memory')).wall]);
  const command = median([(await perCall({ label: 'command', hooks: commandHooks }, spawned, 'memory')).wall, (await perCall({ label: 'command', hooks: commandHooks }, spawned, 'memory')).wall, (await perCall({ label: 'command', hooks: commandHooks }, spawned, 'memory')).wall]);
  process.stdout.write(`  one command hook (bash -c true, a process per call; ${spawned} calls, in memory, wall time): ${command.toFixed(3)} ms per call · ${(command / base).toFixed(2)}× the ${base.toFixed(3)} ms baseline\n`);
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(Number(process.argv[2] ?? 300), Number(process.argv[3] ?? 5));
