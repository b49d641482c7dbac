import { resolve } from 'node:path';
import { ReinError } from '../../host/host-errors.js';
import { readHostTextIfPresent } from '../../util/read-regular-file.js';
import { outputFromJsonSchema } from '../../session/output-schema.js';
import { PluginError } from '../../plugins/plugin-errors.js';
import { hostRunFiles } from '../host-run-files.js';
import { createRein, type Rein } from '../../rein.js';
import { ExitCode } from '../exit-codes.js';
import { openStore, printJson, protectedPathsOf, storeFlags, workspaceOf, broadWorkspaceWarning, workspaceNote } from '../cli-context.js';
import { printText } from '../print-text.js';
import { exitCodeOf, noteInterruptingSignal, printSandbox, runToQuiet, stopPluginsAfter, terminationSignals } from '../session-runner.js';
import { configuredOptionsOf, loadWorkspaceConfig } from '../../providers/provider-settings.js';
import { budgetsOf } from '../budget-options.js';
import { buildProvider, providerSettingsFor } from '../provider-options.js';
import { connectInspector, type InspectorConnection } from '../../inspect/stately-inspector.js';
import { permissionsOf, sandboxOf } from '../permission-options.js';
import { PermissionPolicy } from '../../policy/permission-policy.js';
import { builtinTools } from '../../tools/builtin-tools.js';
import type { ApprovalAnswering } from '../approval-prompt.js';
import type { PermissionOptions } from '../command-options.js';
import type { RunOptions } from './run.flags.js';
import { cliTelemetryFor } from '../telemetry-options.js';
import { cliCapabilitiesFor, visibleLimitOf } from '../capability-options.js';
import { pluginProviderFor, pluginProviderNames, pluginsFor, projectPluginFolders, refuseLostHooks } from '../plugin-options.js';

/** How the CLI answers approvals for these flags: in advance from the rules, and on a TTY by asking. */
export const answeringOf = (options: PermissionOptions, workspace?: string): ApprovalAnswering => ({
  policy: new PermissionPolicy(permissionsOf(options)),
  tools: builtinTools(),
  interactive: Boolean(process.stdin.isTTY),
  ...(workspace === undefined ? {} : { workspace }),
});

