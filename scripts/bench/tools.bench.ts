import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { glob } from 'tinyglobby';
import { createMemoryEventStore } from '../../stores/index.js';
import { PermissionPolicy } from '../../src/policy/permission-policy.js';
import { defaultSandboxPolicy, detectIsolation, limitPrefix, type SandboxPolicy } from '../../src/policy/sandbox-policy.js';
import { bwrapArguments, runtimeDirectory, sandboxHome, sandboxMounts } from '../../src/policy/sandbox-profile.js';
import { sandboxEnforcement } from '../../src/policy/sandbox-probe.js';
import { builtinTools } from '../../src/tools/builtin-tools.js';
import { prepareLaunch } from '../../src/tools/command-launch.js';
import { commandWatchdog } from '../../src/tools/command-watchdog.js';
import { runCommand } from '../../src/tools/process-runner.js';
import { globOptions } from '../../src/tools/glob.tool.js';
import { ripgrepArguments, ripgrepPath } from '../../src/tools/grep.tool.js';
import { defaultIgnoredDirectories } from '../../src/tools/search-scope.js';
import { SessionToolState } from '../../src/tools/session-tool-state.js';
import { runToolPipeline, type PipelineEnvironment } from '../../src/tools/tool-pipeline.js';
import { ToolRegistry } from '../../src/tools/tool-registry.js';
import { Workspace } from '../../src/tools/workspace.js';
import { loadBlake3 } from '../../src/util/blake3.js';
import { formatMs, median } from './bench-support.js';

const repositoryRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** The tool pipeline over `root` with every call allowed, as a session would run it (facts built, nothing persisted). */
const pipelineOver = async (root: string, observationLimit?: number, sandbox: Partial<SandboxPolicy> = {}) => {
  await loadBlake3();
  const policy = new PermissionPolicy({ approveAll: true });
  const environment: PipelineEnvironment = {
    registry: new ToolRegistry(builtinTools()),
    policy,
    visibility: (tool) => policy.visibility(tool),
    state: new SessionToolState(),
    workspace: await Workspace.open(root),
    blobs: createMemoryEventStore().blobs,
    sandbox: { ...defaultSandboxPolicy, ...sandbox },
    ...(observationLimit === undefined ? {} : { observationLimit }),
  };
  let count = 0;
  return async (name: string, args: Record<string, unknown>): Promise<string> => {
    count++;
    const outcome = await runToolPipeline(environment, { effectId: `root:e${count}`, callId: `c${count}`, actor: 'root', name, arguments: args }, { sessionId: 'bench', signal: new AbortController().signal, now: Date.now, persist: async () => {}, progress: () => {} });
    if (outcome.kind !== 'settled' || outcome.outcome.status !== 'ok') throw new Error(`${name} did not succeed: ${JSON.stringify(outcome).slice(0, 300)}`);
    return outcome.outcome.observation;
  };
};

const time = async (work: () => Promise<unknown>): Promise<number> => {
  const started = performance.now();
  await work();
  return performance.now() - started;
};

/** Interleave baseline and candidate runs so machine noise hits both alike; returns the two medians. */
const interleave = async (runs: number, baseline: () => Promise<unknown>, candidate: () => Promise<unknown>): Promise<{ baseline: number; candidate: number }> => {
  await baseline();
  await candidate();
  const baselineTimes: number[] = [];
  const candidateTimes: number[] = [];
  for (let run = 0; run < runs; run++) {
    baselineTimes.push(await time(baseline));
    candidateTimes.push(await time(candidate));
  }
  return { baseline: median(baselineTimes), candidate: median(candidateTimes) };
};

const runRipgrepDirectly = (binary: string, argv: string[], cwd: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const child = spawn(binary, argv, { cwd, stdio: ['ignore', 'pipe', 'ignore'] });
    let bytes = 0;
    child.stdout.on('data', (chunk: Buffer) => (bytes += chunk.length));
    child.on('error', reject);
    child.on('close', () => resolve(bytes));
  });

