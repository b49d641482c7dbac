import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { LongPolesFirst } from './support/long-poles-first.js';
import { scaledTimeout } from './support/timeouts.js';

const root = fileURLToPath(new URL('..', import.meta.url));

export default defineConfig({
  root,
  resolve: {
    // The two public doors, from source: `rein/testing` and exactly `rein` (a string key would also catch `rein/…`).
    alias: [
      { find: /^rein\/testing$/, replacement: fileURLToPath(new URL('../src/testing/index.ts', import.meta.url)) },
      { find: /^rein$/, replacement: fileURLToPath(new URL('../src/index.ts', import.meta.url)) },
    ],
  },
  test: {
    include: ['tests/**/*.test.ts'],
    globalSetup: ['tests/support/postgres-global-setup.ts'],
    // Stretched by the machine's load when the run starts (tests/support/timeouts.ts): a guard against hangs that a
    // busy machine does not trip.
    testTimeout: scaledTimeout(60_000),
    hookTimeout: scaledTimeout(60_000),
    pool: 'forks',
    // One worker process runs many files and keeps the modules it loaded (no test mocks a module; tests that change
    // process.env or the directory put them back): re-evaluating zod, xstate and rein's sources for every one of ~300
    // files was two thirds of a unit file's time. Forks, not threads: in-process CLI runs change the directory.
    isolate: false,
    // vitest's default on a 2-core machine is one worker (cores - 1), so a file that computes leaves the other core
    // idle; the main process only collects results. Two workers use both.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // The chain key every store of the run uses (and every CLI a test starts, which inherits the environment): one per
    // user, outside every test's workspace and the user's own configuration folder. Tests of the key itself set their own.
    env: { REIN_CHAIN_KEY_FILE: process.env.REIN_CHAIN_KEY_FILE || join(tmpdir(), `rein-tests-${process.getuid?.() ?? 'user'}`, 'chain.key') },
    // The files that take longest start first (tests/support/long-poles-first.ts), so no long file runs alone at the end.
    sequence: { sequencer: LongPolesFirst },
    typecheck: { enabled: false },
  },
});
