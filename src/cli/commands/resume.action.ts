import type { RecordEnvelope } from '../../../models/envelope.js';
import { hostRunFiles } from '../host-run-files.js';
import type { ModelProvider } from '../../providers/provider.js';
import { sessionStatusOf } from '../../host/session-status.js';
import { SessionCreated } from '../../../models/session.records.js';
import { ReinError } from '../../host/host-errors.js';
import { StoreError } from '../../../stores/store-errors.js';
import { createRein, type Rein } from '../../rein.js';
import { openStore, protectedPathsOf, storeFlags, workspaceOf, broadWorkspaceWarning, workspaceNote } from '../cli-context.js';
import { printText } from '../print-text.js';
import { cliPluginLocations, pluginFlags, exitCodeOf, printSandbox, runToQuiet, stopPluginsAfter } from '../session-runner.js';
import { resolve as resolvePath } from 'node:path';
import { configuredOptionsOf, loadWorkspaceConfig, type WorkspaceConfig } from '../../providers/provider-settings.js';
import { costFlag } from '../budget-options.js';
import { positiveFlag } from '../whole-number-flag.js';
import type { BudgetRaise } from '../../../machines/session/session-budget.js';
import { buildProvider, providerSettingsFor } from '../provider-options.js';
import { fileLimitWidening, limitOptions, permissionsOf, sandboxOf } from '../permission-options.js';
import { answeringOf } from './run.action.js';
import type { ResumeCommandOptions } from './resume.flags.js';
import { cliTelemetryFor } from '../telemetry-options.js';
import type { EventStore } from '../../../stores/event-store.js';
import { sessionEndedIn } from '../../host/step-record.js';
import { rootPath } from '../../host/root-path.js';
import type { HeldSession } from '../../worker/session-lease.js';
import { cliCapabilitiesFor } from '../capability-options.js';
import type { ReinSession } from '../../session/session-handle.js';
import { pluginProviderFor, pluginsFor, projectPluginFolders, refuseLostHooks } from '../plugin-options.js';
import type { ResumeReport } from '../../session/resume-session.js';
import { summarizeArguments } from '../transcript.js';
import { forkForRetry, providerFailureOf } from '../../session/provider-retry.js';
import { sessionOutcome } from '../../trace/session-outcome.js';
import { promptForRerun } from '../rerun-prompt.js';
import { shellWord } from '../../util/shell-word.js';
import type { SandboxChecked } from '../../../models/sandbox.records.js';
import { mergeSandboxConfig, sandboxLimits, type SandboxConfig, type SandboxLimit } from '../../policy/sandbox-config.js';
import { configFileName } from '../../providers/config-file-name.js';
import type { SandboxPolicy } from '../../policy/sandbox-policy.js';

/** An in-doubt effect as a person reads it: `bash npm test`, `callModel`. */
const describeEffect = (resolution: ResumeReport['resolutions'][number]): string =>
  resolution.kind === 'executeTool' ? `${String(resolution.args.name)} ${summarizeArguments((resolution.args.arguments ?? {}) as Record<string, unknown>)}`.trim() : resolution.kind;

/** The configuration's `prices`, as an option to spread. */
const pricesOf = async (workspace: string): Promise<{ prices?: NonNullable<WorkspaceConfig['prices']> }> => {
  const prices = (await loadWorkspaceConfig(workspace))?.prices;
  return prices ? { prices } : {};
};

const endedStatuses: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled', 'budget-exhausted']);

/** How a session ended, from its newest records (newest first); undefined while it has not ended. */
const endedStatusOf = (newestFirst: readonly RecordEnvelope[]): string | undefined => {
  const status = sessionStatusOf([...newestFirst].reverse());
  return status !== undefined && endedStatuses.has(status) ? status : undefined;
};

/** The provider of an ended session's resume: named as recorded, and never called (nothing is left to answer). */
const endedProvider = (id: string, recorded: { name: string; model?: string | undefined }, status: string): ModelProvider => ({
  name: recorded.name,
  ...(recorded.model === undefined ? {} : { model: recorded.model }),
  async *stream() {
    throw new ReinError('RESUME_BLOCKED', `session ${id} already ${status}: no model is called for it`);
  },
});