const line = (label: string, result: { baseline: number; candidate: number }, target: string) =>
  process.stdout.write(`  ${label.padEnd(44)} tool ${formatMs(result.candidate).padStart(12)} · direct ${formatMs(result.baseline).padStart(12)} · ratio ${(result.candidate / result.baseline).toFixed(2)}× (target ${target})\n`);

/**
 * Tool benchmarks: `read` of a 10,000-line file with tags (target ≤ 20 ms median; baseline: reading and splitting
 * the same file without tags) — as the tool runs it (it shows and tags what fits the observation budget) and with no
 * budget (all 10,000 lines tagged), `grep` through the tool vs the same ripgrep search run directly on node_modules
 * (≤ 1.3×), and `glob` vs a direct tinyglobby call with the same options (≤ 1.3×).
 */
export const main = async (): Promise<void> => {
  process.stdout.write('tools (median of interleaved runs; the tool runs through the whole pipeline)\n');
  const directory = await mkdtemp(join(tmpdir(), 'rein-bench-tools-'));
  try {
    await writeFile(join(directory, 'big.ts'), Array.from({ length: 10_000 }, (_, index) => `export const value${index} = compute(${index}, 'some text to make the line realistic'); // ${index}`).join('\n'));
    const readFileAndSplit = () => readFile(join(directory, 'big.ts'), 'utf8').then((text) => text.split('\n'));
    const readCall = await pipelineOver(directory);
    const read = await interleave(31, readFileAndSplit, () => readCall('read', { path: 'big.ts', limit: 10_000 }));
    process.stdout.write(`  ${'read 10,000 lines (as much as fits 16,000 chars)'.padEnd(44)} tool ${formatMs(read.candidate).padStart(12)} (target ≤ 20 ms) · readFile+split ${formatMs(read.baseline)} · ratio ${(read.candidate / read.baseline).toFixed(2)}×\n`);
    // The same read with no observation budget: every one of the 10,000 lines is tagged and shown.
    const unboundedCall = await pipelineOver(directory, 1e9);
    const all = await interleave(31, readFileAndSplit, () => unboundedCall('read', { path: 'big.ts', limit: 10_000 }));
    process.stdout.write(`  ${'read 10,000 lines, all tagged and shown'.padEnd(44)} tool ${formatMs(all.candidate).padStart(12)} · readFile+split ${formatMs(all.baseline)} · ratio ${(all.candidate / all.baseline).toFixed(2)}×\n`);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }

  const call = await pipelineOver(repositoryRoot);
  const workspace = await Workspace.open(repositoryRoot);
  const binary = await ripgrepPath();
  const excluded = [...defaultIgnoredDirectories.filter((name) => name !== 'node_modules'), '.rein'];
  for (const [label, pattern, maxMatches] of [
    ['grep node_modules, rare pattern (full walk)', 'zqxjkv_not_there', 100],
    ['grep node_modules, 100 of many matches', 'function', 100],
  ] as const) {
    const argv = ripgrepArguments({ pattern }, { target: 'node_modules', excluded });
    line(label, await interleave(7, () => runRipgrepDirectly(binary, argv, workspace.root), () => call('grep', { pattern, path: 'node_modules', max_matches: maxMatches })), '≤ 1.3×');
  }
  const scope = { base: join(workspace.root, 'node_modules'), relative: 'node_modules' };
  const ignored = [...defaultIgnoredDirectories, '.rein'];
  // The baseline is tinyglobby with its own file system access; the tool lists each directory by descriptor.
  const { fs: _pinned, ...plainOptions } = globOptions(scope, ignored);
  line('glob node_modules **/*.js', await interleave(7, () => glob('**/*.js', plainOptions), () => call('glob', { pattern: '**/*.js', path: 'node_modules' })), '≤ 1.3×');

  await watchdogCost(workspace);

  // The sandbox's cost per command: `bash true` in bubblewrap against the same call without it (mode off).
  const sandboxed = await pipelineOver(repositoryRoot, undefined, { mode: 'auto' });
  const unsandboxed = await pipelineOver(repositoryRoot, undefined, { mode: 'off' });
  const enforcement = await sandboxEnforcement({ ...defaultSandboxPolicy, mode: 'auto' });
  if (enforcement.enforcement !== 'bubblewrap') {
    process.stdout.write(`  bash true in bubblewrap: not measured (${enforcement.reason})\n`);
    return;
  }
  const bash = await interleave(50, () => unsandboxed('bash', { command: 'true' }), () => sandboxed('bash', { command: 'true' }));
  process.stdout.write(`  ${'bash true, bubblewrap vs none (median of 50)'.padEnd(44)} sandboxed ${formatMs(bash.candidate).padStart(9)} · none ${formatMs(bash.baseline).padStart(9)} · added ${formatMs(bash.candidate - bash.baseline)} (target ≤ 30 ms) · ratio ${(bash.candidate / bash.baseline).toFixed(2)}×\n`);
  await hardeningCost(workspace);
};

