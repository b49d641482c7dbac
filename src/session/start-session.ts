import { randomBytes } from 'node:crypto';
import type { RecordDraft } from '../../models/envelope.js';
import type { Budgets } from '../../models/budgets.js';
import { refuseUnpricedModels } from './cost-budget.js';
import { recordVersion } from '../../models/records.js';
import type { SessionCreated } from '../../models/session.records.js';
import { rootPath } from '../host/root-path.js';
import { createSessionTree } from '../host/session-tree.js';
import { ReinError } from '../host/host-errors.js';
import { checkSessionId } from './session-id.js';
import { checkBudgets } from '../rein-options-check.js';
import { machineVersion } from '../host/machine-version.js';
import { mutationPolicyDigestOf } from '../typestate/call-spec.js';
import { createIdGenerator } from '../host/record-ids.js';
import { SessionHost } from '../host/session-host.js';
import { sweepLeftBackground } from '../tools/protected-watch.js';
import { stepDraftOf, type DerivedDraft } from '../host/step-record.js';
import { sessionStatusOf } from '../host/session-status.js';
import type { ModelProvider } from '../providers/provider.js';
import { displayEndpoint } from '../providers/wire-format.js';
import { ReinSession } from './session-handle.js';
import { wireSession, type SessionServices, type SessionWiring } from './session-services.js';
import { SessionHooks } from '../hooks/session-hooks.js';
import { sessionStopOf } from '../hooks/decide-point.js';
import { isReservedStreamName } from '../memory/memory-stream.js';
import { sessionMemoryFor } from './session-memory-wiring.js';
import { SessionCapabilities } from '../capabilities/session-capabilities.js';
import { sandboxCheckedOf } from '../policy/sandbox-status.js';
import type * as z from 'zod';
import { outputFromJsonSchema, outputFromZod } from './output-schema.js';
import { listen } from '../host/record-taps.js';

/**
 * What a session records about a provider: its name, model and endpoint or source — never a key. A URL source is
 * reduced to origin and path (credentials, query and fragment dropped), whoever built the provider.
 */
const providerIdentity = (provider: ModelProvider): { name: string; model?: string; source?: string } => ({
  name: provider.name,
  ...(provider.model === undefined ? {} : { model: provider.model }),
  ...(provider.source === undefined ? {} : { source: /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(provider.source) ? displayEndpoint(provider.source) : provider.source }),
});

export interface CreateSessionOptions<Schema extends z.ZodType = z.ZodType<unknown>> {
  /** The task; recorded in `session.created` and sent as the first user message by `startSession`. */
  task: string;
  sessionId?: string;
  budgets?: Partial<Budgets>;
  /** Names of the tools visible to the model; defaults to every registered tool. */
  tools?: readonly string[];
  /**
   * A typed final answer: the session completes only with a final answer (a reply without tool calls) that is JSON
   * valid against this zod schema — an invalid one goes back to the model with the errors, at most
   * `maxOutputCorrections` times, then the session fails (`OUTPUT_INVALID`). The answer is `session.ended.output`, and
   * `session.output()` resolves with it typed as `z.infer<typeof schema>`. Its JSON Schema is recorded and shown to the model.
   */
  output?: Schema;
  /** The same as a JSON Schema object (what `rein run --output-schema <file>` reads); `output` wins when both are given. */
  outputSchema?: Record<string, unknown>;
  /**
   * A conversation (an editor's chat; `rein acp`): a final answer ends the turn, and the session waits for the next
   * message (`send`) instead of ending. Recorded in `session.created`.
   */
  conversation?: boolean;
}

const pad = (value: number): string => String(value).padStart(2, '0');

/** A readable, sortable, unique session id such as `s-20261125-214655-3f9a1c`. */
export const newSessionId = (now: number): string => {
  const date = new Date(now);
  const stamp = `${date.getUTCFullYear()}${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}-${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}`;
  return `s-${stamp}-${randomBytes(3).toString('hex')}`;
};