/** The body of `rein resume` (see `registerResume`). */
export const resumeCommand = async (id: string, options: ResumeCommandOptions, setExit: (code: number) => void): Promise<void> => {
  const workspace = await workspaceOf(options);
  const note = workspaceNote(options, workspace);
  if (note) process.stderr.write(`rein: ${note}\n`);
  const broad = broadWorkspaceWarning(workspace);
  // Said to a person at a terminal; scripts that point HOME at a scratch workspace (tests, CI) are not told on every run.
  if (broad && process.stderr.isTTY) process.stderr.write(`rein: warning: ${broad}\n`);
  const telemetry = await cliTelemetryFor(options);
  const store = await openStore(options, workspace, 'write');
  try {
    // A queued session (rein run --detach) is resumed under its lease, like a worker would run it.
    let interrupt: ((reason: string) => void) | undefined;
    const held = store.capabilities.fencing
      ? await (async () => {
          const [{ queueOf }, { holdQueuedSession }] = await Promise.all([import('../../worker/submit-session.js'), import('../../worker/session-lease.js')]);
          return holdQueuedSession({ queue: queueOf(store), store, session: id, onLost: (reason) => interrupt?.(reason) });
        })()
      : undefined;
    try {
      setExit(await resumeHere(id, options, { ...(held ? { store: held.store, effectGate: held.effectGate, held } : { store }), telemetry }, workspace, (stop) => (interrupt = stop)));
    } finally {
      held?.stop();
    }
  } finally {
    await telemetry?.finish();
    await store.close();
  }
};

