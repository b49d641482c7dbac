import { approvalIdOf, type ApprovalRequested, type DenialSource, type PermissionSource } from '../../models/permission.records.js';
import type { ApprovalOutcome } from '../../machines/permission.machine.js';
import type { BlobStore } from '../../stores/blob-store.js';
import type { FactDraft } from '../../models/envelope.js';
import { repairInput } from '../policy/input-repair.js';
import { suggestRule, type PermissionPolicy, type PermissionSubject } from '../policy/permission-policy.js';
import type { SandboxPolicy } from '../policy/sandbox-policy.js';
import { invalidInputMessage, issuesOf } from './invalid-input.js';
import { defaultObservationLimit, failureOutcome, truncateObservation, type ToolOutcome } from './observation.js';
import type { SessionToolState } from './session-tool-state.js';
import type { AnyToolDefinition, Prepared, ToolContext, ToolFailure, ToolResult } from './tool.js';
import { osFailureOf, thrownFailure } from './os-errors.js';
import { toolResultOf } from './tool-defaults.js';
import { StoreError } from '../../stores/store-errors.js';
import { describeArgumentProblems } from './argument-hygiene.js';
import type { ArgumentProblem } from '../../models/model.records.js';
import type { ToolRegistry } from './tool-registry.js';
import type { Workspace } from './workspace.js';
import type { MemoryProposed } from '../../models/memory.records.js';
import type { ToolMemoryProvider } from './tool-memory.js';
import type { DelegationScope } from '../delegation/actor-rights.js';
import type { AgentCapabilities } from '../capabilities/agent-capabilities.js';
import type { HookKernel } from '../hooks/hook-kernel.js';
import { decidePoint } from '../hooks/decide-point.js';
import { isAborted, whenAborted, type Abortable } from '../effects/abort-hooks.js';
import type { GuardrailEvidence } from '../../models/turn.records.js';

/** One tool call as the pipeline receives it; `approval` is a person's answer carried by a re-requested call. */
export interface PipelineCall {
  effectId: string;
  callId: string;
  actor: string;
  name: string;
  arguments: Record<string, unknown>;
  approval?: ApprovalOutcome;
  /** Values the runtime replaced before recording the call (non-finite numbers, lone surrogates): it is refused. */
  invalid?: readonly ArgumentProblem[];
  /** The turn's `pre_flight` guardrail blocked it: the call is refused before anything else. */
  preFlight?: { by?: string; reason: string };
  /**
   * The reply proposed more calls than the agent's tool-call budget had left, and this one is past it: refused unrun.
   * `delegated`: calls of the budget the agent's children made; `share`: the agent is a child, its budget is its share
   * of what its parent had left.
   */
  budget?: { maxToolCalls: number; proposed: number; left: number; delegated?: number; share?: boolean };
  /** The reply proposed more calls than the turn's parallel limit, and this one is past it: refused unrun. */
  parallel?: { maxBranches: number; proposed: number };
}

/** What the pipeline works with for one session. */
export interface PipelineEnvironment {
  registry: ToolRegistry;
  policy: PermissionPolicy;
  /**
   * Whether the session may see the tool this round (its tool list and the policy's visibility); `denial` names
   * the policy that hides a tool of the session (a call to it is denied, not unknown).
   */
  visibility(tool: AnyToolDefinition): Visibility;
  state: SessionToolState;
  workspace: Workspace;
  blobs: BlobStore;
  sandbox: SandboxPolicy;
  observationLimit?: number;
  /** The session's memory for tools (`memory_read`, `memory_write`); absent without memory. */
  memory?: ToolMemoryProvider;
  /** The calling agent's rights for `delegate_task` (absent: delegation is not available). */
  delegation?: DelegationScope;
  /** The session's capabilities as this agent sees them (`tool_search`, `skill`). */
  capabilities?: AgentCapabilities;
  /** The hook kernel: `preToolUse`, the input and output guardrails and `postToolUse` run here, for every call. */
  hooks?: HookKernel;
}

