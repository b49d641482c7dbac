import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/*
 * `npm run test:quick`, for the edit loop: the pure layers' unit tests, every property test and every statechart's
 * model-checking (graph) test — no end-to-end runs, no CLI processes, no browser, no PostgreSQL cluster. `npm test`
 * runs these and everything else. (Spread, not mergeConfig: merging would add the base config's include to these.)
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'tests/machines/**/*.test.ts',
      'tests/typestate/**/*.test.ts',
      'tests/projections/**/*.test.ts',
      'tests/trace/**/*.test.ts',
      'tests/util/**/*.test.ts',
      'tests/architecture/**/*.test.ts',
      'tests/docs/reference.test.ts',
      'tests/**/*.prop.test.ts',
      'tests/**/*.paths.test.ts',
    ],
    // argument-normalisation.prop runs whole sessions (LevelDB, a loopback provider, 50-300 KB arguments): an end-to-end
    // test named .prop, a fifth of the quick set's time. `npm test` runs it.
    exclude: ['tests/e2e/**', 'tests/**/postgres-*.test.ts', 'tests/tools/argument-normalisation.prop.test.ts', '**/node_modules/**'],
    globalSetup: [],
  },
});
