import type { RecordEnvelope } from '../../models/envelope.js';
import type { EffectKind, EffectResolution, ResumePolicy } from '../../models/effect.records.js';
import { refuseUnpricedModels } from './cost-budget.js';
import { SessionCreated } from '../../models/session.records.js';
import type { FactDraft } from '../../models/envelope.js';
import type { EffectExecutors, EffectRequest, EffectResumeCheck } from '../effects/effect.js';
import { rootPath } from '../host/root-path.js';
import { restoreSessionTree } from '../host/session-tree.js';
import { ReinError } from '../host/host-errors.js';
import { verifyStreamChain } from './verify-session.js';
import { readSessionRecords } from './read-session.js';
import { machineVersion } from '../host/machine-version.js';
import { createIdGenerator } from '../host/record-ids.js';
import { verifyRecords, type ReplayResult } from '../host/replay.js';
import { SessionHost } from '../host/session-host.js';
import { findInDoubt, type InDoubtEffect } from './in-doubt.js';
import { ReinSession } from './session-handle.js';
import { wireSession, type SessionServices } from './session-services.js';
import { sessionMemoryFor } from './session-memory-wiring.js';
import { CapabilityDeriver } from '../capabilities/capability-deriver.js';
import { SessionCapabilities } from '../capabilities/session-capabilities.js';
import { canonicalEqual } from '../host/canonical-equal.js';
import { sessionHooksFor } from './start-session.js';
import { sessionStopOf } from '../hooks/decide-point.js';
import { sandboxCheckedOf } from '../policy/sandbox-status.js';
import { sweepLeftBackground } from '../tools/protected-watch.js';
import { killStrayProcesses } from '../tools/process-runner.js';
import { restoredPolicy } from '../policy/permission-policy.js';
import { unmatchedRuleFacts } from '../policy/unmatched-rules.js';
import { forkForRetry, providerFailureOf } from './provider-retry.js';
import { finishPendingRewind } from '../changes/rewind-session.js';
import { entriesOf } from '../host/step-record.js';
import { raiseOf, refuseBudgetRaise } from './budget-raise.js';
import type { BudgetRaise } from '../../machines/session/session-budget.js';
import { listen } from '../host/record-taps.js';

export interface ResumeOptions {
  /** Rerun in-doubt effects whose policy is `require-user-confirmation` (the CLI's `--yes`). */
  confirmInDoubt?: boolean;
  /** Rerun these in-doubt effects (by effect id) even when their policy needs confirmation (an answer left in the queue). */
  confirmEffects?: readonly string[];
  /** Settle these in-doubt effects in doubt instead of waiting for a confirmation: a person declined to rerun them. */
  declineEffects?: readonly string[];
  /**
   * Ask about each in-doubt effect whose rerun needs a confirmation nothing above gave (one at a time, before anything
   * is recorded): `rerun` runs it again, `decline` settles it in doubt (the model is told its outcome is unknown),
   * `wait` leaves it awaiting confirmation. The CLI asks a person at the terminal.
   */
  confirm?: (inDoubt: { effectId: string; kind: EffectKind; actor: string; args: Record<string, unknown>; reason: string }) => Promise<'rerun' | 'decline' | 'wait'>;
  /** Allow continuing in a workspace other than the one the session was created in. */
  allowWorkspaceChange?: boolean;
  /**
   * A session a provider failure ended (`providerFailureOf`) is continued by a new attempt: a fork at the last durable
   * step before the failure (`forkForRetry`), resumed instead — the returned session is the fork, and
   * `report.retryOf` names the failed one, which stays `failed`. Other sessions resume as usual. The CLI's `rein
   * resume` does this.
   */
  retryProviderFailure?: boolean;
  /**
   * Raise the root's turn, tool-call, token or wall-time budget (the CLI's `--max-turns`, `--max-tool-calls`,
   * `--max-tokens`, `--max-wall-time`): `session.budgets-raised` is recorded before anything runs and each given limit
   * replaces the one in force. A session that ended `budget-exhausted` continues; an interrupted one (it had not
   * ended) goes on under the new limits. Refused with `BUDGET_NOT_RAISED`, nothing written, when the session ended
   * otherwise (completed, failed, cancelled), when a limit is not a whole number above what is already spent, or when a
   * budget not given is spent (a spent tool-call budget needs `maxToolCalls`; the wall time is measured by the clock).
   */
  budgets?: BudgetRaise;
}