/** The body of `rein run` (see `registerRun`). */
export const runCommand = async (task: string, options: RunOptions, setExit: (code: number) => void): Promise<void> => {
  // A bad flag value is a usage error before anything else is looked at (a provider that is not configured, plugins).
  const flagBudgets = budgetsOf(options);
  const permissions = permissionsOf(options);
  sandboxOf(options);
  visibleLimitOf(options);
  const workspace = await workspaceOf(options);
  const note = workspaceNote(options, workspace);
  if (note) process.stderr.write(`rein: ${note}\n`);
  const broad = broadWorkspaceWarning(workspace);
  // Said to a person at a terminal; scripts that point HOME at a scratch workspace (tests, CI) are not told on every run.
  if (broad && process.stderr.isTTY) process.stderr.write(`rein: warning: ${broad}\n`);
  const outputSchema = options.outputSchema === undefined ? undefined : await readOutputSchema(options.outputSchema);
  if (options.detach && outputSchema) throw new ReinError('USAGE', '--output-schema applies to a session this process runs: a queued (--detach) session has no output schema');
  if (options.detach && options.memory === false) throw new ReinError('USAGE', '--no-memory applies to a session this process runs: a worker runs a queued (--detach) session with its own settings');
  // So do --otlp and --inspect: a queued session's spans and actors live in the worker's process, not this one.
  if (options.detach && (options.otlp !== undefined || (options.inspect !== undefined && options.inspect !== false))) throw new ReinError('USAGE', `${options.otlp !== undefined ? '--otlp' : '--inspect'} applies to a session this process runs: a worker runs a queued (--detach) session`);
  // A provider a plugin contributes (`--provider <plugin>__<id>`) is built from the plugins, not from provider settings.
  const fromPlugin = options.provider?.includes('__') ? options.provider : undefined;
  const settings = fromPlugin ? undefined : await providerSettingsFor(options, workspace).catch(async (error: unknown) => {
    // An unknown name may be a plugin's provider without its prefix: the message names the ones loaded here.
    if (!(error instanceof ReinError && error.code === 'USAGE' && error.message.startsWith('unknown provider'))) throw error;
    const names = pluginProviderNames((await pluginsFor(options, workspace)).plugins);
    throw new ReinError('USAGE', `${error.message}${names.length > 0 ? `, or a plugin's provider: ${names.join(', ')}` : ' (or <plugin>__<id> for a provider a plugin contributes; none here does)'}`);
  });
  // A model acts on the task in the user's name: it is never made up. Only a script (or a recorded session, which
  // brings its own task) runs without one.
  if (!task?.trim() && settings?.provider !== 'scripted' && settings?.provider !== 'recorded') throw new ReinError('USAGE', 'rein run needs a task: rein run "<what to do>" (only --script or --provider recorded runs without one)');
  const inspector: InspectorConnection | undefined = options.inspect === undefined || options.inspect === false ? undefined : await connectInspector(options.inspect === true ? 'ws://127.0.0.1:8080' : options.inspect);
  const telemetry = options.detach ? undefined : await cliTelemetryFor(options);
  const loaded = await pluginsFor(options, workspace, { trustProject: Boolean(options.yes), interactive: Boolean(process.stdin.isTTY), launch: true });
  // Hooks that changed since they were trusted refuse the run: that error says it all, without the warning before it.
  refuseLostHooks(loaded);
  for (const warning of loaded.warnings) printText(`rein: ${warning}\n`, process.stderr);
  // A queued session's MCP servers start in the worker, under the worker's user's trust: `--yes` or the prompt here
  // records that trust for the submitting user, as for plugins; nothing starts in this process.
  if (options.detach && (options.yes || process.stdin.isTTY)) await cliCapabilitiesFor(workspace, options, { interactive: Boolean(process.stdin.isTTY), warn: () => undefined });
  const { mcpServers, capabilities } = options.detach ? { mcpServers: {}, capabilities: {} } : await cliCapabilitiesFor(workspace, options);
  const store = await openStore(options, workspace, 'write');
  let rein: Rein | undefined;
  try {
    const { provider, replaying, fallbacks } = fromPlugin ? { provider: await pluginProviderFor(fromPlugin, options, workspace, loaded.plugins), replaying: undefined, fallbacks: undefined } : await buildProvider(settings!, store);
    const config = await loadWorkspaceConfig(workspace);
    const budgets = { ...config?.budgets, ...replaying?.budgets, ...flagBudgets };
    rein = await createRein({ store, workspace, ...(config?.prices ? { prices: config.prices } : {}), ...(options.memory === false ? { memory: false as const } : {}), protectedPaths: [...(await protectedPathsOf(options, workspace)), ...projectPluginFolders(loaded.plugins, workspace), ...(await hostRunFiles(workspace, loaded.hooks, mcpServers))], provider, ...(fallbacks ? { fallbacks } : {}), budgets, ...(settings ? { modelOptions: settings.modelOptions } : {}), ...(settings?.applyPatch === undefined ? {} : { applyPatch: settings.applyPatch }), permissions, sandbox: sandboxOf(options, config?.sandbox), plugins: loaded.plugins, ...(loaded.hooks ? { hooks: loaded.hooks } : {}), mcpServers, capabilities, ...configuredOptionsOf(config), ...(inspector ? { inspect: inspector.inspect } : {}), ...telemetry?.reinOptions });
    telemetry?.attach(rein);
    const text = task || replaying?.task || 'Follow the script.';
    if (options.detach) {
      const sessionId = await rein.submit({ task: text, budgets, confirmInDoubt: Boolean(options.yes) });
      if (options.json) printJson({ sessionId, queued: true });
      else process.stdout.write(`${sessionId}\n`);
      return;
    }
    // Ctrl-C while the session is being created (its `session.created` may already be durable, and start-up hooks
    // may run) is kept for the moment the session exists: it is then interrupted before its task is sent, so
    // `session.interrupted` is recorded and the summary prints its id and `rein resume`.
    let interruptedEarly = false;
    const onEarlyInterrupt = () => {
      if (interruptedEarly) process.exit(ExitCode.interrupted);
      interruptedEarly = true;
      process.stderr.write('\ninterrupting once the session exists… (press Ctrl-C again to force)\n');
    };
    process.on('SIGINT', onEarlyInterrupt);
    // SIGTERM / SIGHUP in the same moment: held the same way, then the session is interrupted with the signal's code.
    const onEarlySignal = (signal: keyof typeof terminationSignals) => {
      if (interruptedEarly) process.exit(terminationSignals[signal]);
      interruptedEarly = true;
      noteInterruptingSignal(signal);
    };
    const onEarlyTerm = () => onEarlySignal('SIGTERM');
    const onEarlyHup = () => onEarlySignal('SIGHUP');
    process.on('SIGTERM', onEarlyTerm);
    process.on('SIGHUP', onEarlyHup);
    let session: Awaited<ReturnType<Rein['createSession']>>;
    try {
      session = await rein.createSession({ task: text, ...(outputSchema ? { outputSchema } : {}) });
      if (!options.json) await printSandbox(store, session.id);
    } finally {
      process.off('SIGINT', onEarlyInterrupt);
      process.off('SIGTERM', onEarlyTerm);
      process.off('SIGHUP', onEarlyHup);
    }
    // A task a userPromptSubmit hook blocks never reaches the model: the session ends `cancelled` with the hook's
    // reason (recorded, shown by `rein show`), its summary names it like any run's, and the exit is the error's.
    let blocked: PluginError | undefined;
    const begin = async () => {
      try {
        await session.send(text);
      } catch (error) {
        if (!(error instanceof PluginError && error.code === 'PROMPT_BLOCKED')) throw error;
        blocked = error;
        await session.cancel(`the task was not sent: ${error.message}`);
      }
    };
    try {
      const result = await runToQuiet(session, { json: Boolean(options.json), begin, approvals: answeringOf(options, workspace), interruptAtStart: interruptedEarly, where: storeFlags(options), ...(config?.prices ? { prices: config.prices } : {}) });
      await stopPluginsAfter(rein, session.id, { json: Boolean(options.json), printedThrough: session.snapshot().head, reason: 'rein run finished' });
      if (blocked) throw blocked;
      setExit(exitCodeOf(result));
    } finally {
      await session.release();
    }
  } finally {
    // Also when the run failed: the plugins stop (a second call does nothing).
    await rein?.stopPlugins('rein run finished');
    await telemetry?.finish();
    await store.close();
    await inspector?.flush();
    await inspector?.close();
  }
};

/** Read `--output-schema <file>`: a regular JSON file holding a JSON Schema object, checked before anything runs. */
const readOutputSchema = async (file: string): Promise<Record<string, unknown>> => {
  const path = resolve(file);
  const text = await readHostTextIfPresent(path, `--output-schema ${file}`, (message) => new ReinError('OUTPUT_SCHEMA_INVALID', message));
  if (text === undefined) throw new ReinError('OUTPUT_SCHEMA_INVALID', `--output-schema ${file}: no such file`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ReinError('OUTPUT_SCHEMA_INVALID', `--output-schema ${file} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  // Checked now (zod must be able to read it), so a bad schema costs no session.
  outputFromJsonSchema(value, `--output-schema ${file}`);
  return value as Record<string, unknown>;
};
