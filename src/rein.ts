import { defaultBudgets, type Budgets } from '../models/budgets.js';
import type { ModelOptions } from '../models/model-contract.js';
import type { EventStore } from '../stores/event-store.js';
import type { ReplayResult } from './host/replay.js';
import type { ModelProvider } from './providers/provider.js';
import { createSession, startSession, type CreateSessionOptions } from './session/start-session.js';
import { forkSession, type ForkOptions } from './session/fork-session.js';
import { replaySession } from './session/replay-session.js';
import { resumeSession, type ResumeOptions, type ResumeReport } from './session/resume-session.js';
import { listSessions, summarizeSession, type SessionSummary } from './session/session-catalog.js';
import type { ReinSession } from './session/session-handle.js';
import type { SessionServices } from './session/session-services.js';
import { defaultSystemPrompt } from './session/system-prompt.js';
import { PermissionPolicy, type PermissionsConfig } from './policy/permission-policy.js';
import { defaultSandboxPolicy, type SandboxPolicy } from './policy/sandbox-policy.js';
import { builtinTools } from './tools/builtin-tools.js';
import type { AnyToolDefinition } from './tools/tool.js';
import { ToolRegistry } from './tools/tool-registry.js';
import { Workspace } from './tools/workspace.js';
import { loadBlake3 } from './util/blake3.js';

export interface ReinOptions {
  /** The event log; `openLevelEventStore` for durable sessions, `createMemoryEventStore` for tests. */
  store: EventStore;
  /** The directory tools may read and write; it must exist. */
  workspace: string;
  provider: ModelProvider;
  /** Tools to register (default: the built-in local tools). */
  tools?: readonly AnyToolDefinition[];
  budgets?: Partial<Budgets>;
  systemPrompt?: string;
  modelOptions?: ModelOptions;
  /** Epoch-milliseconds clock used for record times and elapsed time (default `Date.now`). */
  clock?: () => number;
  /** Save a machine snapshot every this many records (default 500; 0 disables). */
  snapshotEvery?: number;
  /** Observations longer than this many characters are truncated into an artifact. */
  observationLimit?: number;
  /** Paths no tool may touch (default: `<workspace>/.rein`); pass the store directory when it lives elsewhere inside. */
  protectedPaths?: readonly string[];
  /** Permission mode and rules (default: mode `default`, no rules: read-only tools run, edits and commands ask). */
  permissions?: PermissionsConfig;
  /** Sandbox limits for `bash` (default: network disabled, 120 s timeout, env allow-list, output caps). */
  sandbox?: Partial<SandboxPolicy>;
}

/** A harness over one store, workspace and provider; it can run many sessions at once. */
export interface Rein {
  readonly store: EventStore;
  readonly workspace: string;
  /** Create a session without starting it (subscribe first, then `send` the task). */
  createSession(options: CreateSessionOptions): Promise<ReinSession>;
  /** Create a session and send its task. */
  startSession(options: CreateSessionOptions): Promise<ReinSession>;
  /** Rebuild a session from the log, resolve its in-doubt effects and continue it. */
  resumeSession(sessionId: string, options?: ResumeOptions): Promise<{ session: ReinSession; report: ResumeReport }>;
  /** Verify a session by replay; rejects with `DivergenceError` on the first differing seq. */
  replaySession(sessionId: string): Promise<ReplayResult>;
  /** Fork a session at a step boundary; resolves with the new session id. */
  forkSession(sessionId: string, atSeq: number, options?: ForkOptions): Promise<string>;
  listSessions(): Promise<SessionSummary[]>;
  getSession(sessionId: string): Promise<SessionSummary | undefined>;
}

/** Compose a harness from a store, a workspace and a provider. */
export const createRein = async (options: ReinOptions): Promise<Rein> => {
  await loadBlake3();
  const workspace = await Workspace.open(options.workspace, options.protectedPaths ? { protectedPaths: options.protectedPaths } : {});
  const clock = options.clock ?? Date.now;
  const services: SessionServices = {
    store: options.store,
    provider: options.provider,
    registry: new ToolRegistry(options.tools ?? builtinTools()),
    workspace,
    budgets: { ...defaultBudgets, ...options.budgets },
    clock,
    systemPrompt: options.systemPrompt ?? defaultSystemPrompt(workspace.root),
    modelOptions: options.modelOptions ?? {},
    snapshotEvery: options.snapshotEvery ?? 500,
    ...(options.observationLimit === undefined ? {} : { observationLimit: options.observationLimit }),
    permissions: new PermissionPolicy(options.permissions),
    sandbox: { ...defaultSandboxPolicy, ...options.sandbox },
  };
  return {
    store: options.store,
    workspace: workspace.root,
    createSession: (sessionOptions) => createSession(services, sessionOptions),
    startSession: (sessionOptions) => startSession(services, sessionOptions),
    resumeSession: (sessionId, resumeOptions) => resumeSession(services, sessionId, resumeOptions),
    replaySession: (sessionId) => replaySession(options.store, sessionId),
    forkSession: (sessionId, atSeq, forkOptions) => forkSession(options.store, sessionId, atSeq, { clock, ...forkOptions }),
    listSessions: () => listSessions(options.store),
    getSession: (sessionId) => summarizeSession(options.store, sessionId),
  };
};