/** What resume found and decided, for the CLI and the host app. */
export interface ResumeReport {
  /** Records the rebuild read and checked (the whole log, or the tail after the snapshot): as `rein replay` counts. */
  verified: number;
  /** Input records re-applied. */
  inputs: number;
  /** Derived records regenerated and found equal. */
  regenerated: number;
  snapshotSeq: number | undefined;
  snapshotRejected: string | undefined;
  /** Each in-doubt effect and how it was resolved, with the agent that requested it and its request's args. */
  resolutions: Array<{ effectId: string; kind: EffectKind; policy: ResumePolicy; resolution: EffectResolution; reason: string; actor: string; args: Record<string, unknown> }>;
  /** The last seq of the log the session was rebuilt from (resume's own records follow it). */
  head: number;
  alreadyEnded: boolean;
  /** Processes an earlier run of the session left running (found by their `REIN_CALL` marker) that resume killed. */
  strayProcessesKilled: number;
  /**
   * How the permission settings in force differ from those the session recorded at its start (which resume restores:
   * its mode and every rule), e.g. `mode plan → default (wider than the session started with)`, `adds allow write`.
   */
  permissionChanges: string[];
  /** With `retryProviderFailure`: the failed session this one is a new attempt of, and the model call it runs again. */
  retryOf?: { sessionId: string; effectId: string; code: string };
  /** The budgets this resume raised (`session.budgets-raised`): the limits in force from here on. */
  budgetsRaised?: BudgetRaise;
  /** A rewind of the session a crash interrupted, finished before the resume (docs/replay.md: *Time travel*). */
  rewindFinished?: { toSeq: number; paths: number; verified: boolean };
}

const resolve = (policy: ResumePolicy, confirmed: boolean, check: EffectResumeCheck | undefined): { resolution: EffectResolution; reason: string; observation?: string } => {
  if (policy === 'rerun-after-check') {
    if (!check) return { resolution: 'rerun', reason: 'safe to run again once the session is rebuilt' };
    if (check.resolution === 'awaiting-confirmation') return confirmed ? { resolution: 'rerun', reason: `rerun confirmed by the user (${check.reason})` } : { resolution: 'awaiting-confirmation', reason: `${check.reason}; rerunning it needs confirmation` };
    const { cleaned: _cleaned, ...decided } = check;
    return decided;
  }
  if (policy === 'require-user-confirmation') {
    // A check may refuse the rerun outright (the earlier processes still run); confirmation cannot override that.
    if (check?.resolution === 'failed-in-doubt') return { resolution: 'failed-in-doubt', reason: check.reason };
    const why = check ? ` (${check.reason})` : '';
    return confirmed ? { resolution: 'rerun', reason: `rerun confirmed by the user${why}` } : { resolution: 'awaiting-confirmation', reason: `its outcome is unknown and rerunning it needs confirmation${why}` };
  }
  if (policy === 'replay-from-event') return { resolution: 'failed-in-doubt', reason: 'no recorded result to replay' };
  return { resolution: 'failed-in-doubt', reason: 'this effect is never rerun automatically' };
};

const countsOf = (result: ReplayResult) => ({ verified: result.verified, inputs: result.inputs, regenerated: result.regenerated });

