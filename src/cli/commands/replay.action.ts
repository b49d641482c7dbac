import { ReinError } from '../../host/host-errors.js';
import { replaySession } from '../../session/replay-session.js';
import { describeChain } from '../../session/verify-session.js';
import { assertAuthenticated } from '../../../stores/chain-check.js';
import { forkSession } from '../../session/fork-session.js';
import { dryRunSession } from '../../session/dry-run.js';
import { decideWithPolicy } from '../../session/dry-run-permission.js';
import { PermissionPolicy } from '../../policy/permission-policy.js';
import { permissionsOf } from '../permission-options.js';
import { readSession } from '../../session/session-records.js';
import { builtinTools } from '../../tools/builtin-tools.js';
import { ToolRegistry } from '../../tools/tool-registry.js';
import { printJson, storeFlags, workspaceOf, type CommonOptions } from '../cli-context.js';
import { printText } from '../print-text.js';
import { wholeNumberFlag } from '../whole-number-flag.js';
import type { PermissionOptions, PluginOptions } from '../command-options.js';
import { dryRunHooks } from '../../session/dry-run-hooks.js';
import { pluginsFor } from '../plugin-options.js';
import { CapabilityRegistry } from '../../plugins/capability-registry.js';
import { PluginHost } from '../../plugins/plugin-host.js';
import { HookKernel } from '../../hooks/hook-kernel.js';
import { withStore } from './sessions.action.js';

/** The body of `rein replay` (and `--dry-run`). */
export const replayCommand = (id: string, options: CommonOptions & PermissionOptions & PluginOptions & { dryRun?: boolean }): Promise<void> =>
  withStore(options, 'read-only', async (store) => {
    if (!options.dryRun && (options.yes || options.mode !== undefined || options.approve || options.deny)) {
      throw new ReinError('USAGE', 'the permission flags (--mode, --approve, --deny, --yes) apply to rein replay --dry-run only: a verified replay runs no policy');
    }
    if (options.dryRun) {
      const workspace = await workspaceOf(options);
      const decide = decideWithPolicy(new PermissionPolicy(permissionsOf(options)), workspace);
      const records = await readSession(store, id);
      // Today's plugins: their tools are looked up and their in-process preToolUse hooks re-evaluated (never a command hook).
      const loaded = await pluginsFor(options, workspace);
      const capabilities = new CapabilityRegistry(new Set(builtinTools().map((tool) => tool.name)));
      const pluginHost = new PluginHost({ workspace, registry: capabilities });
      for (const spec of loaded.plugins) await pluginHost.load(spec);
      const registry = new ToolRegistry([...builtinTools(), ...capabilities.toolDefinitions()]);
      const report = await dryRunHooks(records, dryRunSession(records, { registry, decide }), { hooks: new HookKernel(capabilities.hookRegistrations()), registry, mode: permissionsOf(options).mode ?? 'default' });
      await pluginHost.stopAll('dry run finished');
      if (options.json) return report.calls.forEach(printJson);
      for (const call of report.calls) {
        const then = `${call.then.validation}${call.then.permission ? `/${call.then.permission}` : ''}${call.then.answered ? ` (answered ${call.then.answered})` : call.then.answeredBy ? ` (by ${call.then.answeredBy})` : ''}${call.then.status ? ` → ${call.then.status}${call.then.errorCode ? ` ${call.then.errorCode}` : ''}` : ''}`;
        const now = `${call.now.validation}${call.now.permission ? `/${call.now.permission}` : ''}${call.now.hook && call.now.hook !== 'none' ? ` hook ${call.now.hook}` : ''}`;
        printText(`#${call.seq} ${call.name} ${call.callId}: then ${then} · now ${now}${call.changed ? ` · CHANGED: ${call.reasons.join('; ')}` : ''}\n`);
      }
      printText(`${report.calls.length} recorded tool calls, ${report.changed} would now be decided differently${report.permissionEvaluated ? '' : ' (validation only: no permission policy in this build)'}; nothing was executed\n`);
      return;
    }
    // A log written before the chain keeps replaying (its derived records are still regenerated and compared), but
    // nothing vouches for its inputs and facts: the command says so and exits 5 (`CHAIN_UNAUTHENTICATED`).
    const result = await replaySession(store, id, { allowUnchained: true });
    if (options.json) printJson({ sessionId: id, verified: result.verified, regenerated: result.regenerated, inputs: result.inputs, head: result.head, chain: result.chain });
    else printText(`${result.chain.status === 'unchained' ? 'replayed' : 'verified'} ${result.verified} records (${result.inputs} inputs re-applied, ${result.regenerated} derived records regenerated and equal); ${describeChain(result.chain)}\n`);
    assertAuthenticated(result.chain);
  });

/** The body of `rein fork`. */
export const forkCommand = (id: string, options: CommonOptions & { at: string }): Promise<void> =>
  withStore(options, 'write', async (store) => {
    const atSeq = wholeNumberFlag(options.at, { min: 0, message: '--at must be an integer seq' })!;
    const forkId = await forkSession(store, id, atSeq);
    if (options.json) printJson({ sessionId: forkId, parent: id, atSeq });
    else {
      // stdout is the id alone (`id=$(rein fork …)`); the person is told what runs it.
      printText(`${forkId}\n`);
      printText(`forked ${id} at #${atSeq}: nothing runs it until you continue it with rein resume ${forkId}${storeFlags(options)}\n`, process.stderr);
    }
  });
