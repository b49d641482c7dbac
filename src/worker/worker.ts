import { configuredOptionsOf, loadWorkspaceConfig } from '../providers/provider-settings.js';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import type { EventStore } from '../../stores/event-store.js';
import type { PostgresEventStore } from '../../stores/postgres/postgres-event-store.js';
import { PostgresSessionQueue, type ClaimedSession } from '../../stores/postgres/postgres-session-queue.js';
import { ReinError } from '../host/host-errors.js';
import type { SessionResult } from '../host/session-host.js';
import { createProviderFromSettings } from '../providers/provider-factory.js';
import { resolveProviderSettings } from '../providers/provider-settings.js';
import { createScriptedProvider, parseScript } from '../providers/scripted-provider.js';
import type { ModelProvider } from '../providers/provider.js';
import { createRein, type Rein } from '../rein.js';
import type { CommandHooksConfig } from '../hooks/command-hooks.js';
import type { ReinPlugin } from '../plugins/plugin-contract.js';
import type { PluginSpec } from '../plugins/plugin-host.js';
import { projectPluginFolders, refuseLostHooks, workspacePlugins } from '../plugins/workspace-plugins.js';
import { hostRunFiles } from '../cli/host-run-files.js';
import { cliCapabilitiesFor } from '../cli/capability-options.js';
import type { CapabilityOptions } from '../capabilities/catalog.js';
import type { McpServerConfig } from '../mcp/mcp-config.js';
import type { AnyToolDefinition } from '../tools/tool.js';
import type { SandboxPolicy } from '../policy/sandbox-policy.js';
import { builtinTools } from '../tools/builtin-tools.js';
import { fencedStore } from './fenced-store.js';
import { LeaseKeeper } from './lease-keeper.js';
import { confirmationsOf, QueuedAnswer, QueuedConfirmation, QueuedSession } from './queued-session.js';
import type { ResumeReport } from '../session/resume-session.js';
import type { ReinSession } from '../session/session-handle.js';
import { startFailureOutcome, type StartRetry } from './start-failure.js';

/** What happened to one session a worker claimed. */
export interface WorkerSessionEvent {
  /** `warning`: something a person should know about how the session runs here (an untrusted project plugin). */
  type: 'claimed' | 'finished' | 'parked' | 'requeued' | 'fenced' | 'failed' | 'warning';
  sessionId: string;
  epoch: number;
  /** The session's status (finished), what it waits for (parked), or why the worker let go (fenced, failed). */
  detail?: string;
  /** What a parked session waits for: each approval and each in-doubt rerun to confirm, with the id `rein approve` takes. */
  waitingFor?: WaitingFor[];
}

/** One thing a parked session waits for a person to answer (`rein approve <sessionId> <id>`). */
export interface WaitingFor {
  kind: 'approval' | 'confirmation';
  /** The approval id, or the in-doubt effect's id. */
  id: string;
  /** What is asked: the tool call. */
  summary: string;
}