const rebuild = async (services: SessionServices, sessionId: string, records: readonly RecordEnvelope[]) => {
  const snapshot = await services.store.loadSnapshot(sessionId);
  let rejected: string | undefined;
  if (snapshot && snapshot.version !== machineVersion()) rejected = `snapshot version ${snapshot.version} differs from ${machineVersion()}`;
  // A snapshot stands in for the log only when this machine's key wrote it for the record its seq holds now.
  else if (snapshot && snapshot.authenticated === false) rejected = `snapshot at seq ${snapshot.seq} is not authenticated by this machine's chain key (written elsewhere, altered, or its record changed since)`;
  else if (snapshot) {
    try {
      const tree = restoreSessionTree(snapshot.data, services.inspect ? { inspect: services.inspect } : {});
      const tail = records.filter((record) => record.seq > snapshot.seq);
      // The capability deriver is not in the snapshot: fold the log up to it, then let the tail's replay go on.
      const capabilities = new CapabilityDeriver();
      for (const record of records) if (record.seq <= snapshot.seq) capabilities.observe(record);
      const result = verifyRecords(sessionId, tail, { tree, capabilities });
      return { tree: result.tree ?? tree, capabilities: result.capabilities, counts: countsOf(result), snapshotSeq: snapshot.seq as number | undefined, rejected, snapshotRejectedSeq: undefined as number | undefined };
    } catch (error) {
      if ((error as ReinError).code === 'REPLAY_DIVERGENCE') throw error;
      rejected = `snapshot at seq ${snapshot.seq} could not be restored: ${(error as Error).message}`;
    }
  }
  const result = verifyRecords(sessionId, records, services.inspect ? { inspect: services.inspect } : {});
  if (!result.tree) throw new ReinError('SESSION_INVALID', `${sessionId} has no session.created record`);
  return { tree: result.tree, capabilities: result.capabilities, counts: countsOf(result), snapshotSeq: undefined, rejected, snapshotRejectedSeq: snapshot?.seq };
};

/** Settle an in-doubt call whose effect the world already shows; a recorded file intent becomes the new baseline. */
const settleFromLog = (effect: InDoubtEffect, observation: string, records: readonly RecordEnvelope[]) => {
  const args = (effect.record.data as { args: Record<string, unknown> }).args;
  const callId = String(args.callId);
  const intent = (startedOf(effect, records)?.data as { intent?: { path?: unknown; before?: unknown; after?: unknown } } | undefined)?.intent;
  const written = typeof intent?.path === 'string' && typeof intent.after === 'string' ? [{ type: 'file.written', corr: callId, data: { callId, path: intent.path, hash: intent.after, before: typeof intent.before === 'string' ? intent.before : null } }] : [];
  return {
    type: 'tool.settled',
    data: { effectId: effect.effectId, callId, name: String(args.name), status: 'ok', observation, elapsedMs: 0 },
    corr: callId,
    ...(written.length > 0 ? { facts: written } : {}),
  };
};

/** The call's `tool.started` (a record of its own for a tool that changes anything; folded into a step record otherwise). */
const startedOf = (effect: InDoubtEffect, records: readonly RecordEnvelope[]): RecordEnvelope | undefined => {
  for (const record of records) {
    for (const entry of record.type === 'tool.started' || record.type === 'step.derived' ? entriesOf(record) : []) {
      if (entry.type === 'tool.started' && (entry.data as { effectId?: unknown }).effectId === effect.effectId) return entry;
    }
  }
  return undefined;
};

const requestOf = (effect: InDoubtEffect): EffectRequest => {
  const data = effect.record.data as { args: Record<string, unknown> };
  return { effectId: effect.effectId, kind: effect.kind, actor: effect.record.actor, args: data.args, recordId: effect.record.id };
};

const checkOf = async (executors: EffectExecutors, effect: InDoubtEffect, records: readonly RecordEnvelope[]): Promise<EffectResumeCheck | undefined> => {
  const executor = executors[effect.kind];
  if (!executor?.checkResume) return undefined;
  return executor.checkResume(requestOf(effect), startedOf(effect, records));
};

const settleInDoubt = (effect: InDoubtEffect, reason: string) => {
  const args = effect.record.data as { effectId: string; args: Record<string, unknown> };
  if (effect.kind === 'executeTool') {
    return {
      type: 'tool.settled',
      data: { effectId: effect.effectId, callId: String(args.args.callId), name: String(args.args.name), status: 'error', errorCode: 'InDoubt', observation: `InDoubt: this call was interrupted and its outcome is unknown (${reason}). Check the workspace before trying again.`, elapsedMs: 0 },
      corr: String(args.args.callId),
    };
  }
  return { type: 'effect.failed', data: { effectId: effect.effectId, error: { code: 'IN_DOUBT', message: reason }, elapsedMs: 0 } };
};

/** An in-doubt model call not run again because the wall time is spent: it failed, at a time past the budget. */
const modelCallNotRerun = (effect: InDoubtEffect, reason: string, elapsedMs: number) => {
  const args = (effect.record.data as { args: Record<string, unknown> }).args;
  return { type: 'model.failed', data: { effectId: effect.effectId, turn: Number(args.turn ?? 1), error: { code: 'cancelled', message: reason, retryable: false }, elapsedMs } };
};