/** Per-call hooks from the effect runtime. */
export interface PipelineRun extends Abortable {
  sessionId: string;
  /** The call's cancellation; the host's is made on first read, so the pipeline reads it through `isAborted` and `whenAborted`. */
  signal: AbortSignal;
  /** A tool that does not stop within this many ms of `signal`'s abort is abandoned (settles `Cancelled`). */
  abandonGraceMs?: number;
  now(): number;
  /** Append facts as one synced batch: called before a tool that changes anything runs. */
  persist(facts: readonly FactDraft[]): Promise<void>;
  progress(message: string): void;
  /** Append facts about the call after it settled (a background command's end); absent where nothing records. */
  recordLater?(facts: readonly FactDraft[]): Promise<void>;
}

/**
 * The call ended (`settled`), needs a person first (`ask`), or was handed on (`continue`: its effect settles with
 * `input`, and its terminal result comes later from a machine); `facts` are written with the settling input.
 */
export type PipelineOutcome =
  | { kind: 'settled'; outcome: ToolOutcome; facts: FactDraft[] }
  | { kind: 'ask'; request: Omit<ApprovalRequested, 'elapsedMs'>; facts: FactDraft[] }
  | { kind: 'continue'; input: { type: string; data: Record<string, unknown> }; facts: FactDraft[] };

/** What the visibility stage says about one tool. */
export type Visibility = { visible: true } | { visible: false; reason: string; denial?: DenialSource };

/**
 * A tool call's context. A class, not an object literal: its `signal` is the run's, made on its first read (a tool that
 * never looks at it costs no AbortSignal), and a getter in a literal is defined at run time (~1.5 µs each in Node 20).
 * The run is held in a private field, so a tool listing the context's keys sees what it saw before.
 */
class CallToolContext implements ToolContext {
  readonly #run: PipelineRun;
  readonly sessionId: string;
  readonly callId: string;
  readonly workspace: Workspace;
  readonly blobs: BlobStore;
  readonly baselines: ReadonlyMap<string, string>;
  readonly artifacts: ReadonlySet<string>;
  readonly sandbox: SandboxPolicy;
  readonly outputBudget: number;
  readonly progress: (message: string) => void;
  readonly executions: ToolContext['executions'];
  readonly verifications: ToolContext['verifications'];
  recordLater?: ToolContext['recordLater'];
  memory?: ToolContext['memory'];
  delegation?: ToolContext['delegation'];
  capabilities?: ToolContext['capabilities'];

  constructor(run: PipelineRun, callId: string, environment: PipelineEnvironment, baselines: ReadonlyMap<string, string>, artifacts: ReadonlySet<string>, progress: (message: string) => void, executions: ToolContext['executions'], verifications: ToolContext['verifications']) {
    this.#run = run;
    this.sessionId = run.sessionId;
    this.callId = callId;
    this.workspace = environment.workspace;
    this.blobs = environment.blobs;
    this.baselines = baselines;
    this.artifacts = artifacts;
    this.sandbox = environment.sandbox;
    this.outputBudget = environment.observationLimit ?? defaultObservationLimit;
    this.progress = progress;
    this.executions = executions;
    this.verifications = verifications;
  }

  get signal(): AbortSignal {
    return this.#run.signal;
  }
}

/** Who denied a call at the permission stage: a person, the mode, or a rule. */
const denialSourceOf = (source: PermissionSource): DenialSource => (source === 'user' ? 'user' : source === 'mode' ? 'mode' : 'rule');

/** A call cancelled before anything of it ran, saying why when the abort does (the wall-time budget ran out). */
const cancelledBeforeStart = (name: string, signal: AbortSignal, more = '') => {
  const reason: unknown = signal.reason;
  const why = reason instanceof Error && reason.name !== 'AbortError' ? ` (${reason.message})` : '';
  return { ...failureOutcome('Cancelled', `${name} was cancelled before it started${why}${more}`), failedStage: 'cancelled' as const };
};

/**
 * Run a tool within its `timeoutMs` (a `Timeout` result when it does not finish in time) and abandon it when it does
 * not stop within `graceMs` of its cancellation (the wall-time budget, an interrupt, a cancel, a close): it settles
 * `Cancelled` then, whatever it still does, so budgets, cancel and close always finish.
 */
