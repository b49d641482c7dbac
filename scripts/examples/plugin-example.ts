import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as z from 'zod';
import { createMemoryEventStore, createRein, createScriptedProvider, definePlugin, parseScript } from '../../src/index.js';

const run = promisify(execFile);

/**
 * A complete plugin: a `run_tests` tool (it runs `node --test` in the workspace and reports the exit code), a
 * `preToolUse` policy hook that keeps `git push` out of the agent's reach, an `output` guardrail that withholds
 * anything that looks like an API key, and a `detect` command (`rein test-runner detect`).
 */
export const testRunner = definePlugin({
  manifest: {
    id: 'test-runner',
    name: 'Test runner',
    version: '1.0.0',
    description: 'runs the project tests; keeps git push out of reach',
    contributes: { tools: ['run_tests'], hooks: ['preToolUse'], guardrails: ['output'], commands: ['detect'] },
    requires: { hostVersion: '^0.1.0' },
    permissions: ['execute'],
  },
  config: z.object({ args: z.array(z.string()).default(['--test']) }),
  setup: (context) => {
    const { args } = context.config as { args: string[] };
    return {
      tools: [
        {
          name: 'run_tests',
          description: 'Run the project tests (node --test) and report the exit code and the output tail.',
          parameters: z.object({}).strict(),
          risk: 'execute',
          execute: async (_input, call) => {
            const outcome = await run(process.execPath, args, { cwd: call.workspace, signal: call.signal }).then(
              ({ stdout }) => ({ code: 0, output: stdout }),
              (error: { code?: number; stdout?: string }) => ({ code: typeof error.code === 'number' ? error.code : 1, output: error.stdout ?? '' }),
            );
            return `exit ${outcome.code}\n${outcome.output.slice(-2_000)}`;
          },
        },
      ],
      hooks: [
        {
          id: 'no-push',
          point: 'preToolUse',
          matcher: 'bash',
          run: (input) => (String(input.tool.input.command ?? '').includes('git push') ? { decision: 'deny', reason: 'pushing is for people, not agents' } : undefined),
        },
      ],
      guardrails: [{ id: 'no-keys', stage: 'output', check: (input) => ({ verdict: /sk-[A-Za-z0-9]{20,}/.test(input.result.observation) ? 'block' : 'pass', reason: 'the result looks like it holds an API key' }) }],
      commands: [{ name: 'detect', description: 'say which test command this plugin runs', run: (_args, { write }) => void write(`node ${args.join(' ')}\n`) }],
    };
  },
});

const main = async (): Promise<void> => {
  const workspace = await mkdtemp(join(tmpdir(), 'rein-plugin-example-'));
  await writeFile(join(workspace, 'sum.test.mjs'), "import test from 'node:test';\nimport assert from 'node:assert';\ntest('sum', () => assert.equal(1 + 1, 2));\n");
  const store = createMemoryEventStore();
  const script = {
    turns: [
      { text: 'Running the tests, then pushing.', toolCalls: [{ name: 'test-runner__run_tests', arguments: {} }, { name: 'bash', arguments: { command: 'git push origin main' } }] },
      { text: 'The tests pass; pushing was refused.' },
    ],
  };
  const rein = await createRein({ store, workspace, provider: createScriptedProvider(parseScript(script)), plugins: [testRunner], permissions: { mode: 'default', approveAll: true }, sandbox: { loginShell: false } });
  const session = await rein.startSession({ task: 'run the tests and push' });
  const result = await session.whenQuiet();
  for (const record of await store.read(session.id)) {
    if (record.type === 'tool.settled') {
      const data = record.data as { name: string; status: string; observation: string };
      console.log(`${data.name}: ${data.status}: ${data.observation.split('\n')[0]}`);
    }
  }
  console.log(rein.plugins.list().map((plugin) => `${plugin.id} ${plugin.state}`).join(', '));
  await rein.close();
  console.log(result.status);
};

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) await main();