/**
 * A tool call whose rerun a person confirmed carries that answer (an `allow-once` for this call alone), so the rerun
 * is not asked about again; a deny rule or plan mode still refuses it. The log's request is unchanged; the answer
 * shows in the rerun's `permission.decided` (source `user`) after the `effect.resolved` that says it was confirmed.
 */
const withConfirmation = (record: RecordEnvelope): RecordEnvelope => {
  const data = record.data as { effectId: string; kind: string; args: Record<string, unknown> };
  if (data.kind !== 'executeTool' || data.args.approval !== undefined) return record;
  return { ...record, data: { ...data, args: { ...data.args, approval: { approvalId: `${data.effectId}:rerun-confirmed`, decision: 'allow-once' } } } };
};

const policyOf = (executors: EffectExecutors, effect: InDoubtEffect): ResumePolicy => {
  const executor = executors[effect.kind];
  return executor ? executor.resumePolicy(requestOf(effect)) : 'never-rerun';
};

/**
 * Resume a session in this process: rebuild it from the log (snapshot + verified tail, or a full verified replay),
 * pass the resume gate, resolve every in-doubt effect by its kind's resume policy (logging `session.resumed` and
 * one `effect.resolved` each), and continue.
 */
export const resumeSession = async (services: SessionServices, sessionId: string, options: ResumeOptions = {}): Promise<{ session: ReinSession; report: ResumeReport }> => {
  const failure = options.retryProviderFailure ? await providerFailureOf(services.store, sessionId) : undefined;
  if (failure) {
    const retry = await forkForRetry(services.store, failure, { clock: services.clock });
    const resumed = await resumeSession(services, retry, { ...options, retryProviderFailure: false });
    return { ...resumed, report: { ...resumed.report, retryOf: { sessionId, effectId: failure.effectId, code: failure.code } } };
  }
  // Prove this process may write the stream before anything else: the in-doubt checks below act on the world (a
  // command an interrupted call left is killed), and a process still running the session must keep its commands.
  // Refused (`STORE_LOCKED`), nothing was checked, started or written. The log is read only once the hold is ours.
  const hold = await services.store.hold?.(sessionId);
  try {
    return await resumeHeld(services, sessionId, options, hold);
  } catch (error) {
    await hold?.();
    throw error;
  }
};