/** Options of `runWorker`. */
export interface WorkerOptions {
  /** The PostgreSQL store holding the queue (`openPostgresEventStore`); the worker does not close it. */
  store: PostgresEventStore;
  /** Sessions run at once (default 1). */
  concurrency?: number;
  /** Lease length in ms (default 15,000): a session whose worker stopped renewing is taken over after this long. */
  leaseMs?: number;
  /** Owner name recorded in the lease (default `<host>:<pid>:<random>`). */
  owner?: string;
  /** How often an idle worker looks at the queue besides notifications (ms, default 1,000). */
  pollMs?: number;
  /** Tools sessions get (default: the built-in tools). */
  tools?: readonly AnyToolDefinition[];
  /**
   * The plugins and command hooks a claimed session runs with. Default: what `rein run` would load in the session's
   * workspace (`workspacePlugins`): user plugins from this worker's config home (`env`), the project's plugins that
   * this worker's user trusted, the session's `--plugin` directories, and `hooks` of `rein.config.json`.
   */
  plugins?: (spec: QueuedSession) => Promise<{ plugins?: ReadonlyArray<ReinPlugin | PluginSpec>; hooks?: CommandHooksConfig; warnings?: readonly string[] }>;
  /**
   * The MCP servers and discovery policy a claimed session gets. Default: what `rein run` would give it in the session's
   * workspace: the servers of `.mcp.json` and `rein.config.json` that this worker's user trusted (`rein run --detach
   * --yes`, or the prompt, records that trust at submission; `rein mcp trust` does too) and `capabilities` of
   * `rein.config.json`. An untrusted file's servers do not start, and the worker warns once.
   */
  capabilities?: (spec: QueuedSession) => Promise<{ mcpServers?: Record<string, McpServerConfig>; capabilities?: CapabilityOptions; warnings?: readonly string[] }>;
  /** Where provider keys are read (default `process.env`); never from the queue. */
  env?: Record<string, string | undefined>;
  /** Stop claiming, interrupt running sessions (they go back to the queue) and resolve. */
  signal?: AbortSignal;
  /** Resolve once the queue has had nothing runnable for this long (ms); default: run until `signal`. */
  exitWhenIdleMs?: number;
  /** Save a snapshot every this many records (default 500). */
  snapshotEvery?: number;
  /** Told about every claim and every way a session leaves this worker. */
  onEvent?: (event: WorkerSessionEvent) => void;
  /**
   * A session that could not start for a reason a later try may not meet (a server not up, a store that did not
   * answer) goes back to the queue after a backoff, at most `maxAttempts` claims in all (defaults: 5 claims, 1 s
   * doubling to 30 s); one that never will (its provider cannot be built, its configuration is wrong) ends `failed`.
   */
  startRetry?: StartRetry;
}

/** What a worker did, when it stops. */
export interface WorkerReport {
  owner: string;
  claimed: number;
  finished: number;
  parked: number;
  fenced: number;
  failed: number;
}

/** The provider a queued session names, built from this worker's environment (keys) and the carried script. */
const providerFor = async (spec: QueuedSession, store: EventStore, env: Record<string, string | undefined>): Promise<{ provider: ModelProvider; fallbacks: ModelProvider[] }> => {
  if (spec.provider.name === 'scripted' && spec.script !== undefined) {
    return { provider: createScriptedProvider(parseScript(spec.script), { source: spec.provider.source ?? 'queued script' }), fallbacks: [] };
  }
  const settings = resolveProviderSettings({ session: spec.provider, env, workspace: spec.workspace });
  return createProviderFromSettings(settings, { store });
};

/** A tool call as a person reads it: its name and its first text argument (`bash sleep 6`, `write out.txt`). */
/**
 * A first lease's session, created; undefined when createSession refuses its id (SESSION_INVALID: its first append found
 * the log already there), and the caller then reads the head and resumes it (or meets the same refusal again).
 */
const createFresh = async (rein: Rein, spec: QueuedSession): Promise<ReinSession | undefined> => {
  try {
    return await rein.createSession({ sessionId: spec.sessionId, task: spec.task });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'SESSION_INVALID') return undefined;
    throw error;
  }
};

const callSummary = (name: unknown, args: unknown): string => {
  const first = Object.values((args ?? {}) as Record<string, unknown>).find((value): value is string => typeof value === 'string');
  return [String(name), first === undefined ? '' : first.length > 60 ? `${first.slice(0, 57)}…` : first].join(' ').trim();
};

/** What a paused session waits for: its pending approvals and the in-doubt effects its resume left awaiting confirmation. */
const waitingForOf = (approvals: ReadonlyArray<{ approvalId: string; tool: string; arguments: Record<string, unknown> }>, resolutions: ResumeReport['resolutions']): WaitingFor[] => [
  ...approvals.map((approval): WaitingFor => ({ kind: 'approval', id: approval.approvalId, summary: callSummary(approval.tool, approval.arguments) })),
  ...resolutions
    .filter((resolution) => resolution.resolution === 'awaiting-confirmation')
    .map((resolution): WaitingFor => ({ kind: 'confirmation', id: resolution.effectId, summary: resolution.kind === 'executeTool' ? `rerun ${callSummary(resolution.args.name, resolution.args.arguments)}` : `rerun ${resolution.kind}` })),
];

