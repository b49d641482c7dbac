import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JoinPolicy } from '../../models/delegation.records.js';
import { decideJoin, needed, succeeded, type ChildState } from '../../machines/delegation/join-policy.js';
import { propertyRuns } from '../support/temp-dir.js';

/** The join decision as the policy reads, one filter per question: what the early-returning `decideJoin` must equal. */
const referenceDecision = (join: JoinPolicy, children: readonly ChildState[]): 'satisfied' | 'unsatisfied' | undefined => {
  const ended = children.filter((child) => child.status === 'completed' || child.status === 'failed' || child.status === 'cancelled');
  if (join.policy === 'all') return ended.length === children.length ? (children.every(succeeded) ? 'satisfied' : 'unsatisfied') : undefined;
  if (join.policy === 'any') return ended.length > 0 ? (ended.some((child) => child.status === 'completed') ? 'satisfied' : 'unsatisfied') : undefined;
  const need = needed(join, children.length);
  const successes = ended.filter(succeeded).length;
  if (successes >= need) return 'satisfied';
  return children.length - (ended.length - successes) < need ? 'unsatisfied' : undefined;
};

const child = fc
  .record({
    status: fc.constantFrom<ChildState['status']>('running', 'awaiting-approval', 'completed', 'failed', 'cancelled'),
    reportStatus: fc.option(fc.constantFrom('completed', 'partial', 'blocked'), { nil: undefined }),
  })
  .map(({ status, reportStatus }): ChildState => ({ taskId: 't', role: 'explorer', path: 'root/delegation-1/t', format: 'finding-report', status, deadline: 'root/delegation-1:e1', ...(reportStatus ? { reportStatus: reportStatus as ChildState['reportStatus'] } : {}) }));

const policy = fc.oneof(
  fc.constantFrom<JoinPolicy>({ policy: 'all' }, { policy: 'any' }, { policy: 'first-success' }, { policy: 'quorum' }),
  fc.integer({ min: 1, max: 8 }).map((k): JoinPolicy => ({ policy: 'quorum', k })),
);

describe('decideJoin', () => {
  it('decides exactly as the policy reads, whatever the children and their order (it is asked after every event)', () => {
    fc.assert(
      fc.property(policy, fc.array(child, { maxLength: 12 }), (join, children) => {
        expect(decideJoin(join, children)).toBe(referenceDecision(join, children));
      }),
      { numRuns: propertyRuns(500) },
    );
  });
});