const resumeHere = async (
  id: string,
  options: ResumeCommandOptions,
  context: { store: EventStore; effectGate?: () => Error | undefined; held?: HeldSession; telemetry: Awaited<ReturnType<typeof cliTelemetryFor>> },
  workspace: string,
  onInterrupt: (stop: (reason: string) => void) => void,
): Promise<number> => {
  const { store } = context;
  // This process must be the session's writer before it loads a plugin or judges an in-doubt call: a session another
  // process is running is refused here (STORE_LOCKED) and left exactly as it was (a queued one is held by its lease).
  const raise = raiseFlagsOf(options);
  // A session running in another process takes no raise from this one: its limits are in that process's machine.
  await store.hold?.(id)?.catch((error: unknown) => {
    if (raise && (error as { code?: unknown }).code === 'STORE_LOCKED') throw new StoreError('STORE_LOCKED', `${(error as Error).message}: session ${id} is running there, and its budgets are raised by resuming it once it stops (interrupt it, then rein resume ${id} with the same flags); nothing was recorded`, { cause: error });
    throw error;
  }); // held until the store closes
  const [first] = await store.read(id, { limit: 1 });
  if (!first) throw new ReinError('SESSION_NOT_FOUND', `no session ${id} in this store`);
  const created = SessionCreated.parse(first.data);
  // An ended session only says how it ended: it calls no model, so it needs no provider (a recorded provider's source
  // session, a key, an endpoint): one that refuses every call stands in.
  // A session that ended on a spent budget runs again once the budget is raised (resume checks the raise first).
  const endedAs = endedStatusOf(await store.read(id, { reverse: true, limit: 64 }));
  const ended = raise && endedAs === 'budget-exhausted' ? undefined : endedAs;
  // A session a provider failure ended (an outage, a wrong key, exhausted retries) is continued by a new attempt: a
  // fork at the last durable step before the failure, resumed here (the failed session itself stays as it ended).
  // A script that ran out of turns runs out again: only another script (or provider) makes a new attempt worth it.
  const failed = ended === 'failed' && !context.held ? await providerFailureOf(store, id) : undefined;
  const failure = failed && (failed.code !== 'script_exhausted' || options.script !== undefined || options.provider !== undefined) ? failed : undefined;
  if (failure) {
    const retry = await forkForRetry(store, failure);
    printText(`session ${id} failed on the provider (${failure.code}: ${failure.message}); a new attempt continues it from the last durable step as ${retry} (${id} stays failed)\n`, options.json ? process.stderr : process.stdout);
    return resumeHere(retry, options, context, workspace, onInterrupt);
  }
  const loaded = await pluginsFor(options, workspace, { trustProject: Boolean(options.yes), interactive: Boolean(process.stdin.isTTY), launch: true });
  // Hooks that changed since they were trusted refuse the resume: that error says it all, without the warning before it.
  if (ended === undefined) refuseLostHooks(loaded);
  for (const warning of loaded.warnings) printText(`rein: ${warning}\n`, process.stderr);
  // A plugin the session was given with --plugin and is not given now: its hooks and guardrails no longer guard it.
  const missing = cliPluginLocations(await store.read(id)).filter((location) => !(options.plugin ?? []).some((given) => resolvePath(given) === resolvePath(location)));
  for (const location of missing) {
    const flag = pluginFlags([location]).trimStart();
    printText(`rein: warning: this session ran with ${flag}, which is not given now: its tools, hooks and guardrails do not apply (add ${flag} to keep them)\n`, process.stderr);
  }
  // A session that ran on a plugin's provider resumes on it (or on the one --provider names).
  const pluginProvider = ended !== undefined ? undefined : (options.provider ?? (options.script || options.from ? undefined : created.provider.name))?.includes('__') ? (options.provider ?? created.provider.name) : undefined;
  const settings = pluginProvider || ended !== undefined ? undefined : await providerSettingsFor(options, workspace, created.provider);
  const { provider, fallbacks } = ended !== undefined ? { provider: endedProvider(id, created.provider, ended), fallbacks: undefined } : pluginProvider ? { provider: await pluginProviderFor(pluginProvider, { ...(options.model ?? created.provider.model ? { model: options.model ?? created.provider.model } : {}), ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}) }, workspace, loaded.plugins), fallbacks: undefined } : await buildProvider(settings!, store);
  const { mcpServers, capabilities } = await cliCapabilitiesFor(workspace, options);
  const sandbox = await restoredSandbox(store, id, options, workspace);
  const maxCostUsd = costFlag(options.maxCost);
  const prices = await pricesOf(workspace);
  const rein = await createRein({ store, workspace, ...(maxCostUsd === undefined ? {} : { budgets: { maxCostUsd } }), ...prices, ...(options.memory === false ? { memory: false as const } : {}), protectedPaths: [...(await protectedPathsOf(options, workspace)), ...projectPluginFolders(loaded.plugins, workspace), ...(await hostRunFiles(workspace, loaded.hooks, mcpServers))], provider, ...(fallbacks ? { fallbacks } : {}), ...(settings ? { modelOptions: settings.modelOptions } : {}), ...(settings?.applyPatch === undefined ? {} : { applyPatch: settings.applyPatch }), permissions: permissionsOf(options), sandbox: sandbox.policy, plugins: loaded.plugins, ...(loaded.hooks ? { hooks: loaded.hooks } : {}), mcpServers, capabilities, ...configuredOptionsOf(await loadWorkspaceConfig(workspace)), ...(context.effectGate ? { effectGate: context.effectGate } : {}), ...context.telemetry?.reinOptions });
  context.telemetry?.attach(rein);
  // An in-doubt call whose rerun needs a confirmation: `--confirm <effectId>` (that call only) or `--yes` confirm it;
  // otherwise a person at a terminal is asked, call by call; without one it waits (exit 3).
  const confirmEffects = [...(options.confirm ?? []), ...(context.held?.confirmations.confirmEffects ?? [])];
  const interactive = Boolean(process.stdin.isTTY) && !options.json;
  const { session, report } = await rein.resumeSession(id, {
    confirmInDoubt: Boolean(options.yes),
    confirmEffects,
    ...(context.held ? { declineEffects: context.held.confirmations.declineEffects } : {}),
    ...(interactive ? { confirm: (question) => promptForRerun(question, { input: process.stdin, output: process.stderr }) } : {}),
    ...(raise ? { budgets: raise } : {}),
  }).catch(async (error: unknown) => {
    // A session this process may not resume (its chain not this machine's key's, …) goes back to the queue as it was.
    await context.held?.giveBack().catch(() => undefined);
    throw error;
  });
  const unknown = (options.confirm ?? []).filter((effectId) => !report.resolutions.some((resolution) => resolution.effectId === effectId));
  for (const effectId of unknown) printText(`rein: warning: --confirm ${effectId}: no in-doubt call of session ${id} has that id (in doubt: ${report.resolutions.map((resolution) => resolution.effectId).join(', ') || 'none'})\n`, process.stderr);
  // The session's MCP servers stop when this command is done with it, however it ends.
  try {
    return await continueResumed(id, session, report, options, { store, held: context.held, rein, sandboxChanges: sandbox.changes, workspace }, onInterrupt);
  } finally {
    await session.release();
  }
};