const withTimeout = (work: (signal: AbortSignal | undefined) => Promise<ToolResult>, run: Abortable, timeoutMs: number | undefined, graceMs: number | undefined): Promise<ToolResult> => {
  if (timeoutMs === undefined && graceMs === undefined) return work(undefined);
  // With a timeout the tool's signal is its own controller's, aborted by the timer or (forwarded, with its reason) by
  // the run's: one hook, where `AbortSignal.any` costs several times more. Without one the tool gets the run's signal
  // (`undefined` here: it is made only if the tool reads it). The waits hook the run's abort, not its signal.
  const own = timeoutMs === undefined ? undefined : new AbortController();
  // One promise settled by whichever comes first (the work, the timeout, the grace after an abort): no Promise.race,
  // and no async function or `finally` around it; whichever settles first clears the others.
  return new Promise<ToolResult>((resolve, reject) => {
    let handle: ReturnType<typeof setTimeout> | undefined;
    let grace: ReturnType<typeof setTimeout> | undefined;
    let unforward: (() => void) | undefined;
    let unhook: (() => void) | undefined;
    const end = (): void => {
      if (handle !== undefined) clearTimeout(handle);
      if (grace !== undefined) clearTimeout(grace);
      unforward?.();
      unhook?.();
    };
    if (own) {
      handle = setTimeout(() => {
        resolve({ ok: false, code: 'Timeout', message: `the tool did not finish within ${timeoutMs} ms and was stopped` });
        own.abort();
        end();
      }, timeoutMs);
      unforward = whenAborted(run, () => own.abort(run.signal.reason));
    }
    if (graceMs !== undefined) {
      unhook = whenAborted(run, () => {
        grace = setTimeout(() => {
          resolve({ ok: false, code: 'Cancelled', message: `the tool was cancelled${reasonOf(run.signal)} and did not stop within ${graceMs} ms: it was abandoned (what it still does is not awaited)` });
          end();
        }, graceMs);
      });
    }
    work(own?.signal).then(
      (result) => {
        end();
        resolve(result);
      },
      (error: unknown) => {
        end();
        reject(error);
      },
    );
  });
};

const reasonOf = (signal: AbortSignal): string => {
  const reason: unknown = signal.reason;
  return reason instanceof Error && reason.name !== 'AbortError' ? ` (${reason.message})` : '';
};

const riskText = (tool: AnyToolDefinition, subject: PermissionSubject | undefined, sandbox: SandboxPolicy): string => {
  const classes = subject?.classes && subject.classes.length > 0 ? ` (${subject.classes.join(', ')})` : '';
  if (tool.risk === 'execute') return `execute${classes}: runs ${sandbox.mode === 'off' ? 'without the OS sandbox' : sandbox.mode === 'required' ? 'only in the sandbox' : 'in the sandbox where bubblewrap works'}, network ${sandbox.network}, timeout ≤ ${Math.round(sandbox.maxTimeoutMs / 1000)} s, output capped`;
  // An MCP server acts with its own permissions (on the host unless it runs in the sandbox): say what the call names.
  if (tool.name.startsWith('mcp__')) return `${tool.risk}: the MCP server ${tool.annotations.readOnly ? 'reads' : tool.risk === 'network' ? 'reaches out with' : 'changes'} ${subject?.target ?? 'what its arguments name'}${tool.annotations.destructive ? ' (it may be destructive)' : ''}`;
  if (tool.risk === 'write') return `write: changes ${subject?.target ?? 'a file'} in the workspace`;
  return `${tool.risk}${classes}`;
};

/**
 * Run one call through the tool boundary: lookup → visibility → input repair → schema validation → runtime
 * validation → permission → execute → normalise → truncate-to-artifact → observation. Every deciding stage adds a
 * fact (`tool.rejected`, `tool.repaired`, `tool.validated`, `permission.decided`, `tool.started`, `file.*`). For a
 * tool that changes anything, the facts so far and `tool.started` are persisted (synced) before it runs; the rest
 * come back in `facts`. Model-correctable problems are outcomes, and so is an operating-system error a tool met
 * (mapped by errno in `os-errors.ts`: EACCES, ENOENT, ENAMETOOLONG, …); any other exception thrown by a tool
 * propagates (an infrastructure failure stops the turn).
 */
