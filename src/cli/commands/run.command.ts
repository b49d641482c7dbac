import type { Command } from 'commander';
import { createScriptedProvider, loadScript } from '../../providers/scripted-provider.js';
import { createRein } from '../../rein.js';
import { ReinError } from '../../host/host-errors.js';
import { openStore, protectedPathsOf, workspaceOf, type CommonOptions } from '../cli-context.js';
import { exitCodeOf, runToQuiet } from '../session-runner.js';
import { budgetsOf, type BudgetOptions } from '../budget-options.js';
import { connectInspector, type InspectorConnection } from '../../inspect/stately-inspector.js';

interface RunOptions extends CommonOptions, BudgetOptions {
  script?: string;
  inspect?: string | boolean;
}

/** `rein run [task]`: start a session in the workspace and drive it until it ends or needs a person. */
export const registerRun = (program: Command, setExit: (code: number) => void): void => {
  const command = program
    .command('run')
    .description('run an agent session on a task in the workspace')
    .argument('[task]', 'what the agent should do', '')
    .option('--script <file>', 'scripted model: play this JSON script (the embedded default provider)')
    .option('--inspect [ws-url]', 'stream the live actors to a Stately inspector on this machine (default ws://127.0.0.1:8080)');
  addBudgetOptions(addCommonOptions(command))
    .action(async (task: string, options: RunOptions) => {
      if (!options.script) throw new ReinError('USAGE', 'rein run needs --script <file> (the scripted provider is the embedded default)');
      const workspace = await workspaceOf(options);
      const script = await loadScript(options.script);
      const inspector: InspectorConnection | undefined = options.inspect === undefined || options.inspect === false ? undefined : await connectInspector(options.inspect === true ? 'ws://127.0.0.1:8080' : options.inspect);
      const store = await openStore(options, workspace, 'write');
      try {
        const rein = await createRein({ store, workspace, protectedPaths: protectedPathsOf(options, workspace), provider: createScriptedProvider(script, { source: options.script }), budgets: budgetsOf(options), ...(inspector ? { inspect: inspector.inspect } : {}) });
        const session = await rein.createSession({ task: task || 'Follow the script.' });
        const result = await runToQuiet(session, { json: Boolean(options.json), begin: () => session.send(task || 'Follow the script.') });
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
