import type { ChildUsage, DelegationRole, FailureClass, JoinConflict, JoinPolicy } from '../../models/delegation.records.js';
import type { ReportFormat, ReportStatus } from '../../models/report-contracts.js';

/** One child as the delegation actor tracks it. */
export interface ChildState {
  taskId: string;
  role: DelegationRole;
  path: string;
  format: ReportFormat;
  status: 'running' | 'awaiting-approval' | 'completed' | 'failed' | 'cancelled';
  /** The effect id of the child's deadline timer. */
  deadline: string;
  reportStatus?: ReportStatus;
  report?: Record<string, unknown>;
  failureClass?: FailureClass;
  reason?: string;
  usage?: ChildUsage;
}

/** How a decided join came out. */
export type JoinOutcome = 'satisfied' | 'unsatisfied';

const finished = (child: ChildState): boolean => child.status === 'completed' || child.status === 'failed' || child.status === 'cancelled';

/** A child succeeded when it delivered a valid report whose status is `completed`. */
export const succeeded = (child: ChildState): boolean => child.status === 'completed' && child.reportStatus === 'completed';

/** How many successes the policy needs (`quorum(k)` is capped at the number of children; `first-success` is 1). */
export const needed = (join: JoinPolicy, count: number): number =>
  join.policy === 'all' ? count : join.policy === 'any' || join.policy === 'first-success' ? 1 : Math.min(Math.max(1, join.k ?? count), count);

/**
 * Decide the join, or return undefined while it is still open. `all`: every child ended (satisfied when all
 * succeeded). `any`: the first child that ended (satisfied when it delivered a report, of any status).
 * `quorum(k)`: k successes (satisfied), or too few children left to reach k (unsatisfied). `first-success`:
 * quorum(1). Pure: the same children always give the same decision.
 */
export const decideJoin = (join: JoinPolicy, children: readonly ChildState[]): JoinOutcome | undefined => {
  // Asked after every event the delegation takes, so the open case returns early: `all` looks for a running child
  // from the end (children tend to end in task order, so one is usually found at once), `any` for an ended one.
  if (join.policy === 'all') {
    for (let index = children.length - 1; index >= 0; index--) if (!finished(children[index]!)) return undefined;
    return children.every(succeeded) ? 'satisfied' : 'unsatisfied';
  }
  if (join.policy === 'any') {
    const first = children.find(finished);
    if (first === undefined) return undefined;
    return children.some((child) => finished(child) && child.status === 'completed') ? 'satisfied' : 'unsatisfied';
  }
  const need = needed(join, children.length);
  let ended = 0;
  let successes = 0;
  for (const child of children) {
    if (!finished(child)) continue;
    ended++;
    if (succeeded(child)) successes++;
  }
  if (successes >= need) return 'satisfied';
  return children.length - (ended - successes) < need ? 'unsatisfied' : undefined;
};

const distinct = <T>(values: readonly T[]): T[] => [...new Set(values)];

/**
 * Semantic conflicts between delivered reports: reviewers with different verdicts, testers who ran the same command
 * with different results, workers proposing changes to the same file. The parent must resolve them; the join does
 * not vote.
 */
export const findConflicts = (children: readonly ChildState[]): JoinConflict[] => {
  const delivered = children.filter((child) => child.status === 'completed' && child.report);
  const conflicts: JoinConflict[] = [];
  const reviews = delivered.filter((child) => child.format === 'review-report');
  const verdicts = distinct(reviews.map((child) => String(child.report!.verdict)));
  if (verdicts.length > 1) conflicts.push({ class: 'semantic-conflict', tasks: reviews.map((child) => child.taskId), subject: 'review verdict', detail: `reviewers disagree: ${verdicts.join(' vs ')}` });
  const tests = delivered.filter((child) => child.format === 'test-report');
  for (const command of distinct(tests.map((child) => String(child.report!.command)))) {
    const same = tests.filter((child) => child.report!.command === command);
    if (distinct(same.map((child) => child.report!.passed)).length > 1) conflicts.push({ class: 'semantic-conflict', tasks: same.map((child) => child.taskId), subject: `test command ${command.slice(0, 200)}`, detail: 'the same command passed for one tester and failed for another' });
  }
  const proposals = delivered.filter((child) => child.format === 'patch-proposal');
  const byPath = new Map<string, string[]>();
  for (const child of proposals) {
    const changes = Array.isArray(child.report!.changes) ? (child.report!.changes as Array<{ path?: unknown }>) : [];
    for (const path of distinct(changes.map((change) => String(change.path)))) byPath.set(path, [...(byPath.get(path) ?? []), child.taskId]);
  }
  for (const [path, tasks] of byPath) if (tasks.length > 1) conflicts.push({ class: 'semantic-conflict', tasks, subject: `changes to ${path.slice(0, 200)}`, detail: 'several workers propose changes to the same file; apply one, serially' });
  return conflicts;
};
