import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkImports, cyclesOf, layerViolations, type ImportCheck } from '../../scripts/check/import-graph.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('the import structure (scripts/check/import-graph.ts)', () => {
  let result: ImportCheck;
  beforeAll(async () => {
    result = await checkImports(root);
  });

  it('reads every source file of models, machines, stores and src', () => {
    expect(result.files).toBeGreaterThan(300);
    expect(result.imports).toBeGreaterThan(1000);
  });

  it('has no import cycle but the known ones, and every known one is still there (the list only shrinks)', () => {
    expect(result.newCycles).toEqual([]);
    expect(result.brokenCycles).toEqual([]);
  });

  it('keeps the layers: models imports nothing of ours, machines and stores only models, src composes', () => {
    expect(result.layerViolations).toEqual([]);
  });

  it('finds a cycle and a layer violation when there is one', () => {
    const graph = new Map([
      ['models/a.ts', new Set(['models/b.ts'])],
      ['models/b.ts', new Set(['models/c.ts'])],
      ['models/c.ts', new Set(['models/a.ts', 'stores/s.ts'])],
      ['stores/s.ts', new Set(['machines/m.ts'])],
      ['machines/m.ts', new Set(['models/a.ts'])],
    ]);
    expect(cyclesOf(graph)).toEqual([['machines/m.ts', 'models/a.ts', 'models/b.ts', 'models/c.ts', 'stores/s.ts']]);
    expect(layerViolations(graph).map((line) => line.split(' (')[0])).toEqual(['models/c.ts → stores/s.ts', 'stores/s.ts → machines/m.ts']);
  });
});
