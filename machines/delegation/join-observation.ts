import type { JoinConflict, JoinPolicy } from '../../models/delegation.records.js';
import type { ChildState } from './join-policy.js';

/** Everything the observation of a decided join is rendered from. */
export interface JoinSummary {
  delegation: string;
  join: JoinPolicy;
  outcome: 'satisfied' | 'unsatisfied' | 'cancelled';
  children: readonly ChildState[];
  conflicts: readonly JoinConflict[];
}

type Detail = 'full' | 'brief' | 'status';

const childEntry = (child: ChildState, detail: Detail): Record<string, unknown> => {
  const entry: Record<string, unknown> = { task: child.taskId, role: child.role, actor: child.path, status: child.status };
  if (child.status === 'completed' && child.report) {
    if (detail === 'full') entry.report = child.report;
    else if (detail === 'brief') entry.report = { status: child.report.status, summary: String(child.report.summary ?? '').slice(0, 300), ...(Array.isArray(child.report.unknowns) ? { unknowns: (child.report.unknowns as unknown[]).slice(0, 5) } : {}) };
    else entry.report_status = child.reportStatus;
  }
  if (child.failureClass) entry.failure = detail === 'status' ? child.failureClass : { class: child.failureClass, reason: (child.reason ?? '').slice(0, detail === 'full' ? 2_000 : 300) };
  return entry;
};

/**
 * False when the children's task, role, actor and status alone, serialised without spaces, are longer than `limit`: a
 * lower bound of every rendering that lists them all (each entry holds those four members, with the same values).
 */
const fitsUnlisted = (children: readonly ChildState[], limit: number): boolean => {
  let length = 0;
  for (const child of children) {
    length += JSON.stringify({ task: child.taskId, role: child.role, actor: child.path, status: child.status }).length;
    if (length > limit) return false;
  }
  return true;
};

/**
 * The `delegate_task` call's result as the parent reads it: JSON with the join's policy and outcome, each child's
 * status and structured report (never its transcript), its failure class, and the conflicts found. It stays within
 * `limit` characters (the parent's truncation policy): first reports shrink to their status and summary, then to
 * their status only, then children beyond what fits are counted, not listed — and it says so.
 */
export const renderJoinObservation = (summary: JoinSummary, limit: number): string => {
  const head = {
    delegation: summary.delegation,
    join: { policy: summary.join.policy, ...(summary.join.policy === 'quorum' && summary.join.k !== undefined ? { k: summary.join.k } : {}), outcome: summary.outcome },
    note: 'structured reports only; each child\'s transcript is in the trace (rein trace)',
  };
  const conflicts = summary.conflicts.map((conflict) => ({ tasks: conflict.tasks, subject: conflict.subject, detail: conflict.detail }));
  // Each rendering below holds every child's task, role, actor and status: when those alone exceed the limit, none
  // fits, and rendering a large fan-out three times only to find that out cost ~1% of a 1,000-child delegation.
  for (const detail of fitsUnlisted(summary.children, limit) ? (['full', 'brief', 'status'] as const) : []) {
    const shortened = detail === 'full' ? {} : { shortened: `reports shortened (${detail}) to fit ${limit} characters; full reports are in the delegation.completed records` };
    const text = JSON.stringify({ ...head, ...shortened, children: summary.children.map((child) => childEntry(child, detail)), conflicts }, null, detail === 'status' ? undefined : 1);
    if (text.length <= limit) return text;
  }
  const listed: Record<string, unknown>[] = [];
  let used = JSON.stringify({ ...head, conflicts: conflicts.slice(0, 5) }).length + 200;
  for (const child of summary.children) {
    const entry = childEntry(child, 'status');
    const size = JSON.stringify(entry).length + 1;
    if (used + size > limit) break;
    listed.push(entry);
    used += size;
  }
  const counts: Record<string, number> = {};
  for (const child of summary.children) counts[child.status] = (counts[child.status] ?? 0) + 1;
  return JSON.stringify({ ...head, counts, children: listed, omitted: summary.children.length - listed.length, conflicts: conflicts.slice(0, 5) });
};
