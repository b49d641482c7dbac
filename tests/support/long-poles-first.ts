import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that decide `npm test`'s wall time on two workers, longest first (per-file durations of a full run,
 * main 14b0b52: memory-flat 102 s, pack-install 82 s, crash 71 s, postgres-cli 55 s, rewind-crash 43 s, …; the
 * model-checking files' time is collection, which vitest's own duration does not count). Their cost is the thing they
 * test (a 5,000-step session, npm pack + install + two compilers, kill loops, bubblewrap per case, whole state graphs).
 */
export const longPoles = [
  'tests/host/memory-flat.test.ts',
  'tests/e2e/pack-install.test.ts',
  'tests/e2e/crash.test.ts',
  'tests/e2e/postgres-cli.test.ts',
  'tests/e2e/rewind-crash.test.ts',
  'tests/machines/session.machine.paths.test.ts',
  'tests/tools/path-escape.test.ts',
  'tests/e2e/memory-cli.test.ts',
  'tests/acp/acp-agent.test.ts',
  'tests/e2e/cli.test.ts',
  'tests/e2e/delegation-budgets.test.ts',
  'tests/e2e/worker-crash.test.ts',
  'tests/e2e/orphans.test.ts',
  'tests/machines/delegation.machine.paths.test.ts',
  'tests/tools/argument-normalisation.prop.test.ts',
  'tests/ui/viewer.test.ts',
  'tests/machines/turn.machine.paths.test.ts',
];

/**
 * vitest's order, with the long poles first. On a fresh clone vitest has no durations and runs larger files first;
 * the long poles are short files, so they started last and ran alone on one worker at the end of the run while the
 * other idled. Started first, they overlap the many short files. Everything else keeps vitest's order (the durations
 * of the previous run when it has them, failed files first).
 */
export class LongPolesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification): number => {
      const at = longPoles.indexOf(relative(spec.project.config.root, spec.moduleId).split('\\').join('/'));
      return at === -1 ? longPoles.length : at;
    };
    return sorted.map((spec, index) => ({ spec, index, rank: rank(spec) })).sort((a, b) => a.rank - b.rank || a.index - b.index).map(({ spec }) => spec);
  }
}