/**
 * The hardening's cost per command (issue #25): `true` launched as `bash` launches it now — the launcher (Perl) with
 * the seccomp program and, as root, the idmapped workspace, the switch to a fresh uid (setpriv) — against the same
 * bubblewrap profile started directly, as before.
 */
const hardeningCost = async (workspace: Workspace): Promise<void> => {
  const policy = { ...defaultSandboxPolicy, mode: 'auto' as const };
  const launch = await prepareLaunch({ command: 'true', cwd: workspace.root, policy, workspace, marker: 'bench:hardening' });
  if ('refused' in launch) throw new Error(launch.refused);
  const support = detectIsolation();
  const mounts = sandboxMounts({ workspace: workspace.root, workspaceWritable: true, protectedPaths: workspace.protectedList(), readableProtected: workspace.readableList(), home: sandboxHome(), toolDirectories: [runtimeDirectory()], tmpSizeMb: policy.maxTmpMb });
  const plain = { ...launch, argv: [policy.bubblewrap, ...bwrapArguments(mounts, { network: false, cwd: workspace.root }), '--', ...limitPrefix(policy, support).prefix, support.shell, '-c', 'true'] };
  const run = (which: typeof launch) => runCommand({ launch: which, cwd: workspace.root, timeoutMs: 60_000, policy, signal: new AbortController().signal });
  const check = await run(launch);
  if (check.exitCode !== 0) throw new Error(`the hardened launch failed: ${check.stderr.bytes.toString()}`);
  const cost = await interleave(50, () => run(plain), () => run(launch));
  const who = launch.enforcement.user.enforced ? (support.root ? 'as root: launcher, idmapped workspace, own uid' : 'launcher with seccomp') : 'launcher';
  process.stdout.write(`  ${`bash true, hardened vs plain bubblewrap (median of 50; ${who})`.padEnd(44)} hardened ${formatMs(cost.candidate).padStart(9)} · plain ${formatMs(cost.baseline).padStart(9)} · added ${formatMs(cost.candidate - cost.baseline)} · ratio ${(cost.candidate / cost.baseline).toFixed(2)}×\n`);
};

/** The fallback watchdog's cost per command: `echo` run as the fallback runs it, under the watchdog and without it. */
const watchdogCost = async (workspace: Workspace): Promise<void> => {
  const watchdog = commandWatchdog();
  if (!watchdog.prefix) {
    process.stdout.write(`  echo under the fallback watchdog: not measured (${watchdog.reason})\n`);
    return;
  }
  const policy = { ...defaultSandboxPolicy, mode: 'off' as const };
  const launch = await prepareLaunch({ command: 'echo hi', cwd: workspace.root, policy, workspace, marker: 'bench:watchdog' });
  if ('refused' in launch) throw new Error(launch.refused);
  const bare = { ...launch, argv: launch.argv.slice(watchdog.prefix.length), watchdog: false };
  const run = (which: typeof launch) => runCommand({ launch: which, cwd: workspace.root, timeoutMs: 60_000, policy, signal: new AbortController().signal });
  const cost = await interleave(50, () => run(bare), () => run(launch));
  process.stdout.write(`  ${'echo, fallback watchdog vs none (median of 50)'.padEnd(44)} watched ${formatMs(cost.candidate).padStart(9)} · none ${formatMs(cost.baseline).padStart(9)} · added ${formatMs(cost.candidate - cost.baseline)} · ratio ${(cost.candidate / cost.baseline).toFixed(2)}×\n`);
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
