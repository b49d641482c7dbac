// rein measured against its floor and its peers on one workload, in one command (README: *Performance*):
//
//   npm run bench:peers                      (from the project root: installs this folder's packages, then runs)
//   node scripts/bench/peers/run.mjs [--sizes 100,1000,10000] [--runs 5] [--big-runs 3] [--write-docs]
//
// Every case runs in its own process (cases.mjs): one warm-up, then the timed runs; the table gives the median µs
// per tool round trip with the ratio to the floor of the same N in the same run, the peak RSS at the largest N a
// system ran, and the bytes its store holds per round trip. Each case's line also gives the CPU time per round trip
// (the whole process, and the main thread alone on Linux): on a busy machine the wall times scatter (the AI SDK's
// N = 100 runs ranged 1,461–2,863 µs in one run), its CPU time far less. The timed region is the same for every
// system: one session (rein: `startSession` to `whenQuiet`, its set-up included; the AI SDK: one `generateText`),
// module loading and `createRein` outside it. At N = 100 the timed runs are round trips 101–600 of their process:
// the functions called once per round trip still run unoptimized there (V8 optimizes a function after ~500–1,000
// calls), where step.bench's figures come from a process that has run thousands of round trips. Systems whose cost per round trip grows with N (the AI
// SDK keeps every message and re-sends it; SqliteSaver writes the whole state per step) are not run at the largest
// N: a single run would take hours. --write-docs replaces the table between the peers markers of docs/performance.md.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const docsPath = fileURLToPath(new URL('../../../docs/performance.md', import.meta.url));

const flag = (name, fallback) => {
  const index = process.argv.indexOf(`--${name}`);
  return index < 0 ? fallback : process.argv[index + 1];
};
const sizes = flag('sizes', '100,1000,10000').split(',').map(Number);
const runs = Number(flag('runs', '5'));
const bigRuns = Number(flag('big-runs', '3'));
const writeDocs = process.argv.includes('--write-docs');
const largest = Math.max(...sizes);

/**
 * --install: install this folder's own packages (never rein's). better-sqlite3 compiles its addon (allowed by
 * `allowScripts` in package.json); node-gyp is pointed at the running Node's headers, as no other source is reachable.
 */
if (process.argv.includes('--install') && !existsSync(join(here, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'))) {
  const prefix = dirname(dirname(process.execPath));
  const env = existsSync(join(prefix, 'include/node/node.h')) ? { ...process.env, npm_config_nodedir: prefix } : process.env;
  process.stdout.write('peers: installing the peers\' packages (better-sqlite3 compiles; this takes minutes once)\n');
  execFileSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: here, env, stdio: 'inherit' });
}

const systems = [
  { id: 'floor', label: 'floor (raw classic-level, one msgpackr batch per round trip, sync)' },
  { id: 'rein-sync', label: 'rein, sync (default)' },
  { id: 'rein-relaxed', label: 'rein, relaxed' },
  { id: 'rein-memory', label: 'rein, in-memory store' },
  { id: 'ai-sdk', label: 'Vercel AI SDK 6 (`generateText`, mock model), in memory', maxSize: 1_000 },
  { id: 'langgraph', label: 'LangGraph.js, no checkpointer' },
  { id: 'langgraph-sqlite', label: 'LangGraph.js + SqliteSaver, synchronous=FULL', maxSize: 1_000 },
];

const median = (values) => {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)];
};
const group = (value) => Math.round(value).toLocaleString('en-US');
const megabytes = (bytes) => `${Math.round(bytes / 1024 / 1024)} MB`;
const size = (bytes) => (bytes >= 10_240 ? `${group(bytes / 1024)} KB` : `${group(bytes)} B`);

