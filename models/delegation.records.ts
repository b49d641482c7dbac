import * as z from 'zod';
import { ChildBudgets } from './budgets.js';
import { PermissionMode } from './permission.records.js';
import { OutputContract, ReportFormat, ReportStatus } from './report-contracts.js';
import { lazySchema } from './lazy-schema.js';

/** The roles a child agent can have; each maps to a tool boundary and a default output contract. */
export const DelegationRole = lazySchema(() => z.enum(['explorer', 'worker', 'reviewer', 'tester', 'security']));
export type DelegationRole = z.infer<typeof DelegationRole>;

/** What a child's first context is cut from: nothing but its task, a summary of the parent's log, or the parent's recent conversation. */
export const ContextMode = lazySchema(() => z.enum(['clean', 'summary', 'fork']));
export type ContextMode = z.infer<typeof ContextMode>;

/** How a child's tools derive from its parent's: `intersection` (parent ∩ role), `subset` (listed, within the parent's), `isolated` (the role's fixed set, all of it within the parent's). */
export const ToolInheritance = lazySchema(() => z.enum(['intersection', 'subset', 'isolated']));
export type ToolInheritance = z.infer<typeof ToolInheritance>;

/** How the join of several children is decided. */
export const JoinPolicyName = lazySchema(() => z.enum(['all', 'any', 'quorum', 'first-success']));
export type JoinPolicyName = z.infer<typeof JoinPolicyName>;

export const JoinPolicy = lazySchema(() => z.object({ policy: JoinPolicyName, k: z.number().int().positive().optional() }));
export type JoinPolicy = z.infer<typeof JoinPolicy>;

/** Why a delegation (or one child of it) failed. */
export const FailureClass = lazySchema(() => z.enum(['validation', 'capability', 'runtime', 'contract', 'semantic-conflict']));
export type FailureClass = z.infer<typeof FailureClass>;

/** Task ids name actor paths (`root/delegation-3/<id>`), so they are short and path-safe. */
export const TaskId = lazySchema(() => z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$/, 'task ids are 1-48 characters of [A-Za-z0-9_-], starting alphanumeric'));

const paths = lazySchema(() => z.array(z.string().min(1).max(1_000)).max(200));

/** What a task may look at: files, directories, symbols and commands (all default to nothing; no scope = the workspace). */
export const TaskScope = lazySchema(() => z.object({ files: paths.optional(), directories: paths.optional(), symbols: paths.optional(), commands: paths.optional() }).strict());
export type TaskScope = z.infer<typeof TaskScope>;

/** One task of a `delegate_task` call, as the model writes it (everything but id, role and objective has a default). */
export const DelegatedTaskArguments = lazySchema(() => z
  .object({
    id: TaskId,
    role: DelegationRole,
    objective: z.string().min(1).max(8_000),
    title: z.string().min(1).max(200).optional(),
    scope: TaskScope.optional(),
    context_mode: ContextMode.optional(),
    tool_policy: z
      .object({ inheritance: ToolInheritance.optional(), tools: z.array(z.string().min(1)).max(64).optional(), permission_mode: PermissionMode.optional() })
      .strict()
      .optional(),
    output_contract: z.union([ReportFormat, z.object({ format: ReportFormat, required_fields: z.array(z.string().min(1)).max(32).optional() }).strict()]).optional(),
    budgets: z
      .object({
        max_turns: z.number().int().min(1).max(500).optional(),
        max_tool_calls: z.number().int().min(0).max(5_000).optional(),
        max_tokens: z.number().int().min(1).optional(),
        max_wall_time_ms: z.number().int().min(1_000).max(86_400_000).optional(),
      })
      .strict()
      .optional(),
  })
  .strict());
export type DelegatedTaskArguments = z.infer<typeof DelegatedTaskArguments>;

/** The arguments of `delegate_task`: one or more tasks (they fan out) and how to join them (default `all`). */
export const DelegateTaskArguments = lazySchema(() => z
  .object({
    tasks: z.array(DelegatedTaskArguments).min(1).max(1_000),
    join: z.object({ policy: JoinPolicyName, k: z.number().int().positive().optional() }).strict().optional(),
  })
  .strict());
export type DelegateTaskArguments = z.infer<typeof DelegateTaskArguments>;

/** One fully resolved task: every default applied, the child's tools and permission mode fixed under the rights ceiling. */
export const DelegatedTask = lazySchema(() => z.object({
  taskId: TaskId,
  title: z.string(),
  role: DelegationRole,
  objective: z.string(),
  scope: z.object({ files: z.array(z.string()), directories: z.array(z.string()), symbols: z.array(z.string()), commands: z.array(z.string()) }),
  contextMode: ContextMode,
  inheritance: ToolInheritance,
  /** The child's visible tools (without `submit_report`, which every child has). */
  tools: z.array(z.string()),
  permissionMode: PermissionMode,
  /** The mutation policy digest the child's turns must run under (its permission mode, the parent's rules, the sandbox). */
  mutationPolicyDigest: z.string(),
  contract: OutputContract,
  /** The role's or the task's budgets; in `delegation.started`, the child's share of what its parent had left (may be 0). */
  budgets: ChildBudgets,
  /** The child's depth: 1 for a child of the root agent. */
  depth: z.number().int().positive(),
}));
export type DelegatedTask = z.infer<typeof DelegatedTask>;