/** Report what resume found and drive the session on (released by the caller). */
const continueResumed = async (id: string, session: ReinSession, report: ResumeReport, options: ResumeCommandOptions, { store, held, rein, sandboxChanges, workspace }: { store: EventStore; held: HeldSession | undefined; rein: Rein; sandboxChanges: readonly string[]; workspace: string }, onInterrupt: (stop: (reason: string) => void) => void): Promise<number> => {
  onInterrupt((reason) => void session.interrupt(reason).catch(() => undefined));
  if (!options.json) {
    printText(`rebuilt ${id}: verified ${report.verified} records${report.snapshotSeq ? ` after the snapshot at seq ${report.snapshotSeq}` : ''} (${report.inputs} inputs re-applied, ${report.regenerated} derived records regenerated and equal)\n`);
    if (report.snapshotRejected) printText(`warning: ${report.snapshotRejected}; used a full replay\n`, process.stderr);
    if (report.rewindFinished) printText(`finished an interrupted rewind of the workspace to #${report.rewindFinished.toSeq} first (${report.rewindFinished.paths} path${report.rewindFinished.paths === 1 ? '' : 's'}; ${report.rewindFinished.verified ? 'verified: it holds the tree recorded there' : 'the tree differs from the one recorded there'})\n`);
    if (report.strayProcessesKilled > 0) printText(`killed ${report.strayProcessesKilled} process(es) an earlier run of this session left running (background commands and what they started)\n`);
    // The session's recorded mode and rules hold again; say what these flags change on top of them.
    for (const change of report.permissionChanges) printText(`permissions: ${change}\n`);
    for (const change of sandboxChanges) printText(`sandbox: ${change}\n`);
    if (report.budgetsRaised) printText(`budgets raised: ${Object.entries(report.budgetsRaised).map(([name, limit]) => `${name} ${limit}`).join(', ')}; the session continues\n`);
    for (const resolution of report.resolutions) {
      printText(`in doubt: ${resolution.effectId} (${describeEffect(resolution)}) → ${resolution.resolution}\n`);
      if (resolution.resolution === 'awaiting-confirmation') printText(`  ${resolution.reason}\n`);
    }
    if (!report.alreadyEnded) await printSandbox(store, id);
  }
  if (report.alreadyEnded) {
    const result = session.result();
    await rein.stopPlugins('rein resume finished');
    await held?.release(result);
    // A completed session's outcome is what its verifications showed: `failed` exits 1 as it did when it ran.
    const outcome = result.status === 'completed' ? sessionOutcome(await store.read(id)) : undefined;
    // A spent budget says which one it was and how to raise it (`--max-turns`, `--max-tokens`, `--max-wall-time`).
    const spent = result.status === 'budget-exhausted' ? await spentBudgetOf(store, id) : undefined;
    if (options.json) process.stdout.write(`${JSON.stringify({ sessionId: id, alreadyEnded: true, status: result.status, ...(outcome ? { outcome } : {}), ...(spent ? { reason: spent.reason } : {}) })}\n`);
    else printText(`already ${result.status}${outcome ? ` (outcome ${outcome})` : ''}: session ${id} ended; nothing to resume\n${spent ? `${spent.advice}\n` : ''}`);
    return exitCodeOf({ ...result, ...(outcome ? { outcome } : {}) });
  }
  await held?.applyAnswers(session);
  // Reruns start during the rebuild: the display follows from the first record resume wrote, with the rerun calls'
  // arguments, so a rerun shows like any call (`✓ bash npm test (exit 0, 812 ms)`).
  const calls = report.resolutions.filter((resolution) => resolution.kind === 'executeTool').map((resolution) => ({ effectId: resolution.effectId, arguments: (resolution.args.arguments ?? {}) as Record<string, unknown> }));
  let result: Awaited<ReturnType<typeof runToQuiet>>;
  try {
    result = await runToQuiet(session, { json: Boolean(options.json), approvals: answeringOf(options, workspace), from: report.head + 1, calls, effects: report.resolutions.map((resolution) => resolution.effectId), where: storeFlags(options), ...(await pricesOf(workspace)) });
    // Quiet (ended, or waiting for a person): the plugins stop and the log says so, while a held lease still fences it.
    await stopPluginsAfter(rein, id, { json: Boolean(options.json), printedThrough: session.snapshot().head, reason: 'rein resume finished' });
  } finally {
    await rein.stopPlugins('rein resume finished');
  }
  await held?.release(result);
  const waiting = report.resolutions.filter((resolution) => resolution.resolution === 'awaiting-confirmation');
  if (!options.json && result.status === 'paused' && waiting.length > 0) {
    // The command confirms those calls and nothing else (`--yes` would also answer every later approval).
    for (const resolution of waiting) printText(`waiting for confirmation to rerun ${resolution.effectId} (${describeEffect(resolution)}): its outcome is unknown\n`);
    printText(`  rerun ${waiting.length === 1 ? 'it' : 'them'} with: rein resume ${id}${waiting.map((resolution) => ` --confirm ${shellWord(resolution.effectId)}`).join('')}\n`);
  }
  return exitCodeOf(result);
};

