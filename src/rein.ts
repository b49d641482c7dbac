import type { Prices } from '../models/price-table.js';
import { diffSession, type DiffOptions, type SessionDiff } from './changes/session-diff.js';
import { rewindSession, type RewindOptions, type RewindResult } from './changes/rewind-session.js';
import { compareSessions, type SessionComparison } from './session/compare-sessions.js';
import { defer, mergeAll, type Observable } from 'rxjs';
import type * as z from 'zod';
import type { ReinRecord } from '../models/records.js';
import type { EventStore } from '../stores/event-store.js';
import type { ReplayCounts } from './host/replay.js';
import { createSession, type CreateSessionOptions } from './session/start-session.js';
import { forkSession, type ForkOptions } from './session/fork-session.js';
import { replaySession } from './session/replay-session.js';
import { resumeSession, type ResumeOptions, type ResumeReport } from './session/resume-session.js';
import { listSessions, summarizeQueued, summarizeSession, type ListSessionsOptions, type SessionSummary } from './session/session-catalog.js';
import type { ReinSession } from './session/session-handle.js';
import { SessionRegistry } from './session/session-registry.js';
import { ReinError } from './host/host-errors.js';
import { checkSessionId } from './session/session-id.js';
import { createMemoryGovernance, type MemoryGovernance } from './memory/memory-governance.js';
import type { LiveTelemetry, TelemetryHandle } from './telemetry/live-telemetry.js';
import type { CommandDescriptor, ProviderDescriptor, ToolDescriptor } from './plugins/capability-registry.js';
import type { PluginState } from './plugins/plugin-host.js';
import type { ReinOptions } from './rein-options.js';
import { pluginStops } from './rein-plugin-stops.js';
import { composeServices } from './rein-services.js';
import { submitToWorkers, type SubmitOptions } from './rein-submit.js';

export type { MemoryOptions, ReinOptions } from './rein-options.js';
export type { SubmitOptions } from './rein-submit.js';

/** The plugins of a harness: their lifecycle states and what they registered. */
export interface ReinPlugins {
  list(): PluginState[];
  tools(): ToolDescriptor[];
  providers(): ProviderDescriptor[];
  commands(): CommandDescriptor[];
  /** The hook kernel's registrations, in the order they run, point by point (plugin hooks, guardrails, command hooks). */
  hooks(): Array<{ id: string; point: string; kind: 'plugin' | 'command'; order: number; timeoutMs: number; failOpen: boolean }>;
}

/**
 * A harness over one store, workspace, provider and policy (tools, budgets, retry budget); it runs many sessions
 * at once in one process, each with its own step loop and single writer.
 */