const resumeHeld = async (shared: SessionServices, sessionId: string, options: ResumeOptions, hold: (() => Promise<void>) | undefined): Promise<{ session: ReinSession; report: ResumeReport }> => {
  // A log this machine's key did not chain is never continued: appending to it would vouch for what someone else wrote
  // (`CHAIN_BROKEN`, `CHAIN_UNAUTHENTICATED`). A log written before the chain is continued, and its chain starts here.
  await verifyStreamChain(shared.store, sessionId, { allowUnchained: true });
  let records = await readSessionRecords(shared.store, sessionId);
  // A rewind a crash interrupted is finished before anything else (its records are facts: replay is unaffected).
  const sameWorkspace = (records[0]?.data as { workspace?: unknown } | undefined)?.workspace === shared.workspace.root;
  const rewound = shared.capture && sameWorkspace ? await finishPendingRewind(shared.store, { root: shared.workspace.root, never: shared.workspace.protectedList() }, sessionId, records, shared.clock) : undefined;
  if (rewound) records = await readSessionRecords(shared.store, sessionId);
  const first = records[0];
  if (!first) throw new ReinError('SESSION_NOT_FOUND', `no session ${sessionId} in this store`);
  if (first.type !== 'session.created') throw new ReinError('SESSION_INVALID', `${sessionId} does not start with session.created`);
  const created = SessionCreated.parse(first.data);
  // The session's own permission settings hold again: its mode and rules, with what this harness adds.
  const restored = restoredPolicy(created.permissions, shared.permissions);
  const services: SessionServices = { ...shared, permissions: restored.policy };
  if (!options.allowWorkspaceChange && created.workspace !== services.workspace.root) {
    throw new ReinError('RESUME_BLOCKED', `session ${sessionId} ran in ${created.workspace}, not ${services.workspace.root}`);
  }
  const rebuilt = await rebuild(services, sessionId, records);
  // A raise (of a spent budget, or of an interrupted session's) is checked against the rebuilt machine before anything
  // is recorded or started.
  const raise = raiseOf(options.budgets);
  if (raise) refuseBudgetRaise(sessionId, rebuilt.tree, raise, { elapsedMs: Math.max(0, services.clock() - first.at) });
  // The session ended, and stays so (a raised budget runs it again).
  const ended = rebuilt.tree.done && raise === undefined;
  const memory = sessionMemoryFor(services, sessionId);
  // What a background command planted after a process was killed outright (this session's, or another's) is removed
  // before today's catalog reads the workspace: the check that process's end would have run.
  const left = ended ? undefined : await sweepLeftBackground(services.workspace);
  const leftFacts: FactDraft[] = left && left.paths.length > 0 ? [{ type: 'workspace.cleaned', data: { paths: left.paths, reason: 'protected-path-created' } }] : [];
  // A session recorded before capabilities existed keeps its fixed tools (no catalog, no MCP servers, no skills).
  const capabilities = services.capabilities && rebuilt.capabilities.active && !ended ? await SessionCapabilities.open(services.capabilities, services.registry, rebuilt.capabilities) : undefined;
  const wiring = wireSession(services, created.tools, memory, sessionId, capabilities);
  for (const record of records) wiring.observe(record);
  // A cost budget given to this resume replaces the recorded one (recorded with `session.resumed`); the one in force
  // needs a price for every model that may answer.
  const maxCostUsd = ended ? undefined : services.budgets.maxCostUsd;
  if (!ended) refuseUnpricedModels(services.prices, [services.provider, ...(services.fallbacks ?? [])], maxCostUsd ?? wiring.budget.limitUsd);
  const head = records[records.length - 1]?.seq ?? 0;
  const host = new SessionHost({ store: services.store, stream: sessionId, tree: rebuilt.tree, head, createdAt: first.at, lastAt: records[records.length - 1]?.at ?? first.at, executors: wiring.executors, machineVersion: machineVersion(), clock: services.clock, newId: services.newRecordId ?? createIdGenerator(), snapshotEvery: services.snapshotEvery, parallelTools: services.parallelTools, ...(services.abandonGraceMs === undefined ? {} : { abandonGraceMs: services.abandonGraceMs }), lastSnapshotSeq: rebuilt.snapshotSeq ?? 0, statusHistory: records, ...(services.effectGate ? { effectGate: services.effectGate } : {}), ...(capabilities ? { capabilities: capabilities.deriver } : {}), stopReasonOf: sessionStopOf });
  listen(host.issued$, wiring.observe);
  memory?.attach(host);
  // Hooks recorded in the log are never run again: only records appended from here on reach the observers.
  const hooks = sessionHooksFor(services, sessionId, wiring, host);
  const session = new ReinSession(host, services.store, { ...(services.contextView ? { contextView: services.contextView } : {}), ...(memory ? { memory } : {}), ...(hooks ? { hooks } : {}), ...(capabilities ? { capabilities } : {}), ...(hold ? { hold } : {}), ...(wiring.capture ? { capture: wiring.capture } : {}) });
  const report: ResumeReport = { ...(rewound ? { rewindFinished: rewound } : {}), ...rebuilt.counts, snapshotSeq: rebuilt.snapshotSeq, snapshotRejected: rebuilt.rejected, resolutions: [], alreadyEnded: ended, head, strayProcessesKilled: 0, permissionChanges: restored.changes };
  // This process holds the session now: any process that carries its marker was left by an earlier run (a background
  // command, or a command of a process killed with SIGKILL outside bubblewrap) and is killed — in-doubt calls' own
  // processes first, by their checks below (which say so in their reasons), everything else here.
  const strays = async (): Promise<Record<string, number>> => {
    report.strayProcessesKilled = (await killStrayProcesses(sessionId)).length;
    return report.strayProcessesKilled > 0 ? { strayProcessesKilled: report.strayProcessesKilled } : {};
  };
  if (ended) {
    await strays();
    memory?.catchUp();
    return { session, report };
  }
  const heldByRaise: RecordEnvelope[] = [];
  if (raise) {
    // Recorded first: the machine leaves `budgetExhausted` for its next turn (an interrupted one keeps its state with
    // the new limits), and what follows (today's catalog, the in-doubt decisions — the wall time they are judged by
    // included — and the resume itself) is recorded on a running session.
    // Its next model call waits until the resume is recorded (started last, with the in-doubt reruns).
    await host.step({ type: 'session.budgets-raised', data: { ...raise }, holdEffects: (requests) => heldByRaise.push(...requests) });
    report.budgetsRaised = raise;
  }

  if (capabilities) {
    // Today's catalog (tools, skills, discovery policy) is an input when it differs from the recorded one; the
    // servers start again (connections of servers no longer configured are closed) before in-doubt calls are
    // judged: an MCP call's resume policy comes from its tool, which exists only once its server listed it.
    const catalog = capabilities.catalog(created.tools, services.permissions, services.provider.model, services.context?.contextWindow);
    if (!canonicalEqual(catalog, capabilities.deriver.recordedCatalog)) await host.step({ type: 'capability.catalog', data: catalog as unknown as Record<string, unknown> });
    for (const connection of rebuilt.tree.mcpConnections()) {
      const state = String(connection.value);
      if (state !== 'closed' && state !== 'failed' && !capabilities.configures(connection.context.server)) await host.step({ type: 'mcp.closed', actor: connection.context.path, data: { server: connection.context.server, reason: 'no longer configured' } });
    }
    capabilities.start((input) => host.step(input), () => rebuilt.tree.mcpConnections());
    await capabilities.ready();
    // A deny or ask rule for MCP tools (recorded, or added by this resume) that names none of them is said again.
    const unmatched = unmatchedRuleFacts(services.permissions.rules, capabilities.registry.names());
    if (unmatched.length > 0) await host.recordFacts(unmatched);
  }
  const inDoubt = findInDoubt(records, rebuilt.tree);
  // A hook asked to stop the session and the process ended before the cancellation was written: nothing reruns, the
  // session is cancelled now with the hook's reason (the hook does not run again).
  const stopped = records.reduce<string | undefined>((found, record) => found ?? sessionStopOf(record), undefined);
  if (stopped !== undefined) {
    const killed = await strays();
    await host.recordFacts([{ type: 'session.resumed', data: { fromSeq: head, inDoubt: inDoubt.map((effect) => effect.effectId), ...(rebuilt.snapshotSeq ? { snapshotSeq: rebuilt.snapshotSeq } : {}), ...killed } }, ...leftFacts]);
    await host.cancel(stopped);
    return { session, report };
  }
  // A session whose wall-time budget is spent cannot go on: an in-doubt model or tool call is not run again (no paid
  // model call, no command, no question to a person); it settles in doubt and the session ends `budget-exhausted`.
  const { budgets, startedAtMs } = rebuilt.tree.context;
  const elapsedMs = Math.max(0, services.clock() - first.at);
  const wallTimeSpent = elapsedMs - startedAtMs >= budgets.maxWallTimeMs;
  const decided = await Promise.all(
    inDoubt.map(async (effect) => {
      const policy = policyOf(wiring.executors, effect);
      const check = policy === 'rerun-after-check' || policy === 'require-user-confirmation' ? await checkOf(wiring.executors, effect, records) : undefined;
      const decided = resolve(policy, options.confirmInDoubt === true || (options.confirmEffects ?? []).includes(effect.effectId), check);
      // A rerun a person confirmed (it would have waited otherwise) is their answer for this call: it is not asked again.
      const confirmedByUser = decided.resolution === 'rerun' && resolve(policy, false, check).resolution === 'awaiting-confirmation';
      const declined = decided.resolution === 'awaiting-confirmation' && (options.declineEffects ?? []).includes(effect.effectId);
      const unaffordable = wallTimeSpent && (effect.kind === 'callModel' || effect.kind === 'executeTool') && (decided.resolution === 'rerun' || decided.resolution === 'awaiting-confirmation');
      const overridden = unaffordable
        ? { resolution: 'failed-in-doubt' as const, reason: `the session's wall-time budget of ${budgets.maxWallTimeMs} ms is spent, so it is not run again (${decided.reason})` }
        : declined ? { resolution: 'failed-in-doubt' as const, reason: `a person declined to rerun it (${decided.reason})` } : decided;
      return { effect, policy, cleaned: check?.cleaned ?? [], confirmedByUser: confirmedByUser && overridden === decided, ...overridden };
    }),
  );
  // What nothing above confirmed is asked about, one at a time (a person at a terminal answers them in order).
  for (const [index, entry] of decided.entries()) {
    if (entry.resolution !== 'awaiting-confirmation' || !options.confirm) continue;
    const answer = await options.confirm({ effectId: entry.effect.effectId, kind: entry.effect.kind, actor: entry.effect.record.actor, args: requestOf(entry.effect).args, reason: entry.reason });
    if (answer === 'rerun') decided[index] = { ...entry, resolution: 'rerun', confirmedByUser: true, reason: `rerun confirmed by the user (${entry.reason})` };
    else if (answer === 'decline') decided[index] = { ...entry, resolution: 'failed-in-doubt', reason: `a person declined to rerun it (${entry.reason})` };
  }
  const killed = await strays();
  const facts: FactDraft[] = [];
  if (rebuilt.rejected && rebuilt.snapshotRejectedSeq) facts.push({ type: 'snapshot.rejected', data: { seq: rebuilt.snapshotRejectedSeq, reason: rebuilt.rejected } });
  facts.push({ type: 'session.resumed', data: { fromSeq: head, inDoubt: inDoubt.map((effect) => effect.effectId), ...(rebuilt.snapshotSeq ? { snapshotSeq: rebuilt.snapshotSeq } : {}), ...killed, ...(maxCostUsd === undefined ? {} : { maxCostUsd }) } }, ...leftFacts);
  // The plugins this process loaded: a resumed session may run with other plugins than before, and the log says so.
  for (const fact of services.plugins?.journal() ?? []) facts.push({ type: fact.type, data: fact.data });
  // This process may isolate commands differently from the one that started the session: say how, once.
  facts.push({ type: 'sandbox.checked', data: await sandboxCheckedOf(services.sandbox) });
  for (const { effect, policy, resolution, reason, cleaned } of decided) {
    const corr = effect.record.corr ? { corr: effect.record.corr } : {};
    if (cleaned.length > 0) facts.push({ type: 'workspace.cleaned', data: { effectId: effect.effectId, ...(effect.record.corr ? { callId: effect.record.corr } : {}), paths: cleaned, reason: 'interrupted-write' }, ...corr });
    facts.push({ type: 'effect.resolved', data: { effectId: effect.effectId, kind: effect.kind, policy, resolution, reason }, ...corr });
  }
  await host.recordFacts(facts);
  // The policy in force now (permission flags, sandbox) is an input: later turns are checked against it. Every running
  // agent gets its own — a child's is the parent's narrowed to its mode — so a child whose approval the flags answer
  // reaches MutationReady on its next turn. A turn already open keeps the digest it started under (its CallSpec's).
  for (const agent of rebuilt.tree.agents()) {
    const active = wiring.policyDigestOf(agent.path);
    if (agent.mutationPolicyDigest !== active) await host.step({ type: 'policy.changed', actor: agent.path, data: { mutationPolicyDigest: active } });
  }
  report.resolutions = decided.map(({ effect, policy, resolution, reason }) => ({ effectId: effect.effectId, kind: effect.kind, policy, resolution, reason, actor: effect.record.actor, args: requestOf(effect).args }));

  for (const { effect, resolution, reason, observation, confirmedByUser } of decided) {
    if (resolution === 'rerun') host.startEffect(confirmedByUser ? withConfirmation(effect.record) : effect.record);
    else if (resolution === 'settled-from-log' && effect.kind === 'executeTool') {
      await host.step({ ...settleFromLog(effect, observation ?? reason, records), actor: effect.record.actor, cause: effect.record.id });
    } else if (resolution === 'failed-in-doubt' || resolution === 'settled-from-log') {
      const settlement = wallTimeSpent && effect.kind === 'callModel' ? modelCallNotRerun(effect, reason, elapsedMs) : settleInDoubt(effect, reason);
      await host.step({ ...settlement, actor: effect.record.actor, cause: effect.record.id });
    }
  }
  for (const request of heldByRaise) host.startEffect(request);
  if (rebuilt.tree.value === 'idle' && !records.some((record) => record.type === 'user.message' && record.actor === rootPath)) {
    await session.send(created.task);
  }
  return { session, report };
};