/** What a `delegate_task` call resolved to. `observationLimit` caps the join's observation (the parent's truncation policy). */
export const DelegationPlan = lazySchema(() => z.object({ tasks: z.array(DelegatedTask).min(1), join: JoinPolicy, observationLimit: z.number().int().positive() }));
export type DelegationPlan = z.infer<typeof DelegationPlan>;

/** Fields shared by several records (functions, so they are built with the schema that spreads them, on first use). */
const callFields = () => ({ effectId: z.string().min(1), callId: z.string().min(1) });

/** effect (fact) · a `delegate_task` call's task package as the model proposed it (runtime validation starts). */
export const DelegationProposed = lazySchema(() => z.object({ ...callFields(), tasks: z.array(z.unknown()), join: z.unknown().optional() }));
export type DelegationProposed = z.infer<typeof DelegationProposed>;

/** effect (fact) · runtime validation's verdict: the resolved tasks, or the failure class with the options the parent has. */
export const DelegationValidated = lazySchema(() => z.object({
  ...callFields(),
  ok: z.boolean(),
  failureClass: FailureClass.optional(),
  reason: z.string().optional(),
  options: z.array(z.string()).optional(),
  tasks: z.array(z.object({ taskId: z.string(), role: DelegationRole, tools: z.array(z.string()), permissionMode: PermissionMode, format: ReportFormat })).optional(),
}));
export type DelegationValidated = z.infer<typeof DelegationValidated>;

/** input · the `delegate_task` call's effect settled with an accepted plan: the session spawns the delegation actor. */
export const DelegationAccepted = lazySchema(() => z.object({ ...callFields(), plan: DelegationPlan, elapsedMs: z.number().nonnegative() }));
export type DelegationAccepted = z.infer<typeof DelegationAccepted>;

/** input · a timer effect (a child's deadline) fired. */
export const TimerFired = lazySchema(() => z.object({ effectId: z.string().min(1), elapsedMs: z.number().nonnegative() }));
export type TimerFired = z.infer<typeof TimerFired>;

const childFields = () => ({ callId: z.string().min(1), taskId: TaskId, child: z.string().min(1) });

/** effect (derived) · a child agent started: its task package (budgets narrowed to the parent's) and the parent it serves. */
export const DelegationStarted = lazySchema(() => z.object({ ...childFields(), parent: z.string().min(1), task: DelegatedTask }));
export type DelegationStarted = z.infer<typeof DelegationStarted>;

/** effect (derived) · a child asked for a person's approval; it waits (persisted) and never approves itself. */
export const DelegationPermissionEscalated = lazySchema(() => z.object({
  ...childFields(),
  approvalId: z.string().min(1),
  tool: z.string(),
  summary: z.string(),
  reason: z.string(),
  options: z.array(z.string()),
}));
export type DelegationPermissionEscalated = z.infer<typeof DelegationPermissionEscalated>;

/** What a child consumed. */
export const ChildUsage = lazySchema(() => z.object({ turns: z.number().int().nonnegative(), toolCalls: z.number().int().nonnegative(), inputTokens: z.number().int().nonnegative(), outputTokens: z.number().int().nonnegative() }));
export type ChildUsage = z.infer<typeof ChildUsage>;

/** effect (derived) · a child delivered a valid report from a MutationReady turn (`evidence`). */
export const DelegationCompleted = lazySchema(() => z.object({
  ...childFields(),
  reportStatus: ReportStatus,
  report: z.record(z.string(), z.unknown()),
  evidence: z.object({ turnId: z.string(), joinDigest: z.string() }),
  usage: ChildUsage,
}));
export type DelegationCompleted = z.infer<typeof DelegationCompleted>;

/** effect (derived) · a child failed (or was cancelled: `cancelled`), with its failure class; the parent goes on. */
export const DelegationFailed = lazySchema(() => z.object({ ...childFields(), failureClass: FailureClass, reason: z.string(), cancelled: z.boolean().optional(), usage: ChildUsage.optional() }));
export type DelegationFailed = z.infer<typeof DelegationFailed>;

/** Two children whose reports disagree (a semantic conflict the parent must resolve). */
export const JoinConflict = lazySchema(() => z.object({ class: z.literal('semantic-conflict'), tasks: z.array(z.string()), subject: z.string(), detail: z.string() }));
export type JoinConflict = z.infer<typeof JoinConflict>;

/** effect (derived) · the join was decided, once: its outcome and the observation the parent's call gets. */
export const DelegationJoined = lazySchema(() => z.object({
  callId: z.string().min(1),
  parent: z.string().min(1),
  policy: JoinPolicyName,
  k: z.number().int().positive().optional(),
  outcome: z.enum(['satisfied', 'unsatisfied', 'cancelled']),
  children: z.array(z.object({ taskId: z.string(), role: DelegationRole, child: z.string(), status: z.enum(['completed', 'failed', 'cancelled']), reportStatus: ReportStatus.optional(), failureClass: FailureClass.optional() })),
  conflicts: z.array(JoinConflict),
  observation: z.string(),
}));
export type DelegationJoined = z.infer<typeof DelegationJoined>;

/** effect (derived) · a child's reply broke its output contract (`missing`: no report; `invalid`: a report that failed validation). */
export const ReportRejected = lazySchema(() => z.object({ reason: z.enum(['missing', 'invalid']), attempt: z.number().int().positive(), format: ReportFormat, callId: z.string().optional(), final: z.boolean() }));
export type ReportRejected = z.infer<typeof ReportRejected>;
