import type { Budgets } from '../../models/budgets.js';
import type { DelegateTaskArguments, DelegatedTask, DelegatedTaskArguments, DelegationPlan, FailureClass, JoinPolicy } from '../../models/delegation.records.js';
import { optionalFieldsOf, requiredFieldsOf, type OutputContract, type ReportFormat } from '../../models/report-contracts.js';
import { narrowerMode, type DelegationScope } from './actor-rights.js';

/** A plan the runtime can start, or a refusal (before any child starts) with the options the parent has. */
export type PlanResolution =
  | { ok: true; plan: DelegationPlan }
  | { ok: false; failureClass: Extract<FailureClass, 'validation' | 'capability'>; reason: string; options: string[] };

const capabilityOptions = (missing: readonly string[], why: string): string[] => [
  'reassign: delegate to a role whose tools are available now (for example an explorer for read-only analysis)',
  `ask the user for permission: the role needs ${missing.join(', ')}, which ${why} (for example a wider permission mode or an approval rule)`,
  'postpone: do the work yourself later, or delegate again once the permissions change',
];

const validationOptions = ['fix the task package and call delegate_task again', 'do the work yourself instead of delegating'];

const invalid = (reason: string): PlanResolution => ({ ok: false, failureClass: 'validation', reason, options: validationOptions });

const resolveJoin = (join: DelegateTaskArguments['join'], count: number): JoinPolicy | string => {
  const policy = join?.policy ?? 'all';
  if (policy === 'quorum') {
    if (join?.k === undefined) return 'join policy quorum needs k (how many children must succeed)';
    if (join.k > count) return `quorum k=${join.k} exceeds the ${count} task(s) of this call`;
    return { policy, k: join.k };
  }
  if (join?.k !== undefined) return `k applies only to the quorum policy, not ${policy}`;
  return { policy };
};

const resolveContract = (task: DelegatedTaskArguments, defaultFormat: ReportFormat): OutputContract | string => {
  const given = task.output_contract;
  const format = given === undefined ? defaultFormat : typeof given === 'string' ? given : given.format;
  const extra = typeof given === 'object' ? (given.required_fields ?? []) : [];
  const unknown = extra.filter((field) => !optionalFieldsOf(format).includes(field) && !requiredFieldsOf(format).includes(field));
  if (unknown.length > 0) return `task ${task.id}: ${format} has no field ${unknown.join(', ')} (optional fields it can require: ${optionalFieldsOf(format).join(', ')})`;
  return { format, requiredFields: [...new Set([...requiredFieldsOf(format), ...extra])] };
};

const resolveBudgets = (task: DelegatedTaskArguments, defaults: Budgets): Budgets => ({
  maxTurns: task.budgets?.max_turns ?? defaults.maxTurns,
  maxToolCalls: task.budgets?.max_tool_calls ?? defaults.maxToolCalls,
  maxTokens: task.budgets?.max_tokens ?? defaults.maxTokens,
  maxWallTimeMs: task.budgets?.max_wall_time_ms ?? defaults.maxWallTimeMs,
});

/**
 * Resolve a `delegate_task` call into a plan under the calling agent's rights ceiling, or refuse it. Validation
 * failures: too many tasks, duplicate ids, a bad join, a `subset` without tools, a contract field the format lacks.
 * Capability failures: the depth limit, or a role whose required tools the child cannot have (not among the
 * parent's tools, or hidden in the child's mode) — refused with the options reassign, ask the user, postpone.
 * A child's tools: `intersection` (default) = role's allowed ∩ parent's; `subset` = the listed tools, each one the
 * parent's; `isolated` = the role's fixed set (or the listed tools), all of which the parent must have. Its mode is
 * never above the parent's; whatever it gets must also be visible in that mode. Pure.
 */
export const resolvePlan = (args: DelegateTaskArguments, scope: DelegationScope): PlanResolution => {
  const { parent, config } = scope;
  if (parent.depth >= config.maxDepth) {
    return { ok: false, failureClass: 'capability', reason: `delegation depth limit reached: this agent is at depth ${parent.depth} and delegation may nest ${config.maxDepth} level(s)`, options: ['do the work yourself', 'report what you could not do to your parent (it may delegate it)'] };
  }
  if (args.tasks.length > config.maxFanOut) return invalid(`${args.tasks.length} tasks exceed the fan-out limit of ${config.maxFanOut} per call`);
  const ids = args.tasks.map((task) => task.id);
  const duplicate = ids.find((id, index) => ids.indexOf(id) !== index);
  if (duplicate !== undefined) return invalid(`task id ${duplicate} is used twice`);
  const join = resolveJoin(args.join, args.tasks.length);
  if (typeof join === 'string') return invalid(join);
  const parentTools = new Set(parent.tools);
  const depth = parent.depth + 1;
  const nested = depth < config.maxDepth && parentTools.has('delegate_task');
  const tasks: DelegatedTask[] = [];
  for (const task of args.tasks) {
    const role = config.roles[task.role];
    const mode = narrowerMode(parent.mode, task.tool_policy?.permission_mode);
    const inheritance = task.tool_policy?.inheritance ?? 'intersection';
    const listed = task.tool_policy?.tools;
    if (inheritance === 'subset' && (!listed || listed.length === 0)) return invalid(`task ${task.id}: inheritance subset needs tool_policy.tools`);
    const wanted = inheritance === 'intersection' ? role.allowed.filter((tool) => parentTools.has(tool)) : [...(listed ?? role.allowed)];
    const notTheParents = wanted.filter((tool) => !parentTools.has(tool));
    if (notTheParents.length > 0) {
      return { ok: false, failureClass: 'capability', reason: `task ${task.id} (${task.role}, ${inheritance}) asks for ${notTheParents.join(', ')}, which this agent does not have: a child never gets more than its parent`, options: capabilityOptions(notTheParents, 'this agent does not have') };
    }
    const hidden = wanted.filter((tool) => !scope.isVisible(mode, tool));
    const tools = [...wanted.filter((tool) => scope.isVisible(mode, tool)), ...(nested && scope.isVisible(mode, 'delegate_task') ? ['delegate_task'] : [])];
    const missing = role.required.filter((tool) => !tools.includes(tool));
    if (missing.length > 0) {
      const why = missing.every((tool) => hidden.includes(tool)) ? `is hidden in ${mode} mode` : 'is not among this agent\'s tools';
      return { ok: false, failureClass: 'capability', reason: `task ${task.id}: role ${task.role} needs ${missing.join(', ')}, which ${why}`, options: capabilityOptions(missing, why) };
    }
    const contract = resolveContract(task, role.contract);
    if (typeof contract === 'string') return invalid(contract);
    const scopeOf = task.scope ?? {};
    const empty = [scopeOf.files, scopeOf.directories, scopeOf.symbols, scopeOf.commands].every((list) => !list || list.length === 0);
    tasks.push({
      taskId: task.id,
      title: task.title ?? task.objective.replace(/\s+/g, ' ').slice(0, 80),
      role: task.role,
      objective: task.objective,
      scope: { files: scopeOf.files ?? [], directories: empty ? ['.'] : (scopeOf.directories ?? []), symbols: scopeOf.symbols ?? [], commands: scopeOf.commands ?? [] },
      contextMode: task.context_mode ?? 'summary',
      inheritance,
      tools,
      permissionMode: mode,
      mutationPolicyDigest: scope.policyDigest(mode),
      contract,
      budgets: resolveBudgets(task, role.budgets),
      depth,
    });
  }
  return { ok: true, plan: { tasks, join, observationLimit: scope.observationLimit } };
};
