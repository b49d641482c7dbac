import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * Where a step's time goes — the method, not the profiles (docs/performance.md: *Performance*):
 *
 *   npm run build
 *   node --cpu-prof --cpu-prof-dir=prof dist/scripts/bench/step.bench.js 1000 1
 *   node dist/scripts/bench/profile-summary.js prof            # self time by package and rein folder
 *   node dist/scripts/bench/profile-summary.js prof inclusive  # the functions that hold the most time, callees included
 *   node dist/scripts/bench/profile-summary.js prof functions  # self time per function
 *   node dist/scripts/bench/profile-summary.js prof callees getInitialSnapshot  # where that function's time goes
 *   PROFILE_WEIGHT=samples node dist/scripts/bench/profile-summary.js prof inclusive  # on a loaded machine: by sample count
 *
 * A profile is a tree of call frames with sampled self time; this folds it by package (node_modules/<name>) or by
 * rein folder (dist/<room>/<folder>), or sums each function's time including everything below it.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const ownerOf = (url: string, functionName: string): string => {
  const module = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (module) return module[1]!;
  if (url.includes('/dist/')) return `rein ${url.split('/dist/')[1]!.split('/').slice(0, 2).join('/')}`;
  if (url.startsWith('node:')) return `node ${url.slice(5).split('/')[0]}`;
  return url === '' ? functionName || '(native)' : url;
};

const frameOf = (node: ProfileNode): string => {
  const url = node.callFrame.url.replace(/^.*\/(node_modules|dist)\//, '');
  return `${node.callFrame.functionName || '(anonymous)'} ${url}:${node.callFrame.lineNumber + 1}`;
};

type Mode = 'self' | 'functions' | 'inclusive' | 'callees';

/**
 * How a sample weighs: `time`, the gap since the previous sample (V8's own measure), or `samples`, one sampling
 * interval each (the median gap). On a loaded machine the gaps a process spends waiting for a core (at load 15, three
 * quarters of the sampled time sat in gaps over 3 ms) go to whichever frame is sampled next; counting samples instead
 * approximates the CPU each frame used. `PROFILE_WEIGHT=samples` on the command line.
 */
export type Weight = 'time' | 'samples';

const medianOf = (values: readonly number[]): number => {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

/**
 * Self time per owner or per function, or inclusive time per function, in ms, largest first. `callees`: the time spent
 * below the outermost frames whose function name is `focus`, by the frame called directly from it (`(self)` for its
 * own time); the total is then that function's inclusive time.
 */
export const summarize = (profile: CpuProfile, mode: Mode, focus?: string, weight: Weight = 'time'): { totalMs: number; rows: Array<[string, number]> } => {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const selfTime = new Map<number, number>();
  let total = 0;
  const tick = weight === 'samples' ? medianOf(profile.timeDeltas) : 0;
  profile.samples.forEach((id, index) => {
    const delta = weight === 'samples' ? tick : (profile.timeDeltas[index] ?? 0);
    selfTime.set(id, (selfTime.get(id) ?? 0) + delta);
    total += delta;
  });
  const sums = new Map<string, number>();
  if (mode === 'callees') {
    let inside = 0;
    for (const [id, time] of selfTime) {
      // The path from the root down to this sample; the first frame named `focus` on it decides.
      const path: number[] = [];
      for (let current: number | undefined = id; current !== undefined; current = parentOf.get(current)) path.push(current);
      path.reverse();
      const at = path.findIndex((node) => byId.get(node)!.callFrame.functionName === focus);
      if (at < 0) continue;
      inside += time;
      const key = at === path.length - 1 ? '(self)' : frameOf(byId.get(path[at + 1]!)!);
      sums.set(key, (sums.get(key) ?? 0) + time);
    }
    total = inside;
  }
  for (const [id, time] of mode === 'callees' ? [] : selfTime) {
    if (mode === 'functions') {
      const frame = frameOf(byId.get(id)!);
      sums.set(frame, (sums.get(frame) ?? 0) + time);
      continue;
    }
    if (mode === 'self') {
      const node = byId.get(id)!;
      const owner = ownerOf(node.callFrame.url, node.callFrame.functionName);
      sums.set(owner, (sums.get(owner) ?? 0) + time);
      continue;
    }
    const seen = new Set<string>();
    for (let current: number | undefined = id; current !== undefined; current = parentOf.get(current)) {
      const frame = frameOf(byId.get(current)!);
      if (seen.has(frame)) continue;
      seen.add(frame);
      sums.set(frame, (sums.get(frame) ?? 0) + time);
    }
  }
  return { totalMs: total / 1000, rows: [...sums].map(([key, time]): [string, number] => [key, time / 1000]).sort((left, right) => right[1] - left[1]) };
};

export const main = async (directory: string, mode: Mode = 'self', count = 30, focus?: string, weight: Weight = process.env.PROFILE_WEIGHT === 'samples' ? 'samples' : 'time'): Promise<void> => {
  const files = (await readdir(directory)).filter((name) => name.endsWith('.cpuprofile'));
  if (files.length === 0) throw new Error(`no .cpuprofile in ${directory}`);
  for (const file of files) {
    const { totalMs, rows } = summarize(JSON.parse(await readFile(join(directory, file), 'utf8')) as CpuProfile, mode, focus, weight);
    process.stdout.write(`${file}: ${totalMs.toFixed(0)} ms sampled (${mode === 'callees' ? `inside ${focus ?? ''}` : mode}${weight === 'samples' ? ', by sample count' : ''})\n`);
    for (const [key, ms] of rows.slice(0, count)) process.stdout.write(`${ms.toFixed(0).padStart(8)} ms ${((100 * ms) / totalMs).toFixed(1).padStart(5)}%  ${key}\n`);
  }
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [directory = 'prof', mode, extra] = process.argv.slice(2);
  if (mode === 'callees') await main(directory, 'callees', 40, extra);
  else await main(directory, mode === 'inclusive' || mode === 'functions' ? mode : 'self', Number(extra) || undefined);
}
