import { readFile, readdir } from 'node:fs/promises';
import { join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * The import structure, checked (issue 31, CONVENTIONS: no import cycles; `models ← machines`, `models ← stores`,
 * `src` composes). Every import counts — type-only, re-exports and dynamic `import()` included — since each one
 * couples the two files. `npm run check:imports` prints the findings; tests/architecture/imports.test.ts runs it.
 */

/** The source folders and what each may import (besides itself and packages). */
export const layers: Record<string, readonly string[]> = {
  models: [],
  machines: ['models'],
  stores: ['models'],
  src: ['models', 'machines', 'stores'],
};

/**
 * The import cycles that existed when the check was introduced, each as its files sorted and joined by ` ↔ `. The
 * check fails on any other cycle, and on an entry here that is no longer a cycle (delete it: the list only shrinks).
 * Empty since issue 31: every cycle is broken, so any new one fails.
 */
export const knownCycles: readonly string[] = [];

const importPatterns = [
  /(?:^|[;\s])(?:import|export)\s+(?:type\s+)?[^'";]*?\sfrom\s*['"](\.{1,2}\/[^'"]+)['"]/g,
  /(?:^|[;\s])import\s*['"](\.{1,2}\/[^'"]+)['"]/g,
  /import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g,
];

/** The source without comments (block comments, and whole-line `//` comments). */
const withoutComments = (source: string): string => source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');

const sourceFiles = async (root: string, folder: string): Promise<string[]> => {
  const entries = await readdir(join(root, folder), { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split('\\').join('/'))
    .sort();
};

/** Every source file of the layers and the files it imports (relative imports only, `.js` mapped to the `.ts` file). */
export const importGraph = async (root: string): Promise<Map<string, Set<string>>> => {
  const files = (await Promise.all(Object.keys(layers).map((folder) => sourceFiles(root, folder)))).flat();
  const known = new Set(files);
  const graph = new Map<string, Set<string>>();
  for (const file of files) {
    const source = withoutComments(await readFile(join(root, file), 'utf8'));
    const targets = new Set<string>();
    for (const pattern of importPatterns) {
      for (const match of source.matchAll(pattern)) {
        const base = posix.normalize(posix.join(posix.dirname(file), match[1]!)).replace(/\.js$/, '');
        const target = [`${base}.ts`, `${base}.tsx`, `${base}/index.ts`].find((candidate) => known.has(candidate));
        if (target && target !== file) targets.add(target);
      }
    }
    graph.set(file, targets);
  }
  return graph;
};

/** The strongly connected components with more than one file (Tarjan), each sorted. */
export const cyclesOf = (graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] => {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return components.sort((left, right) => left[0]!.localeCompare(right[0]!));
};

/** Imports that cross the layering the wrong way: `from → to`. */
export const layerViolations = (graph: ReadonlyMap<string, ReadonlySet<string>>): string[] => {
  const layerOf = (file: string): string => file.split('/')[0]!;
  const violations: string[] = [];
  for (const [from, targets] of graph) {
    for (const to of targets) {
      const source = layerOf(from);
      const target = layerOf(to);
      if (source !== target && !layers[source]!.includes(target)) violations.push(`${from} → ${to} (${source} may import ${layers[source]!.join(', ') || 'only itself'})`);
    }
  }
  return violations.sort();
};

export interface ImportCheck {
  files: number;
  imports: number;
  /** Cycles not in `knownCycles`. */
  newCycles: string[];
  /** `knownCycles` entries that are no longer cycles (remove them). */
  brokenCycles: string[];
  /** Every cycle found, known or new. */
  cycles: string[];
  layerViolations: string[];
}

/** Run every check over the source folders under `root`. */
export const checkImports = async (root: string): Promise<ImportCheck> => {
  const graph = await importGraph(root);
  const cycles = cyclesOf(graph).map((component) => component.join(' ↔ '));
  // A known cycle a larger one now swallows is new (it grew); only exact matches are tolerated.
  return {
    files: graph.size,
    imports: [...graph.values()].reduce((sum, targets) => sum + targets.size, 0),
    newCycles: cycles.filter((cycle) => !knownCycles.includes(cycle)),
    brokenCycles: knownCycles.filter((cycle) => !cycles.includes(cycle)),
    cycles,
    layerViolations: layerViolations(graph),
  };
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await checkImports(process.cwd());
  process.stdout.write(`${result.files} files, ${result.imports} imports, ${result.cycles.length} cycles (${knownCycles.length} known)\n`);
  for (const cycle of result.newCycles) process.stdout.write(`new import cycle: ${cycle}\n`);
  for (const cycle of result.brokenCycles) process.stdout.write(`no longer a cycle (remove it from knownCycles): ${cycle}\n`);
  for (const violation of result.layerViolations) process.stdout.write(`layer violation: ${violation}\n`);
  process.exitCode = result.newCycles.length + result.brokenCycles.length + result.layerViolations.length > 0 ? 1 : 0;
}