/**
 * Run sessions from a PostgreSQL store's queue (docs/postgres.md: *Workers*): claim one with a lease (owner, epoch, expiry),
 * renew it while the session runs, and run the session with every append fenced by that epoch, so a worker that lost
 * its lease can never write again and stops its effects. A new session is created; one that ran before continues
 * through the normal resume path (in-doubt effects resolved by their policies). A session that waits for an approval
 * is parked (no lease held) until `rein approve` leaves an answer. A session that cannot start ends `failed` with the
 * reason when no later try would do better, else goes back to the queue with a backoff, at most `startRetry.maxAttempts`
 * claims (start-failure.ts); other sessions are served meanwhile. Resolves when `signal` aborts (running sessions are
 * interrupted and go back to the queue) or, with `exitWhenIdleMs`, once nothing was runnable for that long.
 */
export const runWorker = async (options: WorkerOptions): Promise<WorkerReport> => {
  const queue = new PostgresSessionQueue(options.store);
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const leaseMs = options.leaseMs ?? 15_000;
  const report: WorkerReport = { owner, claimed: 0, finished: 0, parked: 0, fenced: 0, failed: 0 };
  /** The warnings this worker printed already (each is said once per worker, not once per session). */
  const warned = new Set<string>();
  const emit = (event: WorkerSessionEvent) => {
    if (event.type === 'claimed') report.claimed++;
    else if (event.type === 'finished') report.finished++;
    else if (event.type === 'parked') report.parked++;
    else if (event.type === 'fenced') report.fenced++;
    else if (event.type === 'failed') report.failed++;
    options.onEvent?.(event);
  };
  /** The idle slots waiting for the queue to change: a notification wakes them all (each waits at most its pause). */
  const sleepers = new Set<() => void>();
  const stopWatching = queue.watch(() => {
    for (const wake of [...sleepers]) wake();
  });
  let lastWork = performance.now();
  const idleFor = () => performance.now() - lastWork;

  const slot = async (): Promise<void> => {
    while (!options.signal?.aborted) {
      const claimedAt = performance.now();
      const claimed = await queue.claim(owner, leaseMs).catch(() => undefined);
      if (claimed === undefined) {
        if (options.exitWhenIdleMs !== undefined && idleFor() >= options.exitWhenIdleMs) return;
        // Nothing notifies when a lease expires: wake up right after the earliest one does, to take its session over.
        const expiry = await queue.nextExpiryMs().catch(() => undefined);
        const pause = Math.min(options.pollMs ?? 1_000, expiry === undefined ? Number.POSITIVE_INFINITY : expiry + 20);
        // One waiter per idle pause, gone when it ends (a notification, the pause, or the signal).
        await new Promise<void>((resolve) => {
          const timer = setTimeout(wake, pause);
          function wake() {
            clearTimeout(timer);
            sleepers.delete(wake);
            options.signal?.removeEventListener('abort', wake);
            resolve();
          }
          sleepers.add(wake);
          options.signal?.addEventListener('abort', wake, { once: true });
        });
        continue;
      }
      lastWork = performance.now();
      await runClaimed(claimed, claimedAt);
      lastWork = performance.now();
    }
  };

  const runClaimed = async (claimed: ClaimedSession, claimedAt: number): Promise<void> => {
    const { lease } = claimed;
    emit({ type: 'claimed', sessionId: lease.session, epoch: lease.epoch });
    const parsed = QueuedSession.safeParse(claimed.spec);
    if (!parsed.success) {
      const failure = `INPUT_INVALID: invalid queued session: ${parsed.error.message}`;
      await queue.releaseFailed(lease, { state: 'failed', failure }).catch(() => undefined);
      return emit({ type: 'failed', sessionId: lease.session, epoch: lease.epoch, detail: failure });
    }
    const spec = parsed.data;
    let interrupt: ((reason: string) => void) | undefined;
    const keeper = new LeaseKeeper({ queue, lease, leaseMs, claimedAt, onLost: (reason) => interrupt?.(reason) });
    const onAbort = () => interrupt?.('the worker is stopping');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let rein: Rein | undefined;
    try {
      const store = fencedStore(options.store, lease);
      const env = options.env ?? process.env;
      const loaded = options.plugins ? await options.plugins(spec) : await workspacePlugins({ workspace: spec.workspace, cli: spec.plugins, env, resolveLaunchers: true });
      const capable = options.capabilities ? await options.capabilities(spec) : await workspaceCapabilities(spec.workspace);
      // Each warning once per worker: the same untrusted hooks or plugin are not news on every session it claims.
      for (const warning of [...(loaded.warnings ?? []), ...(capable.warnings ?? [])]) {
        if (warned.has(warning)) continue;
        warned.add(warning);
        emit({ type: 'warning', sessionId: lease.session, epoch: lease.epoch, detail: warning });
      }
      refuseLostHooks(loaded);
      const { provider, fallbacks } = await providerFor(spec, store, env);
      rein = await createRein({
        store,
        workspace: spec.workspace,
        provider,
        fallbacks,
        budgets: spec.budgets,
        permissions: spec.permissions,
        sandbox: spec.sandbox as Partial<SandboxPolicy>,
        effectGate: keeper.check,
        ...(options.tools ? { tools: options.tools } : { tools: builtinTools() }),
        ...(options.snapshotEvery === undefined ? {} : { snapshotEvery: options.snapshotEvery }),
        ...(loaded.plugins ? { plugins: loaded.plugins } : {}),
        // As `rein run` protects them: the plugin folders, the workspace files the command hooks run on the host
        // (a `./guard.sh` the model could rewrite would run its code outside the sandbox)
        // and the workspace files its local MCP servers run.
        protectedPaths: [...(loaded.plugins ? projectPluginFolders(loaded.plugins) : []), ...(await hostRunFiles(spec.workspace, loaded.hooks, capable.mcpServers ?? {}))],
        ...(loaded.hooks ? { hooks: loaded.hooks } : {}),
        ...(capable.mcpServers ? { mcpServers: capable.mcpServers } : {}),
        ...(capable.capabilities ? { capabilities: capable.capabilities } : {}),
        ...configuredOptionsOf(await loadWorkspaceConfig(spec.workspace).catch(() => undefined)),
      });
      const harness = rein;
      // The plugins stop (recorded in the session's log) while the lease still fences the log: before any release; then
      // the session's background commands are stopped and the workspace checked (`session.release`), still fenced.
      const letGo = () => harness.stopPlugins(`worker ${owner} let go of the session`);
      // The first lease of a stream (epoch 1) is a session no worker started: it is created at once, without reading
      // the head first (one query fewer per session); should its id be taken all the same (a log written outside the
      // queue), createSession's first append finds it (SESSION_INVALID) and the session is resumed as any other.
      const created = lease.epoch === 1 ? await createFresh(harness, spec) : undefined;
      const fresh = created !== undefined || (await options.store.head(spec.sessionId)) === 0;
      // Confirmations `rein approve` left decide the in-doubt effects of this resume.
      const resumed = fresh ? undefined : await rein.resumeSession(spec.sessionId, { confirmInDoubt: spec.confirmInDoubt, ...confirmationsOf(claimed.answers) });
      const session = created ?? resumed?.session ?? (await rein.createSession({ sessionId: spec.sessionId, task: spec.task }));
      const confirming = new Set(resumed?.report.resolutions.filter((resolution) => resolution.resolution === 'awaiting-confirmation').map((resolution) => resolution.effectId));
      interrupt = (reason) => void session.interrupt(reason).catch(() => undefined);
      if (keeper.lost) interrupt(keeper.lost);
      if (fresh) await session.send(spec.task);
      // The claim brought the answers waiting then: the first round applies those (one query fewer per session);
      // any that arrive later are read when the session pauses.
      let claimedAnswers: unknown[] | undefined = claimed.answers;
      for (;;) {
        const answers = claimedAnswers ?? (await queue.answers(lease));
        claimedAnswers = undefined;
        for (const raw of answers) {
          const answer = QueuedAnswer.safeParse(raw);
          if (!answer.success) continue;
          await session.approve(answer.data.approvalId, { decision: answer.data.decision, ...(answer.data.feedback ? { feedback: answer.data.feedback } : {}) }).catch((error: { code?: string }) => {
            if (error.code !== 'APPROVAL_NOT_FOUND') throw error;
          });
        }
        // A confirmation that arrived after this resume decided its effect is applied by resuming again: kept in the queue.
        const confirmed = answers.some((raw) => {
          const answer = QueuedConfirmation.safeParse(raw);
          return answer.success && confirming.has(answer.data.effectId);
        });
        if (!confirmed) await queue.dropAnswers(lease, answers.length);
        const result: SessionResult = await session.whenQuiet();
        if (keeper.lost) throw new ReinError('LEASE_LOST', keeper.lost);
        if (result.status === 'paused' && confirmed) {
          await letGo();
          await session.release();
          await queue.release(lease, 'queued');
          return emit({ type: 'requeued', sessionId: lease.session, epoch: lease.epoch, detail: 'a confirmation arrived: the session resumes with it' });
        }
        if (result.status === 'paused') {
          if ((await queue.answers(lease)).length > 0) continue;
          await letGo();
          await session.release();
          const state = await queue.release(lease, 'parked');
          if (state === 'running') {
            // An answer came in meanwhile, but this harness's plugins are stopped: a worker resumes it afresh.
            await queue.release(lease, 'queued');
            return emit({ type: 'requeued', sessionId: lease.session, epoch: lease.epoch, detail: 'an answer arrived while parking' });
          }
          if (state === undefined) throw new ReinError('LEASE_LOST', 'the lease was taken before the session could park');
          const waitingFor = waitingForOf(session.pendingApprovals(), resumed?.report.resolutions ?? []);
          // Each wait names the command that answers it, with its real id: a line a person can copy.
          const detail = waitingFor.map((waiting) => `waiting for ${waiting.kind} ${waiting.id} (${waiting.summary}) — answer with: rein approve ${lease.session} ${waiting.id} [--deny]`).join('; ');
          return emit({ type: 'parked', sessionId: lease.session, epoch: lease.epoch, detail, waitingFor });
        }
        await letGo();
        await session.release();
        if (result.status === 'interrupted') {
          await queue.release(lease, 'queued');
          return emit({ type: 'requeued', sessionId: lease.session, epoch: lease.epoch, detail: result.reason ?? 'interrupted' });
        }
        await queue.release(lease, 'done');
        return emit({ type: 'finished', sessionId: lease.session, epoch: lease.epoch, detail: result.status });
      }
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === 'STORE_FENCED' || code === 'LEASE_LOST' || keeper.lost) {
        return emit({ type: 'fenced', sessionId: lease.session, epoch: lease.epoch, detail: `${String(code ?? 'LEASE_LOST')}: ${(error as Error).message}` });
      }
      // The session could not go on here. A problem of its own (its provider cannot be built, its configuration is
      // wrong) is the same on every try: it ends failed with the reason. Anything else goes back to the queue with a
      // backoff, a bounded number of times, while the worker serves other sessions.
      await rein?.stopPlugins(`worker ${owner} let go of the session`).catch(() => undefined);
      const claims = (await queue.entry(lease.session).catch(() => undefined))?.claims ?? 1;
      const outcome = startFailureOutcome(error, claims, options.startRetry);
      await queue.releaseFailed(lease, outcome).catch(() => undefined);
      return emit({ type: outcome.state === 'failed' ? 'failed' : 'requeued', sessionId: lease.session, epoch: lease.epoch, detail: outcome.state === 'failed' ? outcome.failure : `${outcome.failure} (retried in ${outcome.delayMs} ms)` });
    } finally {
      // Whatever happened, this harness's plugins stop (recorded only where the lease still allows it).
      await rein?.stopPlugins(`worker ${owner} let go of the session`).catch(() => undefined);
      keeper.stop();
      options.signal?.removeEventListener('abort', onAbort);
    }
  };

  try {
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 1) }, () => slot()));
  } finally {
    await stopWatching();
  }
  return report;
};

/** `rein run`'s MCP servers and discovery policy for a workspace, without a person to ask: only what is trusted starts. */
const workspaceCapabilities = async (workspace: string): Promise<{ mcpServers: Record<string, McpServerConfig>; capabilities: CapabilityOptions; warnings: string[] }> => {
  const warnings: string[] = [];
  const { mcpServers, capabilities } = await cliCapabilitiesFor(workspace, {}, { interactive: false, warn: (text) => warnings.push(text) });
  return { mcpServers, capabilities, warnings };
};