export const runToolPipeline = async (environment: PipelineEnvironment, call: PipelineCall, run: PipelineRun): Promise<PipelineOutcome> => {
  const facts: FactDraft[] = [];
  const note = (type: string, data: Record<string, unknown>) => facts.push({ type, data: { effectId: call.effectId, callId: call.callId, name: call.name, ...data }, corr: call.callId, at: run.now() });
  const settle = (outcome: ToolOutcome): PipelineOutcome => ({ kind: 'settled', outcome, facts });
  const refuse = (stage: NonNullable<ToolOutcome['failedStage']>, outcome: ToolOutcome): PipelineOutcome => settle({ ...outcome, failedStage: stage });
  const { registry, policy, state } = environment;
  const kernel = environment.hooks;
  const evidence: GuardrailEvidence[] = [];
  const withEvidence = (outcome: ToolOutcome): ToolOutcome => (evidence.length > 0 ? { ...outcome, guardrails: [...evidence] } : outcome);

  if (call.parallel) {
    const { maxBranches, proposed } = call.parallel;
    const message = `${call.name} was not run: at most ${maxBranches} tool calls of one reply run, and this reply proposed ${proposed}; the first ${maxBranches} ran (or were considered). Make the remaining calls in a later reply.`;
    note('tool.rejected', { stage: 'parallel', code: 'parallel_limit_exceeded', errorCode: 'Denied', message });
    return refuse('parallel', { ...failureOutcome('Denied', message), denial: { source: 'budget', rule: `parallel-call limit ${maxBranches}`, reason: message } });
  }

  if (call.budget) {
    const { maxToolCalls, proposed, left, delegated, share } = call.budget;
    const whose = share ? `its tool-call budget of ${maxToolCalls} (this child's share of what its parent had left; children share their parent's budgets)` : `the session's tool-call budget of ${maxToolCalls}`;
    const byChildren = delegated ? ` (${delegated} of them ${delegated === 1 ? 'was' : 'were'} made by delegated children)` : '';
    const message = `${call.name} was not run: ${whose}${byChildren} allowed ${left === 0 ? 'no more calls' : `only the first ${left} of this reply's ${proposed} calls`}; ${share ? 'this agent ends' : 'the session ends'} once this turn's calls have settled`;
    note('tool.rejected', { stage: 'budget', code: 'tool_call_budget_exhausted', errorCode: 'Denied', message });
    return refuse('budget', { ...failureOutcome('Denied', message), denial: { source: 'budget', rule: `tool-call budget ${maxToolCalls}`, reason: message } });
  }

  if (call.preFlight) {
    note('tool.rejected', { stage: 'pre-flight', code: 'guardrail_blocked', errorCode: 'Denied', message: call.preFlight.reason });
    return refuse('pre-flight', { ...failureOutcome('Denied', `the turn's pre-flight guardrail${call.preFlight.by ? ` ${call.preFlight.by}` : ''} blocked its calls: ${call.preFlight.reason}. Nothing was run.`), denial: { source: 'guardrail', rule: call.preFlight.by ?? null, reason: call.preFlight.reason } });
  }

  const tool = registry.get(call.name);
  if (!tool) {
    const message = `unknown tool ${JSON.stringify(call.name)}; available tools: ${registry.names().filter((name) => environment.visibility(registry.get(name)!).visible).join(', ')}`;
    note('tool.rejected', { stage: 'lookup', code: 'unknown_tool', errorCode: 'InvalidInput', message });
    return refuse('lookup', failureOutcome('InvalidInput', message));
  }
  const visible = environment.visibility(tool);
  if (!visible.visible) {
    const message = `${tool.name} is not available in this session: ${visible.reason}`;
    note('tool.rejected', { stage: 'visibility', code: 'tool_not_visible', errorCode: 'Denied', message });
    return refuse('visibility', { ...failureOutcome('Denied', message), ...(visible.denial ? { denial: { source: visible.denial, reason: visible.reason } } : {}) });
  }

  if (call.invalid && call.invalid.length > 0) {
    // Arguments no log can hold faithfully were replaced when the call was recorded: refuse it, naming each field.
    note('tool.validated', { ok: false, issues: call.invalid.map((entry) => ({ path: entry.path, code: entry.problem, message: describeArgumentProblems([entry]) })) });
    return refuse('schema', failureOutcome('InvalidInput', `${tool.name}: ${describeArgumentProblems(call.invalid)}`));
  }

  const repaired = repairInput(call.arguments, registry.fieldTypesOf(tool.name));
  const parsed = tool.parameters.safeParse(repaired.arguments);
  if (!parsed.success) {
    // Never repair while other problems remain: report the arguments as the model sent them.
    const original = repaired.repairs.length > 0 ? tool.parameters.safeParse(call.arguments) : parsed;
    const issues = issuesOf((original.success ? parsed : original).error!.issues);
    note('tool.validated', { ok: false, issues });
    return refuse('schema', failureOutcome('InvalidInput', invalidInputMessage(tool.name, issues, call.arguments)));
  }
  if (repaired.repairs.length > 0) note('tool.repaired', { repairs: repaired.repairs });
  note('tool.validated', { ok: true });
  // Folded into `tool.started` when the call starts (a refusal keeps it as a record of its own).
  const validatedFact = facts[facts.length - 1]!;

  const proposals: MemoryProposed[] = [];
  const memory = environment.memory?.forCall({ actor: call.actor, callId: call.callId }, (candidate) => proposals.push(candidate));
  // Built key by key: a literal of conditional spreads took V8's slow path on every call.
  const context: ToolContext = new CallToolContext(run, call.callId, environment, state.baselines, state.artifacts, run.progress, state.executionsOf(call.actor), state.verificationsOf(call.actor));
  if (run.recordLater) context.recordLater = (type: string, data: Record<string, unknown>) => run.recordLater!([{ type, data: { effectId: call.effectId, callId: call.callId, ...data }, corr: call.callId, at: run.now() }]);
  if (memory) context.memory = memory;
  if (environment.delegation) context.delegation = environment.delegation;
  if (environment.capabilities) context.capabilities = environment.capabilities;
  // What a tool throws is a failure the model reads: an operating-system error it ran into (a path too long, a
  // directory it may not write) mapped by errno, anything else `ToolFailed` recorded with the error's class. Only the
  // store failing under it (a `StoreError`: the log itself cannot go on) propagates and fails the session.
  const guarded = async <T>(work: () => Promise<T>): Promise<T | ToolFailure> => {
    try {
      return await work();
    } catch (error) {
      if (error instanceof StoreError) throw error;
      return osFailureOf(error, { arguments: parsed.data as Record<string, unknown>, workspace: environment.workspace.root }) ?? thrownFailure(tool.name, error, run.signal);
    }
  };
  const prepared: Prepared<unknown> = tool.prepare ? await guarded(() => tool.prepare!(parsed.data, context)) : { ok: true as const, plan: undefined };
  for (const extra of prepared.notes ?? []) facts.push({ type: extra.type, data: { effectId: call.effectId, callId: call.callId, ...extra.data }, corr: call.callId, at: run.now() });
  if (!prepared.ok) {
    note('tool.rejected', { stage: 'runtime-validation', code: prepared.reason ?? 'runtime_precondition_failed', errorCode: prepared.code, message: prepared.message });
    return refuse('runtime-validation', failureOutcome(prepared.code, `${tool.name}: ${prepared.message}`));
  }
  if (prepared.repairs && prepared.repairs.length > 0) note('tool.repaired', { repairs: prepared.repairs });

  let input = parsed.data as Record<string, unknown>;
  let plan: unknown = prepared.plan;
  let subject = prepared.subject;
  let intent = prepared.intent;
  const base = { sessionId: run.sessionId, actor: call.actor, cwd: environment.workspace.root, mode: policy.mode };
  const hookTool = (args: Record<string, unknown>) => ({ name: tool.name, input: args, callId: call.callId, effectId: call.effectId, risk: tool.risk, readOnly: tool.annotations.readOnly });
  const callSubject = { effectId: call.effectId, callId: call.callId, tool: tool.name };
  let hookAsk: string | undefined;
  // preToolUse: after validation, before permission, in every mode; a hook can only narrow what permission allows.
  if (kernel?.has('preToolUse', tool.name)) {
    const { decided, fact } = await decidePoint({
      kernel,
      point: 'preToolUse',
      subject: callSubject,
      input: { ...base, point: 'preToolUse', tool: hookTool(input) },
      signal: run.signal,
      now: run.now,
      recorded: state.hookDecisions.get(`${call.effectId}|preToolUse`),
      original: input,
      amend: (current, amended) => ({ ...current, tool: { ...(current.tool as Record<string, unknown>), input: amended } }),
    });
    if (fact) facts.push(fact);
    if (decided.decision === 'deny') return refuse('hook', { ...failureOutcome('Denied', `${decided.reason ?? 'denied by a hook'} (hook ${decided.decidedBy ?? 'unknown'}). Nothing was run.`), denial: { source: 'hook', rule: decided.decidedBy ?? null, reason: decided.reason ?? 'denied by a hook' } });
    if (decided.decision === 'amend' && decided.amended) {
      const reparsed = tool.parameters.safeParse(decided.amended);
      if (!reparsed.success) return refuse('hook', failureOutcome('Denied', `hook ${decided.decidedBy ?? 'unknown'} rewrote the input into one ${tool.name} refuses (${issuesOf(reparsed.error.issues).map((issue) => `${issue.path || '(root)'}: ${issue.message}`).join('; ')}). Nothing was run.`));
      const reprepared = tool.prepare ? await tool.prepare(reparsed.data, context) : { ok: true as const, plan: undefined };
      if (!reprepared.ok) return refuse('hook', failureOutcome(reprepared.code, `hook ${decided.decidedBy ?? 'unknown'} rewrote the input and ${tool.name} refuses it: ${reprepared.message}. Nothing was run.`));
      input = reparsed.data as Record<string, unknown>;
      plan = reprepared.plan;
      subject = reprepared.subject;
      intent = reprepared.intent;
    }
    if (decided.decision === 'ask' && !(call.approval && call.approval.decision !== 'deny')) hookAsk = decided.reason ?? 'a hook asks for approval';
  }
  if (kernel?.has('guardrail.input', tool.name)) {
    const { decided, fact } = await decidePoint({ kernel, point: 'guardrail.input', subject: callSubject, input: { ...base, stage: 'input', tool: hookTool(input) }, signal: run.signal, now: run.now, recorded: state.hookDecisions.get(`${call.effectId}|guardrail.input`) });
    if (fact) facts.push(fact);
    const blocked = decided.decision === 'block';
    evidence.push({ stage: 'input', verdict: blocked ? 'block' : 'pass', ...(decided.decidedBy ? { by: decided.decidedBy } : {}) });
    if (blocked) return refuse('guardrail', withEvidence({ ...failureOutcome('Denied', `input guardrail ${decided.decidedBy ?? 'unknown'} blocked this call: ${decided.reason ?? 'no reason given'}. Nothing was run.`), denial: { source: 'guardrail', rule: decided.decidedBy ?? null, reason: decided.reason ?? 'blocked by a guardrail' } }));
  }

  const decision = policy.decide({ tool, ...(subject ? { subject } : {}), ...(call.approval ? { approval: call.approval } : {}), grants: state.grants });
  // A hook's ask turns an allow into a question; a deny (a rule, the mode, a person) still wins.
  const verdict = hookAsk !== undefined && decision.decision === 'allow' ? { ...decision, decision: 'ask' as const, reason: `${hookAsk} (a preToolUse hook asks)` } : decision;
  // The decision's fields in the order the record keeps (built key by key, not by conditional spreads).
  const permissionOf = (): Record<string, unknown> => {
    const data: Record<string, unknown> = {};
    if (subject?.target !== undefined) data['target'] = subject.target;
    data['decision'] = verdict.decision;
    data['rule'] = verdict.rule;
    data['reason'] = verdict.reason;
    data['mode'] = policy.mode;
    data['source'] = verdict.source;
    if (subject?.classes) data['classes'] = [...subject.classes];
    return data;
  };
  const decidedData: Record<string, unknown> = { effectId: call.effectId, callId: call.callId, tool: tool.name };
  Object.assign(decidedData, permissionOf());
  const decided: FactDraft = { type: 'permission.decided', corr: call.callId, at: run.now(), data: decidedData };
  facts.push(decided);
  if (verdict.decision === 'deny') {
    const message = verdict.source === 'user' ? `${verdict.reason}. Nothing was run; do not retry the same call unchanged.` : `${verdict.reason}. Nothing was run.`;
    return refuse('permission', withEvidence({ ...failureOutcome('Denied', message), denial: { source: denialSourceOf(verdict.source), rule: verdict.rule, reason: verdict.reason } }));
  }
  // A call cancelled already (the session's wall-time budget is spent) asks nobody: a yes could only be thrown away.
  if (verdict.decision === 'ask' && isAborted(run)) return settle(cancelledBeforeStart(tool.name, run.signal, '; nobody was asked to approve it'));
  if (verdict.decision === 'ask') {
    const description = typeof input.description === 'string' ? `${input.description}: ` : '';
    return {
      kind: 'ask',
      facts,
      request: {
        effectId: call.effectId,
        callId: call.callId,
        approvalId: approvalIdOf(call.actor, call.effectId),
        tool: tool.name,
        arguments: call.arguments,
        ...(subject?.target === undefined ? {} : { target: subject.target }),
        summary: `${description}${tool.name}${subject?.target === undefined ? '' : ` ${subject.target}`}${subject?.details === undefined ? '' : ` (${subject.details})`}`.slice(0, 500),
        risk: riskText(tool, subject, environment.sandbox),
        reason: verdict.reason,
        suggestedRule: suggestRule(tool, subject),
        ...(subject?.classes ? { classes: [...subject.classes] } : {}),
      },
    };
  }

  if (isAborted(run)) return settle(cancelledBeforeStart(tool.name, run.signal));
  // The checks that let the call start are folded into its start: its validation, and the mode's plain allow (a
  // rule's, a grant's, a person's or a pre-approval's decision keeps its own record).
  const plainAllow = verdict.decision === 'allow' && verdict.source === 'mode';
  for (const folded of plainAllow ? [validatedFact, decided] : [validatedFact]) facts.splice(facts.indexOf(folded), 1);
  const startedData: Record<string, unknown> = { effectId: call.effectId, callId: call.callId, name: tool.name };
  if (intent) startedData['intent'] = intent;
  startedData['validated'] = true;
  if (plainAllow) startedData['permission'] = permissionOf();
  const started: FactDraft = { type: 'tool.started', corr: call.callId, at: run.now(), data: startedData };
  if (tool.annotations.readOnly) facts.push(started);
  else {
    await run.persist([...facts, started]);
    facts.length = 0;
  }
  // A definition built without `defineTool` (plain JavaScript) may still resolve with text or JSON: read it the same way.
  // What a tool throws or rejects with is mapped as `guarded` maps it; no async function per layer (one reaction).
  const failed = (error: unknown): ToolFailure => {
    if (error instanceof StoreError) throw error;
    return osFailureOf(error, { arguments: parsed.data as Record<string, unknown>, workspace: environment.workspace.root }) ?? thrownFailure(tool.name, error, run.signal);
  };
  const execute = (signal: AbortSignal | undefined): Promise<ToolResult> => {
    let pending: unknown;
    try {
      pending = tool.execute(input, signal === undefined ? context : { ...context, signal }, plan);
    } catch (error) {
      pending = Promise.reject(error);
    }
    return Promise.resolve(pending).then((value) => {
      try {
        return toolResultOf(value, tool.name);
      } catch (error) {
        return failed(error);
      }
    }, failed);
  };
  const executed = await withTimeout(execute, run, tool.timeoutMs, run.abandonGraceMs);
  let result = executed;
  // The output guardrail sees the whole result before the model does; a block withholds it (and its artifacts).
  if (kernel?.has('guardrail.output', tool.name) && !(executed.ok && executed.settleWith)) {
    const observed = executed.ok ? { status: 'ok' as const, observation: executed.output } : { status: 'error' as const, errorCode: executed.code, observation: `${executed.code}: ${executed.message}` };
    const { decided, fact } = await decidePoint({ kernel, point: 'guardrail.output', subject: callSubject, input: { ...base, stage: 'output', tool: hookTool(input), result: observed }, signal: run.signal, now: run.now, recorded: state.hookDecisions.get(`${call.effectId}|guardrail.output`) });
    if (fact) facts.push(fact);
    const blocked = decided.decision === 'block';
    evidence.push({ stage: 'output', verdict: blocked ? 'block' : 'pass', ...(decided.decidedBy ? { by: decided.decidedBy } : {}) });
    if (blocked) result = { ok: false, code: 'Denied', message: `output guardrail ${decided.decidedBy ?? 'unknown'} withheld the result of ${tool.name} (the call ran): ${decided.reason ?? 'no reason given'}`, ...(executed.provenance ? { provenance: executed.provenance } : {}), ...(executed.execution ? { execution: executed.execution } : {}) };
  }

  // What the tool changed stays true even when the output guardrail withheld its result.
  for (const file of (executed.ok ? executed.files : undefined) ?? []) {
    state.baselines.set(file.path, file.hash);
    const data = file.access === 'read' ? { callId: call.callId, path: file.path, hash: file.hash } : { callId: call.callId, path: file.path, hash: file.hash, before: file.before ?? null };
    facts.push({ type: file.access === 'read' ? 'file.read' : 'file.written', data, corr: call.callId, at: run.now() });
  }
  for (const artifact of result.artifacts ?? []) state.artifacts.add(artifact);
  for (const extra of result.notes ?? []) facts.push({ type: extra.type, data: { effectId: call.effectId, callId: call.callId, ...extra.data }, corr: call.callId, at: run.now() });
  // A proposal becomes a candidate in the ledger only with the call that made it, and only if that call succeeded.
  if (result.ok) for (const candidate of proposals) facts.push({ type: 'memory.proposed', data: candidate, corr: call.callId, at: run.now() });
  if (result.ok && result.settleWith) return { kind: 'continue', input: result.settleWith, facts };
  // Built key by key, in the order the record keeps: a literal of conditional spreads takes V8's slow path per call.
  let outcome: ToolOutcome;
  if (result.ok) {
    outcome = { status: 'ok', observation: result.output };
    if (result.artifacts && result.artifacts.length > 0) outcome.artifacts = [...result.artifacts];
    if (result.value) outcome.value = result.value;
  } else {
    outcome = failureOutcome(result.code, result.message, result.artifacts);
    if (result.errorClass) outcome.errorClass = result.errorClass;
  }
  if (result.provenance) outcome.provenance = result.provenance;
  if (result.execution) outcome.execution = result.execution;
  if (evidence.length > 0) outcome.guardrails = [...evidence];
  const limit = environment.observationLimit ?? defaultObservationLimit;
  const final = outcome.observation.length <= limit ? outcome : await truncateObservation(outcome, limit, environment.blobs);
  if (final.truncated) state.artifacts.add(final.truncated.artifact);
  // postToolUse observes the result as the model will see it; what it adds is shown with the result next turn.
  if (kernel?.has('postToolUse', tool.name)) {
    const { fact } = await decidePoint({ kernel, point: 'postToolUse', subject: callSubject, input: { ...base, point: 'postToolUse', tool: hookTool(input), result: { status: final.status, ...(final.errorCode ? { errorCode: final.errorCode } : {}), observation: final.observation } }, signal: run.signal, now: run.now, recorded: state.hookDecisions.get(`${call.effectId}|postToolUse`) });
    if (fact) facts.push(fact);
  }
  return settle(final);
};
