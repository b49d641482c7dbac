import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderJoinObservation, type JoinSummary } from '../../../machines/delegation/join-observation.js';
import type { ChildState } from '../../../machines/delegation/join-policy.js';

/** The rendering as it was before the size check: every detail level tried in turn, then the counted listing. */
const reference = (summary: JoinSummary, limit: number): string => {
  const entry = (child: ChildState, detail: 'full' | 'brief' | 'status'): Record<string, unknown> => {
    const value: Record<string, unknown> = { task: child.taskId, role: child.role, actor: child.path, status: child.status };
    if (child.status === 'completed' && child.report) {
      if (detail === 'full') value.report = child.report;
      else if (detail === 'brief') value.report = { status: child.report.status, summary: String(child.report.summary ?? '').slice(0, 300), ...(Array.isArray(child.report.unknowns) ? { unknowns: (child.report.unknowns as unknown[]).slice(0, 5) } : {}) };
      else value.report_status = child.reportStatus;
    }
    if (child.failureClass) value.failure = detail === 'status' ? child.failureClass : { class: child.failureClass, reason: (child.reason ?? '').slice(0, detail === 'full' ? 2_000 : 300) };
    return value;
  };
  const head = {
    delegation: summary.delegation,
    join: { policy: summary.join.policy, ...(summary.join.policy === 'quorum' && summary.join.k !== undefined ? { k: summary.join.k } : {}), outcome: summary.outcome },
    note: 'structured reports only; each child\'s transcript is in the trace (rein trace)',
  };
  const conflicts = summary.conflicts.map((conflict) => ({ tasks: conflict.tasks, subject: conflict.subject, detail: conflict.detail }));
  for (const detail of ['full', 'brief', 'status'] as const) {
    const shortened = detail === 'full' ? {} : { shortened: `reports shortened (${detail}) to fit ${limit} characters; full reports are in the delegation.completed records` };
    const text = JSON.stringify({ ...head, ...shortened, children: summary.children.map((child) => entry(child, detail)), conflicts }, null, detail === 'status' ? undefined : 1);
    if (text.length <= limit) return text;
  }
  const listed: Record<string, unknown>[] = [];
  let used = JSON.stringify({ ...head, conflicts: conflicts.slice(0, 5) }).length + 200;
  for (const child of summary.children) {
    const value = entry(child, 'status');
    const size = JSON.stringify(value).length + 1;
    if (used + size > limit) break;
    listed.push(value);
    used += size;
  }
  const counts: Record<string, number> = {};
  for (const child of summary.children) counts[child.status] = (counts[child.status] ?? 0) + 1;
  return JSON.stringify({ ...head, counts, children: listed, omitted: summary.children.length - listed.length, conflicts: conflicts.slice(0, 5) });
};

const child = fc
  .record({
    taskId: fc.string({ minLength: 1, maxLength: 12 }),
    role: fc.constantFrom('explorer', 'worker', 'reviewer', 'tester', 'security'),
    status: fc.constantFrom('running', 'completed', 'failed', 'cancelled'),
    summary: fc.string({ maxLength: 400 }),
    unknowns: fc.array(fc.string({ maxLength: 20 }), { maxLength: 7 }),
    reason: fc.option(fc.string({ maxLength: 400 }), { nil: undefined }),
  })
  .map(({ taskId, role, status, summary, unknowns, reason }): ChildState => ({
    taskId,
    role,
    path: `root/delegation-1/${taskId}`,
    format: 'finding-report',
    status,
    deadline: 'root/delegation-1:e1',
    ...(status === 'completed' ? { report: { status: 'completed', summary, unknowns }, reportStatus: 'completed' as const } : {}),
    ...(status === 'failed' || status === 'cancelled' ? { failureClass: 'runtime' as const, ...(reason === undefined ? {} : { reason }) } : {}),
  }));

describe('renderJoinObservation', () => {
  it('renders exactly what trying every detail level in turn renders, for any children and limit', () => {
    fc.assert(
      fc.property(fc.array(child, { maxLength: 60 }), fc.integer({ min: 50, max: 40_000 }), fc.constantFrom('satisfied', 'unsatisfied', 'cancelled'), (children, limit, outcome) => {
        const summary: JoinSummary = { delegation: 'root/delegation-1', join: { policy: 'all' }, outcome, children, conflicts: [] };
        expect(renderJoinObservation(summary, limit)).toBe(reference(summary, limit));
      }),
      { numRuns: 300 },
    );
  });

  it('lists what fits and counts the rest for a fan-out far beyond the limit', () => {
    const children = Array.from({ length: 1_000 }, (_, index): ChildState => ({ taskId: `t${index}`, role: 'explorer', path: `root/delegation-1/t${index}`, format: 'finding-report', status: 'completed', deadline: `root/delegation-1:e${index + 1}`, report: { status: 'completed', summary: 'looked' }, reportStatus: 'completed' }));
    const summary: JoinSummary = { delegation: 'root/delegation-1', join: { policy: 'all' }, outcome: 'satisfied', children, conflicts: [] };
    const text = renderJoinObservation(summary, 16_000);
    expect(text).toBe(reference(summary, 16_000));
    expect(text.length).toBeLessThanOrEqual(16_000);
    expect((JSON.parse(text) as { omitted: number }).omitted).toBeGreaterThan(0);
  });
});
