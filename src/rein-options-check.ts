import type { Budgets } from '../models/budgets.js';
import { PermissionAction, PermissionMode } from '../models/permission.records.js';
import { ReinError } from './host/host-errors.js';
import { Prices } from '../models/prices.js';
import { parseRule } from './policy/permission-rules.js';
import type { PermissionsConfig } from './policy/permission-policy.js';

const usage = (field: string, problem: string, where = 'createRein'): never => {
  throw new ReinError('USAGE', `${where}({ ${field} }): ${problem}`);
};

/** The least each budget may be: a session may be allowed no tool call at all, never no turn, token or time. */
const budgetMinimum: Readonly<Record<Exclude<keyof Budgets, 'maxCostUsd'>, number>> = { maxTurns: 1, maxToolCalls: 0, maxTokens: 1, maxWallTimeMs: 1 };

/**
 * Budgets a harness or one session is given (`createRein`, `createSession`, `startSession`, `submit`): an object
 * whose keys are `maxTurns`, `maxToolCalls`, `maxTokens`, `maxWallTimeMs` only, each a whole number at least its
 * minimum (`maxToolCalls` ≥ 0, the rest ≥ 1) — the `Budgets` the session machine enforces — and `maxCostUsd`, a finite
 * number of dollars above 0 (the runtime's cost budget). Anything else is `USAGE`
 * naming the field: a typo (`"abc"`, `-1`, `1.5`, `maxTurn`) would otherwise become a session recorded as
 * `budget-exhausted` that never ran, or a limit silently dropped.
 */
export const checkBudgets = (budgets: unknown, where: string): void => {
  if (budgets === undefined) return;
  if (typeof budgets !== 'object' || budgets === null || Array.isArray(budgets)) usage('budgets', `must be an object such as { maxTurns: 20 }, got ${JSON.stringify(budgets)}`, where);
  for (const [key, value] of Object.entries(budgets as Record<string, unknown>)) {
    if (key === 'maxCostUsd') {
      if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value > 0)) usage('budgets.maxCostUsd', `must be a number of US dollars > 0, got ${typeof value === 'number' ? String(value) : JSON.stringify(value) ?? String(value)}`, where);
      continue;
    }
    if (!Object.hasOwn(budgetMinimum, key)) usage(`budgets.${key}`, `there is no such budget; the budgets are ${[...Object.keys(budgetMinimum), 'maxCostUsd'].join(', ')}`, where);
    const minimum = budgetMinimum[key as keyof typeof budgetMinimum];
    if (value !== undefined && !(typeof value === 'number' && Number.isSafeInteger(value) && value >= minimum)) usage(`budgets.${key}`, `must be a whole number ≥ ${minimum}, got ${typeof value === 'number' ? String(value) : JSON.stringify(value) ?? String(value)}`, where);
  }
};

/**
 * What `createRein` refuses before it builds anything (`USAGE`, naming the field): a missing provider, a permission
 * mode or rule it cannot apply — a misspelt action, a missing one, a tool name that is none of the harness's tools
 * (`Bash` for `bash`): a deny rule that silently matched nothing would protect nothing — and budgets, retry and
 * snapshot settings that are not positive whole numbers. `tools` are the names the harness has; names holding `__`
 * (plugin and MCP tools, known only later) and globs pass.
 */
export const checkReinOptions = (options: { provider?: unknown; permissions?: PermissionsConfig; budgets?: Record<string, unknown>; prices?: unknown; retry?: Record<string, unknown>; snapshotEvery?: unknown; maxParallelToolCalls?: unknown; abandonGraceMs?: unknown }, tools: readonly string[]): void => {
  const provider = options.provider as { name?: unknown; stream?: unknown } | undefined;
  if (!provider || typeof provider !== 'object' || typeof provider.stream !== 'function') usage('provider', 'a provider object with a stream(request) method is required');
  const permissions = options.permissions;
  if (permissions?.mode !== undefined && !PermissionMode.safeParse(permissions.mode).success) usage('permissions.mode', `${JSON.stringify(permissions.mode)} is not a mode: default, plan or accept-edits`);
  for (const [index, rule] of (permissions?.rules ?? []).entries()) {
    const field = `permissions.rules[${index}]`;
    const parsed = typeof rule === 'string' ? parseRule(rule) : rule;
    if (typeof parsed !== 'object' || parsed === null) usage(field, 'a rule is a string (`deny bash:git push*`) or { action, tool, pattern? }');
    if (!PermissionAction.safeParse(parsed.action).success) usage(field, `action must be allow, ask or deny, got ${JSON.stringify(parsed.action)}`);
    if (typeof parsed.tool !== 'string' || parsed.tool.length === 0) usage(field, 'tool is required (a tool name, a glob such as mcp__fs__*, or *)');
    if (parsed.pattern !== undefined && (typeof parsed.pattern !== 'string' || parsed.pattern.length === 0)) usage(field, 'pattern, when given, is a non-empty string');
    const tool = parsed.tool;
    if (tool !== '*' && !/[*?]/.test(tool) && !tool.includes('__') && !tools.includes(tool)) usage(field, `there is no tool ${JSON.stringify(tool)}; the tools are ${tools.join(', ')} (names are case-sensitive)`);
  }
  checkBudgets(options.budgets, 'createRein');
  if (options.prices !== undefined) {
    const parsed = Prices.safeParse(options.prices);
    if (!parsed.success) usage('prices', parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; '));
  }
  for (const [key, value] of Object.entries(options.retry ?? {})) {
    if (typeof value === 'number' && !(Number.isFinite(value) && value >= 0)) usage(`retry.${key}`, `must be a number ≥ 0, got ${JSON.stringify(value)}`);
  }
  if (options.retry?.maxAttempts !== undefined && !(Number.isInteger(options.retry.maxAttempts) && (options.retry.maxAttempts as number) >= 1)) usage('retry.maxAttempts', `must be a whole number ≥ 1, got ${JSON.stringify(options.retry.maxAttempts)}`);
  if (options.maxParallelToolCalls !== undefined && !(Number.isInteger(options.maxParallelToolCalls) && (options.maxParallelToolCalls as number) >= 1)) usage('maxParallelToolCalls', `must be a whole number ≥ 1, got ${JSON.stringify(options.maxParallelToolCalls)}`);
  if (options.abandonGraceMs !== undefined && !(Number.isInteger(options.abandonGraceMs) && (options.abandonGraceMs as number) >= 0)) usage('abandonGraceMs', `must be a whole number of ms ≥ 0, got ${JSON.stringify(options.abandonGraceMs)}`);
  if (options.snapshotEvery !== undefined && !(Number.isInteger(options.snapshotEvery) && (options.snapshotEvery as number) >= 0)) usage('snapshotEvery', `must be a whole number ≥ 0, got ${JSON.stringify(options.snapshotEvery)}`);
};
