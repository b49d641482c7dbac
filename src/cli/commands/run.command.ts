import type { Command } from 'commander';
import { createRein } from '../../rein.js';
import { openStore, protectedPathsOf, workspaceOf, type CommonOptions } from '../cli-context.js';
import { exitCodeOf, runToQuiet } from '../session-runner.js';
import { budgetsOf, type BudgetOptions } from '../budget-options.js';
import { addProviderOptions, buildProvider, providerSettingsFor, type ProviderFlags } from '../provider-options.js';
import { connectInspector, type InspectorConnection } from '../../inspect/stately-inspector.js';

interface RunOptions extends CommonOptions, BudgetOptions, ProviderFlags {
  inspect?: string | boolean;
}

/**
 * `rein run [task]`: start a session in the workspace with the configured provider and drive it until it ends or
 * needs a person. With `--provider recorded --from <id>` the task and budgets default to the replayed session's.
 */
export const registerRun = (program: Command, setExit: (code: number) => void): void => {
  const command = program
    .command('run')
    .description('run an agent session on a task in the workspace')
    .argument('[task]', 'what the agent should do', '')
    .option('--inspect [ws-url]', 'stream the live actors to a Stately inspector on this machine (default ws://127.0.0.1:8080)');
  addBudgetOptions(addCommonOptions(addProviderOptions(command, 'scripted provider: play this JSON script (selects --provider scripted)')))
    .action(async (task: string, options: RunOptions) => {
      const workspace = await workspaceOf(options);
      const settings = await providerSettingsFor(options, workspace);
      const inspector: InspectorConnection | undefined = options.inspect === undefined || options.inspect === false ? undefined : await connectInspector(options.inspect === true ? 'ws://127.0.0.1:8080' : options.inspect);
      const store = await openStore(options, workspace, 'write');
      try {
        const { provider, replaying } = await buildProvider(settings, store);
        const budgets = { ...replaying?.budgets, ...budgetsOf(options) };
        const rein = await createRein({ store, workspace, protectedPaths: protectedPathsOf(options, workspace), provider, budgets, modelOptions: settings.modelOptions, ...(inspector ? { inspect: inspector.inspect } : {}) });
        const text = task || replaying?.task || 'Follow the script.';
        const session = await rein.createSession({ task: text });
        const result = await runToQuiet(session, { json: Boolean(options.json), begin: () => session.send(text) });
        setExit(exitCodeOf(result));
      } finally {
        await store.close();
        await inspector?.flush();
        await inspector?.close();
      }
    });
};

/** Options shared by commands that open a workspace and a store. */
export const addCommonOptions = (command: Command): Command =>
  command
    .option('--workspace <dir>', 'the workspace directory (default: the current directory)')
    .option('--store <dir>', 'the event store directory (default: <workspace>/.rein)')
    .option('--json', 'print one JSON record per line')
    .option('--relaxed', 'relaxed durability: group-commit fsyncs instead of one per step');

/** Budget flags of `rein run`. */
export const addBudgetOptions = (command: Command): Command =>
  command
    .option('--max-turns <n>', 'budget: model turns')
    .option('--max-tool-calls <n>', 'budget: tool calls')
    .option('--max-tokens <n>', 'budget: tokens')
    .option('--max-wall-time <ms>', 'budget: wall time in milliseconds');