export interface Rein {
  readonly store: EventStore;
  readonly workspace: string;
  /** The provider's name, model and endpoint as sessions record them (never a key). */
  readonly provider: { name: string; model?: string; source?: string };
  /** The prices its sessions are charged at: the shipped `defaultPrices` with the options' `prices` over them. */
  readonly prices: Prices;
  /**
   * Create a session without starting it (subscribe first, then `send` the task). With `output` (a zod schema) its
   * final answer is typed: `session.output()` resolves with `z.infer<typeof output>`.
   */
  createSession<Schema extends z.ZodType = z.ZodType<unknown>>(options: CreateSessionOptions<Schema>): Promise<ReinSession<z.infer<Schema>>>;
  /** Create a session and send its task. */
  startSession<Schema extends z.ZodType = z.ZodType<unknown>>(options: CreateSessionOptions<Schema>): Promise<ReinSession<z.infer<Schema>>>;
  /**
   * Queue a session for `rein worker` instead of running it here (PostgreSQL stores only, else `QUEUE_UNSUPPORTED`):
   * it carries the task, this harness's workspace, provider identity (and the scripted provider's script, never a
   * key), permissions, sandbox overrides, budgets and the locations of `cli` plugin specs (`--plugin`). Plugin values
   * and `hooks` given here do not travel: the worker loads the workspace's plugins and command hooks as `rein run`
   * would. Resolves with the session id.
   */
  submit(options: SubmitOptions): Promise<string>;
  /** Rebuild a session from the log, resolve its in-doubt effects and continue it. */
  resumeSession(sessionId: string, options?: ResumeOptions): Promise<{ session: ReinSession; report: ResumeReport }>;
  /** Verify a session by replay; rejects with `DivergenceError` on the first differing seq. */
  replaySession(sessionId: string): Promise<ReplayCounts>;
  /** Fork a session at a step boundary; resolves with the new session id. */
  forkSession(sessionId: string, atSeq: number, options?: ForkOptions): Promise<string>;
  /**
   * What a stored session changed in the workspace (docs/replay.md: *Time travel*): every `workspace.changed` in log order,
   * one step's (`at`), one call's (`call`), and with `net` the session's net change. Read-only.
   */
  diff(sessionId: string, options?: DiffOptions): Promise<SessionDiff>;
  /**
   * Rewind a session to a seq: its workspace (`code`) and/or its conversation (`conversation`: a fork ending at that
   * step, to continue with `resumeSession`; no model is called); both when neither is given. The rewind is recorded in
   * the session's own log before any file changes and can be undone by rewinding to the record before it; a crash in
   * it is finished by the next rewind or resume. `REWIND_BUSY` when this harness is running the session,
   * `STORE_LOCKED` when another process is, `REWIND_CONFLICT` (nothing changed) when it would overwrite a change made
   * outside rein or needs a content never stored, unless `force`.
   */
  rewind(sessionId: string, options: RewindOptions): Promise<RewindResult>;
  /**
   * Two sessions side by side (a fork and its parent aligned at the fork point, any others turn by turn): outcome,
   * verifications, tokens, time, files changed, the first differing turn — what `rein compare` and the viewer show.
   */
  compare(a: string, b: string): Promise<SessionComparison>;
  /**
   * The store's sessions, oldest first (`status` filters). Page with `limit` and `after` (the id of the last session
   * of the previous page): `listSessions({ limit: 50 })`, then `listSessions({ limit: 50, after: page.at(-1)!.id })`.
   * On LevelDB a session is read once and then listed from the store's listing cache until its records change.
   */
  listSessions(options?: ListSessionsOptions): Promise<SessionSummary[]>;
  /** One session's summary, as `listSessions` lists it (a session queued for workers included); undefined when the store has none. */
  getSession(sessionId: string): Promise<SessionSummary | undefined>;
  /** The handle of a session this harness is running now (created, started or resumed here and not yet ended). */
  session(sessionId: string): ReinSession | undefined;
  /** Every session this harness is running now. */
  runningSessions(): ReinSession[];
  /** Live telemetry when `telemetry` was given: its counts, and a bounded flush for the end of the process. */
  readonly telemetry?: TelemetryHandle;
  /** Memory governance over this store: list, review, approve, reject, revoke, health (what `rein memory` drives). */
  readonly memory: MemoryGovernance;
  /** The loaded plugins and the hook kernel. */
  readonly plugins: ReinPlugins;
  /** Any stored session's records from `from` on, typed by their `type`: history first, then live appends (RxJS; never completes). */
  records(sessionId: string, from?: number): Observable<ReinRecord>;
  /**
   * Stop the plugins (each one's `stop`, in reverse load order; their contributions revoked) and record it —
   * `plugin.stopped`, or `plugin.failed` at phase `stop` — at the end of the log of every session this harness ran in
   * this process (created, started, or resumed without having ended before), once that session is quiet. Plugins live
   * as long as their harness, not one session: call this when the sessions are quiet and the harness is done (`rein
   * run`, `rein resume` and each session a worker runs do). A log that cannot be appended to (a worker that lost its
   * lease) does not get the record. Later calls do nothing.
   */
  stopPlugins(reason?: string): Promise<void>;
  /**
   * Interrupt every session with work running (effects aborted, each one resumable; one that only waits for a person
   * or a message is left waiting, recorded as nothing), wait until they are quiet, stop the plugins (`stopPlugins`),
   * then release every session (`session.release()`: another process may resume it at once). The store stays open:
   * the host that opened it closes it. Afterwards `createSession`, `startSession`, `resumeSession` and `submit` reject
   * with `HARNESS_CLOSED`, and a tool of a stopped plugin is refused unrun (a `ToolFailed` result).
   */
  close(reason?: string): Promise<void>;
}

