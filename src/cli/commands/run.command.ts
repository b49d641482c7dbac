import type { Command } from 'commander';
import { createRein } from '../../rein.js';
import { openStore, protectedPathsOf, workspaceOf, type CommonOptions } from '../cli-context.js';
import { exitCodeOf, runToQuiet } from '../session-runner.js';
import { budgetsOf, type BudgetOptions } from '../budget-options.js';
import { addProviderOptions, buildProvider, providerSettingsFor, type ProviderFlags } from '../provider-options.js';
import { connectInspector, type InspectorConnection } from '../../inspect/stately-inspector.js';
import { addPermissionOptions, permissionsOf, sandboxOf, type PermissionOptions } from '../permission-options.js';
import { PermissionPolicy } from '../../policy/permission-policy.js';
import { builtinTools } from '../../tools/builtin-tools.js';
import type { ApprovalAnswering } from '../approval-prompt.js';

interface RunOptions extends CommonOptions, BudgetOptions, ProviderFlags, PermissionOptions {
  inspect?: string | boolean;
}

/** How the CLI answers approvals for these flags: in advance from the rules, and on a TTY by asking. */
export const answeringOf = (options: PermissionOptions): ApprovalAnswering => ({
  policy: new PermissionPolicy(permissionsOf(options)),
  tools: builtinTools(),
  interactive: Boolean(process.stdin.isTTY),
});

/**
 * `rein run [task]`: start a session in the workspace with the configured provider and drive it until it ends or
 * needs a person. With `--provider recorded --from <id>` the task and budgets default to the replayed session's.
 */
export const registerRun = (program: Command, setExit: (code: number) => void): void => {
  const command = program
    .command('run')
    .description('run an agent session on a task in the workspace')
    .argument('[task]', 'what the agent should do', '')
    .option('--inspect [ws-url]', 'stream the live actors to a Stately inspector on this machine (default ws://127.0.0.1:8080)')
    .option('--yes', 'answer every approval request with yes (deny rules and the workspace boundary still hold)');
  addPermissionOptions(addBudgetOptions(addCommonOptions(addProviderOptions(command, 'scripted provider: play this JSON script (selects --provider scripted)'))))
    .action(async (task: string, options: RunOptions) => {
      const workspace = await workspaceOf(options);
      const settings = await providerSettingsFor(options, workspace);
      const inspector: InspectorConnection | undefined = options.inspect === undefined || options.inspect === false ? undefined : await connectInspector(options.inspect === true ? 'ws://127.0.0.1:8080' : options.inspect);
      const store = await openStore(options, workspace, 'write');
      try {
        const { provider, replaying, fallbacks } = await buildProvider(settings, store);
        const budgets = { ...replaying?.budgets, ...budgetsOf(options) };
        const rein = await createRein({ store, workspace, protectedPaths: protectedPathsOf(options, workspace), provider, fallbacks, budgets, modelOptions: settings.modelOptions, permissions: permissionsOf(options), sandbox: sandboxOf(options), ...(inspector ? { inspect: inspector.inspect } : {}) });
        const text = task || replaying?.task || 'Follow the script.';
        const session = await rein.createSession({ task: text });
        const result = await runToQuiet(session, { json: Boolean(options.json), begin: () => session.send(text), approvals: answeringOf(options) });
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
