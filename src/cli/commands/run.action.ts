import { createRein } from '../../rein.js';
import { openStore, printJson, protectedPathsOf, workspaceOf } from '../cli-context.js';
import { exitCodeOf, runToQuiet } from '../session-runner.js';
import { budgetsOf } from '../budget-options.js';
import { buildProvider, providerSettingsFor } from '../provider-options.js';
import { connectInspector, type InspectorConnection } from '../../inspect/stately-inspector.js';
import { permissionsOf, sandboxOf } from '../permission-options.js';
import { PermissionPolicy } from '../../policy/permission-policy.js';
import { builtinTools } from '../../tools/builtin-tools.js';
import type { ApprovalAnswering } from '../approval-prompt.js';
import type { PermissionOptions } from '../command-options.js';
import type { RunOptions } from './run.command.js';
import { cliTelemetryFor } from '../telemetry-options.js';
import { cliCapabilitiesFor } from '../capability-options.js';

/** How the CLI answers approvals for these flags: in advance from the rules, and on a TTY by asking. */
export const answeringOf = (options: PermissionOptions): ApprovalAnswering => ({
  policy: new PermissionPolicy(permissionsOf(options)),
  tools: builtinTools(),
  interactive: Boolean(process.stdin.isTTY),
});

/** The body of `rein run` (see `registerRun`). */
export const runCommand = async (task: string, options: RunOptions, setExit: (code: number) => void): Promise<void> => {
  const workspace = await workspaceOf(options);
  const settings = await providerSettingsFor(options, workspace);
  const inspector: InspectorConnection | undefined = options.inspect === undefined || options.inspect === false ? undefined : await connectInspector(options.inspect === true ? 'ws://127.0.0.1:8080' : options.inspect);
  const telemetry = options.detach ? undefined : await cliTelemetryFor(options);
  const { mcpServers, capabilities } = options.detach ? { mcpServers: {}, capabilities: {} } : await cliCapabilitiesFor(workspace, options);
  const store = await openStore(options, workspace, 'write');
  try {
    const { provider, replaying, fallbacks } = await buildProvider(settings, store);
    const budgets = { ...replaying?.budgets, ...budgetsOf(options) };
    const rein = await createRein({ store, workspace, protectedPaths: await protectedPathsOf(options, workspace), provider, fallbacks, budgets, modelOptions: settings.modelOptions, permissions: permissionsOf(options), sandbox: sandboxOf(options), mcpServers, capabilities, ...(inspector ? { inspect: inspector.inspect } : {}), ...telemetry?.reinOptions });
    telemetry?.attach(rein);
    const text = task || replaying?.task || 'Follow the script.';
    if (options.detach) {
      const sessionId = await rein.submit({ task: text, budgets });
      if (options.json) printJson({ sessionId, queued: true });
      else process.stdout.write(`${sessionId}\n`);
      return;
    }
    const session = await rein.createSession({ task: text });
    try {
      const result = await runToQuiet(session, { json: Boolean(options.json), begin: () => session.send(text), approvals: answeringOf(options) });
      setExit(exitCodeOf(result));
    } finally {
      await session.release();
    }
  } finally {
    await telemetry?.finish();
    await store.close();
    await inspector?.flush();
    await inspector?.close();
  }
};