/**
 * What a session cannot start with (`USAGE`, writing nothing): a task that is not a non-blank string (it is the first
 * user message) and budgets `checkBudgets` refuses.
 */
export const checkSessionOptions = (options: { task?: unknown; budgets?: unknown }, where: string): void => {
  if (typeof options.task !== 'string' || options.task.trim() === '') throw new ReinError('USAGE', `${where}({ task }): the task must be a non-blank string, got ${JSON.stringify(options.task) ?? String(options.task)}`);
  checkBudgets(options.budgets, where);
};

/**
 * Create a session: build its actor tree, append `session.created` with the initial transition as the stream's
 * first batch, and return a handle. Nothing runs until a message is sent.
 */
export const createSession = async <Schema extends z.ZodType = z.ZodType<unknown>>(services: SessionServices, options: CreateSessionOptions<Schema>): Promise<ReinSession<z.infer<Schema>>> => {
  checkSessionOptions(options, 'createSession');
  if (options.sessionId !== undefined) checkSessionId(options.sessionId);
  // A schema that cannot be checked or shown is refused before anything is written.
  refuseUnpricedModels(services.prices, [services.provider, ...(services.fallbacks ?? [])], options.budgets?.maxCostUsd ?? services.budgets.maxCostUsd);
  const output = options.output ? outputFromZod(options.output) : options.outputSchema !== undefined ? outputFromJsonSchema(options.outputSchema, 'createSession({ outputSchema })') : undefined;
  const sessionId = options.sessionId ?? newSessionId(services.clock());
  if (isReservedStreamName(sessionId)) throw new ReinError('SESSION_INVALID', `${sessionId} is reserved for the workspace's memory`);
  // A session id already taken is found by the first append itself (expected head 0): no read of the head before it
  // (one query fewer per session on PostgreSQL, where a worker has just read it), and no race between that read and the append.
  // What a background command of a rein killed outright planted since its baseline goes before anything reads the
  // workspace (the skills of the catalog below): the check that rein's end would have run.
  const left = await sweepLeftBackground(services.workspace);
  const capabilities = services.capabilities ? await SessionCapabilities.open(services.capabilities, services.registry) : undefined;
  const registry = capabilities?.registry ?? services.registry;
  const created: SessionCreated = {
    sessionId,
    task: options.task,
    workspace: services.workspace.root,
    provider: { ...providerIdentity(services.provider), ...(services.fallbacks && services.fallbacks.length > 0 ? { fallbacks: services.fallbacks.map(providerIdentity) } : {}) },
    budgets: { ...services.budgets, ...options.budgets },
    tools: [...(options.tools ?? registry.names())],
    machine: { name: 'session', version: machineVersion() },
    policy: { mutationPolicyDigest: mutationPolicyDigestOf(services.permissions, services.sandbox) },
    permissions: services.permissions.recorded(),
    ...(output ? { output: { schema: output.jsonSchema } } : {}),
    ...(options.conversation ? { conversation: true as const } : {}),
  };
  const newId = services.newRecordId ?? createIdGenerator();
  const at = services.clock();
  const { tree, drafts } = createSessionTree(created, services.inspect ? { inspect: services.inspect } : {});
  const createdDraft: RecordDraft = { id: newId(), type: 'session.created', v: recordVersion('session.created'), at, actor: rootPath, data: created };
  // The plugins this process loaded (and those that failed) are part of the session's audit trail from its first batch.
  const plugins: RecordDraft[] = (services.plugins?.journal() ?? []).map((fact) => ({ id: newId(), type: fact.type, v: recordVersion(fact.type), at, actor: rootPath, cause: createdDraft.id, data: fact.data }));
  const sandbox = await sandboxCheckedOf(services.sandbox);
  const batch: RecordDraft[] = [
    createdDraft,
    stepDraftOf(newId(), createdDraft, drafts),
    { id: newId(), type: 'sandbox.checked', v: recordVersion('sandbox.checked'), at, actor: rootPath, cause: createdDraft.id, data: sandbox },
    ...plugins,
    ...(left.paths.length > 0 ? [{ id: newId(), type: 'workspace.cleaned', v: recordVersion('workspace.cleaned'), at, actor: rootPath, cause: createdDraft.id, data: { paths: left.paths, reason: 'protected-path-created' as const } }] : []),
  ];
  if (capabilities) {
    // The catalog is the session's second input, last in its first batch (after the sandbox and plugin facts): every
    // round's visible set derives from it, and its first capability.diff follows it directly.
    const catalog: RecordDraft = { id: newId(), type: 'capability.catalog', v: recordVersion('capability.catalog'), at, actor: rootPath, data: capabilities.catalog(created.tools, services.permissions, services.provider.model, services.context?.contextWindow) };
    const derived = capabilities.deriver.derive(catalog, tree.apply(catalog), () => tree.mcpConnections());
    batch.push(catalog, stepDraftOf(newId(), catalog, derived as DerivedDraft[]));
  }
  const status = sessionStatusOf(batch);
  const stored = await services.store.append(sessionId, batch, { expectedSeq: 0, ...(status === undefined ? {} : { status }) }).catch((error: unknown) => {
    throw (error as { code?: unknown }).code === 'STORE_CONFLICT' ? new ReinError('SESSION_INVALID', `session ${sessionId} already exists`, { cause: error }) : error;
  });
  // This process is the session's writer while it runs: another process's `resume` of it is refused (STORE_LOCKED).
  const hold = await services.store.hold?.(sessionId);
  const memory = sessionMemoryFor(services, sessionId);
  const wiring = wireSession(services, created.tools, memory, sessionId, capabilities, output ? { output } : {});
  for (const record of stored) wiring.observe(record);
  const host = new SessionHost({
    store: services.store,
    stream: sessionId,
    tree,
    head: stored[stored.length - 1]?.seq ?? 0,
    createdAt: at,
    executors: wiring.executors,
    machineVersion: machineVersion(),
    clock: services.clock,
    newId,
    snapshotEvery: services.snapshotEvery,
    parallelTools: services.parallelTools,
    ...(services.abandonGraceMs === undefined ? {} : { abandonGraceMs: services.abandonGraceMs }),
    statusHistory: stored,
    ...(services.effectGate ? { effectGate: services.effectGate } : {}),
    ...(capabilities ? { capabilities: capabilities.deriver } : {}),
    stopReasonOf: sessionStopOf,
  });
  listen(host.issued$, wiring.observe);
  memory?.attach(host);
  const hooks = sessionHooksFor(services, sessionId, wiring, host);
  await hooks?.sessionStarted(options.task);
  capabilities?.start((input) => host.step(input), () => tree.mcpConnections());
  return new ReinSession<z.infer<Schema>>(host, services.store, { ...(services.contextView ? { contextView: services.contextView } : {}), ...(memory ? { memory } : {}), ...(hooks ? { hooks } : {}), ...(capabilities ? { capabilities } : {}), ...(hold ? { hold } : {}), ...(wiring.capture ? { capture: wiring.capture } : {}), rules: services.permissions.rules });
};

/** The session-level hook points of a session, attached to its host (absent when no hook is configured). */
export const sessionHooksFor = (services: SessionServices, sessionId: string, wiring: SessionWiring, host: SessionHost): SessionHooks | undefined => {
  if (!services.hooks || services.hooks.size === 0) return undefined;
  const hooks = new SessionHooks(services.hooks, { sessionId, cwd: services.workspace.root, modeOf: (actor) => wiring.modeOf(actor), now: services.clock });
  hooks.attach(host);
  listen(host.records$, (record) => hooks.observe(record));
  return hooks;
};

/** Create a session and send its task as the first user message. */
export const startSession = async <Schema extends z.ZodType = z.ZodType<unknown>>(services: SessionServices, options: CreateSessionOptions<Schema>): Promise<ReinSession<z.infer<Schema>>> => {
  const session = await createSession(services, options);
  await session.send(options.task);
  return session;
};
