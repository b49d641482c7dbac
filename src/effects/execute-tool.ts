import type { RecordEnvelope } from '../../models/envelope.js';
import type { ArgumentProblem } from '../../models/model.records.js';
import type { ApprovalOutcome } from '../../machines/permission.machine.js';
import { runToolPipeline, type PipelineCall, type PipelineEnvironment, type PipelineRun } from '../tools/tool-pipeline.js';
import type { ResumeCheck } from '../tools/tool.js';
import { isAborted, whenAborted } from './abort-hooks.js';
import type { EffectContext, EffectExecutor, EffectRequest, FactDraft, Settlement } from './effect.js';
import type { WorkspaceCapture } from '../changes/workspace-capture.js';
import { readFile, lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { packageScriptOf } from './test-command.js';
import { defaultVerificationClassifier, verificationOf, type PackageScript, type VerificationClassifier } from './verification.js';

/**
 * The package script a `npm test` / `npm run X` call is about to run, as the workspace's `package.json` holds it now
 * (a regular file at the root, at most 1 MiB), or undefined when the call runs none. Read before the call runs, since
 * the run may rewrite the file; recorded with the verification, so replay never reads the file again.
 */
const packageScriptFor = async (workspace: string, args: Record<string, unknown>): Promise<PackageScript | undefined> => {
  if (typeof args.command !== 'string' || (args.cwd !== undefined && args.cwd !== '.' && args.cwd !== '')) return undefined;
  const name = packageScriptOf(args.command);
  if (name === undefined) return undefined;
  try {
    const path = join(workspace, 'package.json');
    const stat = await lstat(path);
    if (!stat.isFile() || stat.size > 1_048_576) return { name };
    const scripts = (JSON.parse(await readFile(path, 'utf8')) as { scripts?: Record<string, unknown> }).scripts;
    const script = scripts && Object.hasOwn(scripts, name) ? scripts[name] : undefined;
    return typeof script === 'string' ? { name, script } : { name };
  } catch {
    return { name };
  }
};

const approvalOf = (value: unknown): ApprovalOutcome | undefined => {
  if (typeof value !== 'object' || value === null) return undefined;
  const approval = value as Partial<ApprovalOutcome>;
  if (typeof approval.approvalId !== 'string' || (approval.decision !== 'allow-once' && approval.decision !== 'allow-session' && approval.decision !== 'deny')) return undefined;
  return {
    approvalId: approval.approvalId,
    decision: approval.decision,
    ...(typeof approval.feedback === 'string' ? { feedback: approval.feedback } : {}),
    ...(typeof approval.rule === 'string' ? { rule: approval.rule } : {}),
  };
};

/** The tool-call budget a call is past (from the session machine's request), when it is. */
const budgetOf = (value: unknown): { maxToolCalls: number; proposed: number; left: number; delegated?: number; share?: boolean } | undefined => {
  if (typeof value !== 'object' || value === null) return undefined;
  const { maxToolCalls, proposed, left, delegated, share } = value as Record<string, unknown>;
  if (typeof maxToolCalls !== 'number' || typeof proposed !== 'number' || typeof left !== 'number') return undefined;
  return { maxToolCalls, proposed, left, ...(typeof delegated === 'number' ? { delegated } : {}), ...(share === true ? { share } : {}) };
};

const parallelOf = (value: unknown): { maxBranches: number; proposed: number } | undefined => {
  if (typeof value !== 'object' || value === null) return undefined;
  const { maxBranches, proposed } = value as Record<string, unknown>;
  return typeof maxBranches === 'number' && typeof proposed === 'number' ? { maxBranches, proposed } : undefined;
};

export interface ExecuteToolOptions {
  /** Which calls are verifications (default: test commands and tools named like `run_tests`). */
  classifyVerification?: VerificationClassifier;
  /**
   * The session's workspace capture: every call of a tool not declared read-only (and every `bash` call, whatever its
   * command) runs inside one of its windows, and the changes it made are recorded with its settlement.
   */
  capture?: WorkspaceCapture;
}

/** Whether a call of `tool` may change the workspace: anything not declared read-only, and `bash` always. */
export const mayChangeWorkspace = (tool: { name: string; annotations: { readOnly: boolean } } | undefined): boolean => tool !== undefined && (tool.name === 'bash' || !tool.annotations.readOnly);

/**
 * Executes `executeTool` through the tool pipeline of the calling actor's environment (a child agent has its own
 * tools and permission mode) (src/tools/tool-pipeline.ts). It settles with `tool.settled`,
 * or with `approval.requested` when the permission stage asks a person (the tool does not run; the session waits and
 * requests the call again with the answer). Facts that must be durable before a tool changes anything are appended
 * synced by the pipeline; the rest are written with the settling input. A call the classifier marks as a
 * verification that actually executed a command also gets a `verification.recorded` fact in that batch, whose
 * status is the command's exit. Read-only tools may share
 * their actor's tool lane; anything else runs alone.
 */
/** The options of a fact batch persisted before a tool runs (one object for every call). */
const syncFacts: { sync: boolean } = Object.freeze({ sync: true });

/**
 * The pipeline's view of one tool call's effect context. A class, not an object literal: a getter in a literal is
 * defined at run time (~1.5 µs each in Node 20), and this is made per call. The signal is the context's, made on its
 * first read; the pipeline waits through `aborted` and `onAbort`, which make none.
 */
class EffectPipelineRun implements PipelineRun {
  // `declare`d and set in the constructor: a class field is defined by an initializer function of its own (a call
  // per object) and then assigned again.
  declare readonly sessionId: string;
  declare readonly abandonGraceMs: number | undefined;
  declare readonly now: () => number;
  /** A `tool.started` was persisted: the call ran. */
  declare ran: boolean;
  /** An own property: the pipeline hands it to the tool's context unbound. */
  declare readonly progress: (message: string) => void;
  declare private readonly context: EffectContext;

  constructor(context: EffectContext, request: EffectRequest) {
    this.sessionId = context.sessionId;
    this.abandonGraceMs = context.abandonGraceMs;
    this.now = context.now;
    this.ran = false;
    this.progress = (message) => context.live({ type: 'effect.progress', actor: request.actor, effectId: request.effectId, message });
    this.context = context;
  }

  get signal(): AbortSignal {
    return this.context.signal;
  }

  get aborted(): boolean {
    return isAborted(this.context);
  }

  onAbort(hook: () => void): () => void {
    return whenAborted(this.context, hook);
  }

  /** Methods, not arrow properties: the pipeline calls them on the run (two closures fewer per call). */
  persist(facts: readonly FactDraft[]): Promise<void> {
    this.ran ||= facts.some((fact) => fact.type === 'tool.started');
    return this.context.recordFacts(facts, syncFacts);
  }

  recordLater(facts: readonly FactDraft[]): Promise<void> {
    return this.context.recordFacts(facts).catch(() => undefined);
  }
}

export const createExecuteToolExecutor = (environments: PipelineEnvironment | ((actor: string) => PipelineEnvironment), options: ExecuteToolOptions = {}): EffectExecutor => {
  const classifyVerification = options.classifyVerification ?? defaultVerificationClassifier;
  const environmentOf = typeof environments === 'function' ? environments : () => environments;
  const toolOf = (request: EffectRequest) => environmentOf(request.actor).registry.get(String(request.args.name));
  const executor: EffectExecutor = {
    resumePolicy: (request) => toolOf(request)?.resumePolicy ?? 'never-rerun',
    isExclusive: (request) => !(toolOf(request)?.annotations.readOnly ?? false),
    async checkResume(request: EffectRequest, started: RecordEnvelope | undefined): Promise<ResumeCheck | undefined> {
      const tool = toolOf(request);
      if (!tool?.checkResume) return undefined;
      const intent = (started?.data as { intent?: Record<string, unknown> } | undefined)?.intent;
      return tool.checkResume(started ? (intent ?? {}) : undefined, { workspace: environmentOf(request.actor).workspace });
    },
    execute(request, context) {
      const capture = options.capture;
      // Not an async function returning `run`'s promise: that adopts it through two more microtask turns.
      if (!capture || !mayChangeWorkspace(toolOf(request))) return run(request, context);
      return windowedRun(request, context, capture);
    },
  };
  return executor;

  /** A call that may change the workspace, run inside one of the capture's windows (its changes recorded with it). */
  async function windowedRun(request: EffectRequest, context: EffectContext, capture: WorkspaceCapture): Promise<Settlement> {
    const windowed = await capture.window({ effectId: request.effectId, callId: String(request.args.callId), tool: String(request.args.name) }, () => run(request, context), (facts, blobs) => context.recordFacts(facts, { blobs }));
    const callId = String(request.args.callId);
    windowed.facts.forEach((fact) => (fact.corr = callId));
    // The changes are recorded whatever became of the call: with its settlement, or on their own when it has none
    // (it threw, or was aborted: its settlement is dropped and it stays in doubt).
    if (!windowed.outcome.ok || isAborted(context)) {
      if (windowed.facts.length > 0) await context.recordFacts(windowed.facts, { blobs: windowed.blobs }).catch(() => undefined);
      if (!windowed.outcome.ok) throw windowed.outcome.error;
      return windowed.outcome.value;
    }
    const settlement = windowed.outcome.value;
    if (windowed.facts.length === 0) return settlement;
    return { ...settlement, facts: [...windowed.facts, ...(settlement.facts ?? [])], blobs: [...(settlement.blobs ?? []), ...windowed.blobs] };
  }

  async function run(request: EffectRequest, context: EffectContext): Promise<Settlement> {
    const environment = environmentOf(request.actor);
    const callId = String(request.args.callId);
    const name = String(request.args.name);
    const args = (typeof request.args.arguments === 'object' && request.args.arguments !== null ? request.args.arguments : {}) as Record<string, unknown>;
    const approval = approvalOf(request.args.approval);
    const invalid = Array.isArray(request.args.invalid) ? (request.args.invalid as ArgumentProblem[]) : undefined;
    const preFlight = request.args.preFlight as { by?: string; reason: string } | undefined;
    const budget = budgetOf(request.args.budget);
    const parallel = parallelOf(request.args.parallel);
    // Only a command can run a package script: any other call skips the wait (a microtask hop per call).
    const packageScript = typeof args.command === 'string' ? await packageScriptFor(environment.workspace.root, args) : undefined;
    // Built key by key, in the same order: a literal of conditional spreads takes V8's slow path on every call.
    const call: PipelineCall = { effectId: request.effectId, callId, actor: request.actor, name, arguments: args };
    if (approval) call.approval = approval;
    if (invalid && invalid.length > 0) call.invalid = invalid;
    if (preFlight && typeof preFlight.reason === 'string') call.preFlight = preFlight;
    if (budget) call.budget = budget;
    if (parallel) call.parallel = parallel;
    const run = new EffectPipelineRun(context, request);
    const result = await runToolPipeline(environment, call, run);
    let ran = run.ran;
    // The pipeline's own array (it keeps no reference to it once it returned).
    const facts: FactDraft[] = result.facts;
    let settlement: Settlement;
    if (result.kind === 'ask') settlement = { type: 'approval.requested', corr: callId, data: { ...result.request, elapsedMs: context.elapsedMs() } };
    else if (result.kind === 'continue') settlement = { type: result.input.type, corr: callId, data: { ...result.input.data, effectId: request.effectId, callId, elapsedMs: context.elapsedMs() } };
    else {
      ran ||= facts.some((fact) => fact.type === 'tool.started');
      const classified = ran ? classifyVerification({ name, arguments: args }) : undefined;
      const verification = classified ? verificationOf({ name, arguments: args, callId }, request.effectId, result.outcome, classified, packageScript) : undefined;
      if (verification) facts.push({ type: 'verification.recorded', data: verification, corr: callId, at: context.now() });
      settlement = { type: 'tool.settled', corr: callId, data: { effectId: request.effectId, callId, name, ...result.outcome, elapsedMs: context.elapsedMs() } };
    }
    // Set, not spread in: a literal ending in a conditional spread takes V8's slow path on every call.
    if (facts.length > 0) settlement.facts = facts;
    return settlement;
  }
};