/** The newest `sandbox.checked` of a session: what its last start or resume ran under. */
const lastSandboxChecked = async (store: EventStore, id: string): Promise<SandboxChecked | undefined> => {
  for (let to: number | undefined; ; ) {
    const page = await store.read(id, { reverse: true, limit: 512, ...(to === undefined ? {} : { to }) });
    const found = page.find((record) => record.type === 'sandbox.checked');
    if (found) return found.data as SandboxChecked;
    const oldest = page.at(-1)?.seq;
    if (oldest === undefined || oldest <= 1) return undefined;
    to = oldest - 1;
  }
};

/**
 * The sandbox a resumed session runs under: the mode and network policy it ran under last time hold again (a
 * `required` session stays required on a machine without bubblewrap: its bash calls are refused, not run
 * unisolated), unless a flag of this resume names them; every difference is returned to be printed.
 */
const restoredSandbox = async (store: EventStore, id: string, options: ResumeCommandOptions, workspace: string): Promise<{ policy: Partial<SandboxPolicy>; changes: string[] }> => {
  const file = (await loadWorkspaceConfig(workspace))?.sandbox;
  const recorded = await lastSandboxChecked(store, id);
  if (!recorded) return { policy: sandboxOf(options, file), changes: [] };
  const session: SandboxConfig = { mode: recorded.mode, network: recorded.network, ...(recorded.allowedHosts ? { allowedHosts: recorded.allowedHosts } : {}), ...recorded.limits };
  const flagged = sandboxOf({ ...(options.sandbox === undefined ? {} : { sandbox: options.sandbox }), ...(options.network === undefined ? {} : { network: options.network }), ...(options.allowHost === undefined ? {} : { allowHost: options.allowHost }), ...limitOptions(options) });
  // A session recorded before its limits were: the workspace file's limits may still only narrow.
  const widening = file && !recorded.limits ? fileLimitWidening(flagged as SandboxConfig, file) : [];
  if (widening.length > 0) throw new ReinError('USAGE', `${configFileName} ${widening.join(' and ')}: a workspace file may only narrow the sandbox`);
  // Flags first, then what the session ran under, then the workspace file (for what neither says: the login shell).
  const policy = { ...mergeSandboxConfig(flagged as SandboxConfig, session, file), ...(options.loginShell ? { loginShell: true } : {}) };
  const changes: string[] = [];
  if (policy.mode !== undefined && policy.mode !== recorded.mode) changes.push(`mode ${recorded.mode} → ${policy.mode} (--sandbox)`);
  if (policy.network !== undefined && policy.network !== recorded.network) changes.push(`network ${recorded.network} → ${policy.network}`);
  const hosts = (list: readonly string[] | undefined) => [...(list ?? [])].sort().join(', ');
  if (hosts(policy.allowedHosts) !== hosts(recorded.allowedHosts) && policy.network === 'allow-list') changes.push(`allowed hosts ${hosts(recorded.allowedHosts) || 'none'} → ${hosts(policy.allowedHosts) || 'none'}`);
  for (const name of Object.keys(sandboxLimits) as SandboxLimit[]) {
    const before = recorded.limits?.[name];
    if (before !== undefined && policy[name] !== undefined && policy[name] !== before) changes.push(`${sandboxLimits[name].what} ${before} → ${policy[name]} (${sandboxLimits[name].flag})`);
  }
  return { policy, changes };
};

