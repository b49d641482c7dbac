import type { Command } from 'commander';
import { createScriptedProvider, loadScript } from '../../providers/scripted-provider.js';
import { createRein } from '../../rein.js';
import { ReinError } from '../../host/host-errors.js';
import { openStore, protectedPathsOf, workspaceOf, type CommonOptions } from '../cli-context.js';
import { exitCodeOf, runToQuiet } from '../session-runner.js';
import { budgetsOf, type BudgetOptions } from '../budget-options.js';
import { addPermissionOptions, permissionsOf, sandboxOf, type PermissionOptions } from '../permission-options.js';
import { PermissionPolicy } from '../../policy/permission-policy.js';
import { builtinTools } from '../../tools/builtin-tools.js';
import type { ApprovalAnswering } from '../approval-prompt.js';

interface RunOptions extends CommonOptions, BudgetOptions, PermissionOptions {
  script?: string;
}

/** How the CLI answers approvals for these flags: in advance from the rules, and on a TTY by asking. */
export const answeringOf = (options: PermissionOptions): ApprovalAnswering => ({
  policy: new PermissionPolicy(permissionsOf(options)),
  tools: builtinTools(),
  interactive: Boolean(process.stdin.isTTY),
});

/** `rein run [task]`: start a session in the workspace and drive it until it ends or needs a person. */
export const registerRun = (program: Command, setExit: (code: number) => void): void => {
  const command = program
    .command('run')
    .description('run an agent session on a task in the workspace')
    .argument('[task]', 'what the agent should do', '')
    .option('--script <file>', 'scripted model: play this JSON script (the embedded default provider)')
    .option('--yes', 'answer every approval request with yes (deny rules and the workspace boundary still hold)');
  addPermissionOptions(addBudgetOptions(addCommonOptions(command)))
    .action(async (task: string, options: RunOptions) => {
      if (!options.script) throw new ReinError('USAGE', 'rein run needs --script <file> (the scripted provider is the embedded default)');
      const workspace = await workspaceOf(options);
      const script = await loadScript(options.script);
      const store = await openStore(options, workspace, 'write');
      try {
        const rein = await createRein({ store, workspace, protectedPaths: protectedPathsOf(options, workspace), provider: createScriptedProvider(script, { source: options.script }), budgets: budgetsOf(options), permissions: permissionsOf(options), sandbox: sandboxOf(options) });
        const session = await rein.createSession({ task: task || 'Follow the script.' });
        const result = await runToQuiet(session, { json: Boolean(options.json), begin: () => session.send(task || 'Follow the script.'), approvals: answeringOf(options) });
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