/** Compose a harness from a store, a workspace and a provider. */
export const createRein = async (options: ReinOptions): Promise<Rein> => {
  const { services, workspace, clock, governance, capabilities, pluginHost, hooks } = await composeServices(options);
  const registry = new SessionRegistry();
  const stops = pluginStops({ pluginHost, store: options.store, clock });
  const telemetry: LiveTelemetry | undefined = options.telemetry ? (await import('./telemetry/live-telemetry.js')).createLiveTelemetry({ prices: services.prices, ...options.telemetry }) : undefined;
  const watched = (session: ReinSession, silentThrough = 0): ReinSession => {
    telemetry?.watch(session, { store: options.store, silentThrough });
    return session;
  };
  const { name, model, source } = options.provider;
  // After close(), nothing new starts here: its plugins are stopped and its sessions released.
  let closed = false;
  const open = <T>(what: string, work: () => Promise<T>): Promise<T> => (closed ? Promise.reject(new ReinError('HARNESS_CLOSED', `${what}: this harness was closed (rein.close()); create another with createRein`)) : work());
  return {
    store: options.store,
    workspace: workspace.root,
    provider: { name, ...(model === undefined ? {} : { model }), ...(source === undefined ? {} : { source }) },
    prices: services.prices,
    createSession: (sessionOptions) => open('createSession', async () => {
      const session = await createSession(services, sessionOptions);
      stops.remember(watched(registry.add(session, { createdHere: true })));
      return session;
    }),
    submit: (submitOptions) => open('submit', () => submitToWorkers(options, { workspace: workspace.root, clock }, submitOptions)),
    startSession: (sessionOptions) => open('startSession', async () => {
      const session = await createSession(services, sessionOptions);
      stops.remember(watched(registry.add(session, { createdHere: true })));
      await session.send(sessionOptions.task);
      return session;
    }),
    resumeSession: (sessionId, resumeOptions) => open('resumeSession', async () => {
      checkSessionId(sessionId);
      const before = telemetry ? await options.store.head(sessionId) : 0;
      const resumed = await resumeSession(services, sessionId, resumeOptions);
      watched(registry.add(resumed.session), before);
      // A session that had ended before recorded nothing of this process's plugins, so nothing of their stop either.
      if (!resumed.report.alreadyEnded) stops.remember(resumed.session);
      return resumed;
    }),
    replaySession: async (sessionId) => {
      checkSessionId(sessionId);
      const { verified, inputs, regenerated, head } = await replaySession(options.store, sessionId);
      return { verified, inputs, regenerated, head };
    },
    forkSession: (sessionId, atSeq, forkOptions) => forkSession(options.store, sessionId, atSeq, { clock, ...forkOptions }),
    diff: (sessionId, diffOptions) => diffSession(options.store, sessionId, diffOptions),
    rewind: async (sessionId, rewindOptions) => {
      if (registry.get(sessionId)) throw new ReinError('REWIND_BUSY', `session ${sessionId} is running in this harness: interrupt it (or wait until it is quiet and released) before rewinding it`);
      return rewindSession(options.store, { root: workspace.root, never: workspace.protectedList() }, sessionId, { clock, ...rewindOptions });
    },
    compare: (a, b) => compareSessions(options.store, a, b),
    listSessions: (listing) => listSessions(options.store, listing),
    getSession: async (sessionId) => {
      checkSessionId(sessionId);
      // A session submitted for a worker that has no record yet is the queue's: listed, so found here too.
      return (await summarizeSession(options.store, sessionId)) ?? (await summarizeQueued(options.store, sessionId));
    },
    session: (sessionId) => registry.get(sessionId),
    runningSessions: () => registry.list(),
    ...(telemetry ? { telemetry: { stats: () => telemetry.stats(), flush: (timeoutMs?: number) => telemetry.flush(timeoutMs), shutdown: (timeoutMs?: number) => telemetry.shutdown(timeoutMs) } } : {}),
    memory: createMemoryGovernance({ store: options.store, clock, log: governance }),
    // A session that does not exist is an error, not a tail that waits forever for a first record.
    records: (sessionId, from = 1) =>
      defer(async () => {
        checkSessionId(sessionId);
        if ((await options.store.head(sessionId)) === 0) throw new ReinError('SESSION_NOT_FOUND', `no session ${sessionId} in this store`);
        return options.store.tail(sessionId, from) as Observable<ReinRecord>;
      }).pipe(mergeAll()),
    plugins: {
      list: () => pluginHost.plugins(),
      tools: () => capabilities.describeTools(),
      providers: () => capabilities.providers(),
      commands: () => capabilities.commands(),
      hooks: () => hooks.list().map(({ id, point, kind, order, timeoutMs, failOpen }) => ({ id, point, kind, order, timeoutMs, failOpen })),
    },
    stopPlugins: (reason = 'the harness is done') => stops.stop(reason),
    close: async (reason = 'the host is shutting down') => {
      closed = true;
      const sessions = await registry.stopAll(reason);
      await stops.stop(reason);
      // Each session's hold of its stream ends here: another process may resume it at once.
      await Promise.all(sessions.map((session) => session.release().catch(() => undefined)));
    },
  };
};