const runCase = (system, roundTrips) => {
  const count = roundTrips >= 10_000 ? bigRuns : runs;
  const result = spawnSync(process.execPath, ['--expose-gc', 'cases.mjs', system, String(roundTrips), String(count)], { cwd: here, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`${system} at N = ${roundTrips} failed:\n${result.stderr}`);
  const line = result.stdout.trim().split('\n').at(-1);
  return JSON.parse(line);
};

const before = loadavg();
process.stdout.write(`peers: one fake model → one no-op tool per round trip; N = ${sizes.join(', ')}; ${runs} timed runs (${bigRuns} at N ≥ 10,000) after a warm-up, each case in its own process; ${cpus().length} cores, load ${before.map((value) => value.toFixed(2)).join(' ')}\n`);
const results = new Map();
for (const roundTrips of sizes) {
  for (const system of systems) {
    if (system.maxSize !== undefined && roundTrips > system.maxSize) continue;
    const measured = runCase(system.id, roundTrips);
    results.set(`${system.id}@${roundTrips}`, measured);
    const cpu = measured.cpuRuns ? `; CPU ${group(median(measured.cpuRuns))} µs${measured.mainRuns ? ` (main thread ${group(median(measured.mainRuns))})` : ''} (runs ${measured.cpuRuns.map(group).join(', ')})` : '';
    process.stdout.write(`  ${system.id.padEnd(17)} N = ${String(roundTrips).padStart(6)}: ${group(median(measured.runs))} µs per round trip (runs ${measured.runs.map(group).join(', ')})${cpu}, peak RSS ${megabytes(measured.peakRssBytes)}${measured.bytesPerRoundTrip === undefined ? '' : `, ${size(measured.bytesPerRoundTrip)} per round trip on disk`}\n`);
  }
}
const after = loadavg();

const header = `| per round trip (µs) | ${sizes.map((value) => `N = ${group(value)}`).join(' | ')} | peak RSS (largest N run) | bytes on disk per round trip |`;
const rows = systems.map((system) => {
  const cells = sizes.map((roundTrips) => {
    const measured = results.get(`${system.id}@${roundTrips}`);
    if (!measured) return '—';
    const value = median(measured.runs);
    if (system.id === 'floor') return group(value);
    const floorValue = median(results.get(`floor@${roundTrips}`).runs);
    return `${group(value)} (${(value / floorValue).toFixed(1)}×)`;
  });
  const ran = sizes.filter((roundTrips) => results.has(`${system.id}@${roundTrips}`));
  const top = results.get(`${system.id}@${Math.max(...ran)}`);
  const rss = `${megabytes(top.peakRssBytes)}${Math.max(...ran) === largest ? '' : ` at ${group(Math.max(...ran))}`}`;
  const bytes = top.bytesPerRoundTrip === undefined ? '—' : size(top.bytesPerRoundTrip);
  return `| ${system.label} | ${cells.join(' | ')} | ${rss} | ${bytes} |`;
});
const revision = (() => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: here, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
})();
const table = [
  header,
  `| --- | ${sizes.map(() => '---').join(' | ')} | --- | --- |`,
  ...rows,
  '',
  `Measured by \`npm run bench:peers\` at ${revision} on ${new Date().toISOString().slice(0, 10)}: median of ${runs} runs (${bigRuns} at N ≥ 10,000) after a warm-up, each case in its own process, ${cpus().length} cores, load average ${before[0].toFixed(1)} before and ${after[0].toFixed(1)} after. Ratios are to the floor of the same N in the same run; — = not run (cost per round trip grows with N).`,
].join('\n');
process.stdout.write(`\n${table}\n`);

if (writeDocs) {
  const page = await readFile(docsPath, 'utf8');
  const start = '<!-- peers:start -->';
  const end = '<!-- peers:end -->';
  const from = page.indexOf(start);
  const to = page.indexOf(end);
  if (from < 0 || to < from) throw new Error(`docs/performance.md has no ${start} … ${end} block`);
  await writeFile(docsPath, `${page.slice(0, from + start.length)}\n${table}\n${page.slice(to)}`);
  process.stdout.write('docs/performance.md: peers table replaced\n');
}
