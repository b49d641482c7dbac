import type { Command } from 'commander';
import { createRein } from '../../rein.js';
import { openStore, protectedPathsOf, workspaceOf, type CommonOptions } from '../cli-context.js';
import { exitCodeOf, runToQuiet } from '../session-runner.js';
import { budgetsOf, type BudgetOptions } from '../budget-options.js';
import { addProviderOptions, buildProvider, providerSettingsFor, type ProviderFlags } from '../provider-options.js';

interface RunOptions extends CommonOptions, BudgetOptions, ProviderFlags {}

/**
 * `rein run [task]`: start a session in the workspace with the configured provider and drive it until it ends or
 * needs a person. With `--provider recorded --from <id>` the task and budgets default to the replayed session's.
 */
export const registerRun = (program: Command, setExit: (code: number) => void): void => {
  const command = program
    .command('run')
    .description('run an agent session on a task in the workspace')
    .argument('[task]', 'what the agent should do', '');
  addBudgetOptions(addCommonOptions(addProviderOptions(command, 'scripted provider: play this JSON script (selects --provider scripted)')))
    .action(async (task: string, options: RunOptions) => {
      const workspace = await workspaceOf(options);
      const settings = await providerSettingsFor(options, workspace);
      const store = await openStore(options, workspace, 'write');
      try {
        const { provider, replaying } = await buildProvider(settings, store);
        const budgets = { ...replaying?.budgets, ...budgetsOf(options) };
        const rein = await createRein({ store, workspace, protectedPaths: protectedPathsOf(options, workspace), provider, budgets, modelOptions: settings.modelOptions });
        const text = task || replaying?.task || 'Follow the script.';
        const session = await rein.createSession({ task: text });
        const result = await runToQuiet(session, { json: Boolean(options.json), begin: () => session.send(text) });
        setExit(exitCodeOf(result));
      } finally {
        await store.close();
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