/** The flag that sets each budget a session can end on, as `rein run` takes it. */
const budgetFlags: ReadonlyArray<{ match: RegExp; budget: string; flag: string; recorded: string }> = [
  { match: /^turn budget/, budget: 'turn budget', flag: '--max-turns <n>', recorded: 'maxTurns' },
  { match: /^token budget/, budget: 'token budget', flag: '--max-tokens <n>', recorded: 'maxTokens' },
  { match: /^tool-call budget/, budget: 'tool-call budget', flag: '--max-tool-calls <n>', recorded: 'maxToolCalls' },
  { match: /^wall-time budget/, budget: 'wall-time budget', flag: '--max-wall-time <ms>', recorded: 'maxWallTimeMs' },
];

/**
 * Which budget a `budget-exhausted` session spent (its root `session.ended` reason, from the log's tail) and what to
 * do about it: the recorded limit, and that only a new session takes a larger one (a spent budget ends the session;
 * a cost budget pauses it instead, and `--max-cost` continues that).
 */
const spentBudgetOf = async (store: EventStore, id: string): Promise<{ reason: string; advice: string } | undefined> => {
  const newestFirst = await store.read(id, { reverse: true, limit: 256 });
  const ended = newestFirst.map((record) => sessionEndedIn(record, rootPath)).find((record) => record !== undefined);
  const reason = (ended?.data as { reason?: unknown } | undefined)?.reason;
  if (typeof reason !== 'string') return undefined;
  const known = budgetFlags.find((entry) => entry.match.test(reason));
  const [first] = await store.read(id, { limit: 1 });
  // The limit in force: the newest raise that gave it (in the tail read), else the one the session started with.
  const raised = known ? newestFirst.find((record) => record.type === 'session.budgets-raised' && typeof (record.data as Record<string, unknown>)[known.recorded] === 'number') : undefined;
  const limit = known ? ((raised ?? first)?.data as Record<string, unknown> | undefined)?.[known.recorded] ?? (first?.data as { budgets?: Record<string, unknown> } | undefined)?.budgets?.[known.recorded] : undefined;
  const spent = known ? `its ${known.budget}${typeof limit === 'number' ? ` (${known.recorded} ${limit})` : ''} is spent` : `it stopped: ${reason}`;
  const advice = known
    ? `Raise it and continue the session with rein resume ${id} ${known.flag} (a limit above what is spent)`
    : `Raise the budget it spent and continue the session with rein resume ${id} and --max-turns, --max-tool-calls, --max-tokens or --max-wall-time (a limit above what is spent)`;
  return { reason, advice: `${reason}: ${spent}. ${advice}.` };
};

/**
 * `--max-turns`, `--max-tool-calls`, `--max-tokens` and `--max-wall-time` of `rein resume`: the raise of a spent (or an
 * interrupted session's) budget, if any is given.
 */
export const raiseFlagsOf = (options: Pick<ResumeCommandOptions, 'maxTurns' | 'maxToolCalls' | 'maxTokens' | 'maxWallTime'>): BudgetRaise | undefined => {
  const maxTurns = positiveFlag('--max-turns', options.maxTurns);
  const maxToolCalls = positiveFlag('--max-tool-calls', options.maxToolCalls);
  const maxTokens = positiveFlag('--max-tokens', options.maxTokens);
  const maxWallTimeMs = positiveFlag('--max-wall-time', options.maxWallTime);
  if (maxTurns === undefined && maxToolCalls === undefined && maxTokens === undefined && maxWallTimeMs === undefined) return undefined;
  return {
    ...(maxTurns === undefined ? {} : { maxTurns }),
    ...(maxToolCalls === undefined ? {} : { maxToolCalls }),
    ...(maxTokens === undefined ? {} : { maxTokens }),
    ...(maxWallTimeMs === undefined ? {} : { maxWallTimeMs }),
  };
};
