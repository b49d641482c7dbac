import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { defineTool, readOnlyAnnotations } from '../../src/tools/tool.js';
import { builtinTools } from '../../src/tools/builtin-tools.js';
import { StoreError } from '../../stores/store-errors.js';
import type { AnyToolDefinition } from '../../src/tools/tool.js';

/**
 * A real test runner: `node --test` in a child process in the workspace. Like `bash`, a non-zero exit is a result,
 * not a failure: the exit code travels as the call's `execution`, which is what the verification's status comes from.
 */
export const runTestsTool = defineTool({
  name: 'run_tests',
  description: 'Run the project tests with node --test and return their output.',
  parameters: z.object({}).strict(),
  annotations: readOnlyAnnotations,
  risk: 'execute',
  sideEffect: 'process',
  resumePolicy: 'rerun-after-check',
  execute: (_args, context) =>
    new Promise((resolve) => {
      const started = Date.now();
      execFile(process.execPath, ['--test'], { cwd: context.workspace.root, timeout: 30_000, env: { PATH: process.env.PATH ?? '' } }, (error, stdout, stderr) => {
        const exitCode = error ? (typeof (error as { code?: unknown }).code === 'number' ? ((error as { code: number }).code) : null) : 0;
        const signal = (error as { signal?: string | null } | null)?.signal ?? undefined;
        const execution = { command: 'node --test', exitCode, ...(signal ? { signal } : {}), durationMs: Date.now() - started };
        resolve({ ok: true, output: `exit code ${String(exitCode)}\n${stdout}${stderr}`, execution });
      });
    }),
});

/** A "build" that prints many progress lines and, on a broken file, one error line in the middle. */
export const buildTool = defineTool({
  name: 'build',
  description: 'Build the project and print the compiler log.',
  parameters: z.object({}).strict(),
  annotations: readOnlyAnnotations,
  risk: 'execute',
  sideEffect: 'process',
  resumePolicy: 'rerun-after-check',
  async execute(_args, context) {
    const { readFile } = await import('node:fs/promises');
    const source = await readFile(join(context.workspace.root, 'src', 'stats.js'), 'utf8');
    const lines = Array.from({ length: 400 }, (_, index) => `compiling module ${index + 1} of 400 ... ok`);
    if (source.includes('t - x')) lines.splice(200, 0, 'ERROR src/stats.js:1 sum subtracts each value instead of adding it');
    return { ok: true, output: lines.join('\n') };
  },
});

/** A linter that fails with one error line (not a verification: its name is not a test runner's). */
export const lintTool = defineTool({
  name: 'lint',
  description: 'Lint the project.',
  parameters: z.object({}).strict(),
  annotations: readOnlyAnnotations,
  risk: 'execute',
  sideEffect: 'process',
  resumePolicy: 'rerun-after-check',
  execute: async () => ({ ok: false, code: 'NonZeroExit', message: 'exit code 1\nsrc/stats.js:1:52 error  sum subtracts instead of adding  no-restricted-syntax\n1 problem (1 error, 0 warnings)' }),
});

/** A tool whose runtime crashes under it (the store fails: an infrastructure failure, not a model-visible error). */
export const crashingTool = defineTool({
  name: 'deploy',
  description: 'Deploy the project.',
  parameters: z.object({}).strict(),
  annotations: { ...readOnlyAnnotations, readOnly: false },
  risk: 'execute',
  sideEffect: 'external-write',
  resumePolicy: 'never-rerun',
  execute: async () => {
    throw new StoreError('STORE_IO', 'the deploy log could not be written');
  },
});

/** The built-in tools plus the fixtures above. */
export const fixtureTools = (): AnyToolDefinition[] => [...builtinTools(), runTestsTool, buildTool, lintTool, crashingTool];

/** The buggy file and its failing test. */
export const buggyStats = 'export const sum = (values) => values.reduce((t, x) => t - x, 0);\n';
export const fixedStats = 'export const sum = (values) => values.reduce((t, x) => t + x, 0);\n';

/** Write a tiny node project whose test fails until `sum` adds. */
export const seedStatsProject = async (root: string): Promise<void> => {
  await mkdir(join(root, 'src'), { recursive: true });
  await mkdir(join(root, 'test'), { recursive: true });
  await writeFile(join(root, 'package.json'), '{ "type": "module" }\n');
  await writeFile(join(root, 'src', 'stats.js'), buggyStats);
  await writeFile(
    join(root, 'test', 'stats.test.js'),
    "import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport { sum } from '../src/stats.js';\n\ntest('sum adds', () => {\n  assert.equal(sum([1, 2, 3]), 6);\n});\n",
  );
};
