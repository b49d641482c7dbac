import { describe, expect, it } from 'vitest';
import { createMachine, type SnapshotFrom } from 'xstate';
import { checkMachine, type ModelStep } from 'rein/testing';
import { delegationMachine, type DelegationEvent, type DelegationInput } from '../../machines/delegation.machine.js';
import type { AgentOutput } from '../../machines/session.machine.js';
import type { DelegatedTask, JoinPolicy } from '../../models/delegation.records.js';

/**
 * The delegation machine alone: its children are stand-ins that never finish by themselves; every outcome a child
 * can have is injected as the event its parent would receive (the session machine is checked on its own).
 */
const machine = delegationMachine.provide({ actors: { agent: createMachine({ id: 'stand-in', initial: 'working', states: { working: {} } }) } });
type Machine = typeof machine;
type Snapshot = SnapshotFrom<Machine>;

const budgets = { maxTurns: 5, maxToolCalls: 10, maxTokens: 10_000, maxWallTimeMs: 60_000 };
const task = (taskId: string): DelegatedTask => ({
  taskId,
  title: taskId,
  role: 'explorer',
  objective: `do ${taskId}`,
  scope: { files: [], directories: ['.'], symbols: [], commands: [] },
  contextMode: 'clean',
  inheritance: 'intersection',
  tools: ['read'],
  permissionMode: 'default',
  mutationPolicyDigest: 'b3:policy',
  contract: { format: 'finding-report', requiredFields: ['status', 'summary', 'checked_paths', 'findings', 'recommendation'] },
  budgets,
  depth: 1,
});

const input = (join: JoinPolicy): DelegationInput => ({
  path: 'root/delegation-2',
  sessionId: 's-test',
  parent: 'root',
  callId: 'root:e1.0',
  plan: { tasks: ['a', 'b', 'c'].map(task), join, observationLimit: 4_000 },
  ceiling: budgets,
  startedAtMs: 0,
});

const usage = { turns: 1, toolCalls: 1, inputTokens: 10, outputTokens: 5 };
const report = (status: string) => ({ status, summary: 's', checked_paths: ['a'], findings: [{ claim: 'c', evidence: [], confidence: 'low' }], recommendation: 'r' });
const evidence = { turnId: 'x:e3', joinDigest: 'b3:join' };

/** Every way a child can end, as its parent sees it. */
const outcomes = (path: string): AgentOutput[] => [
  { kind: 'agent', path, status: 'completed', report: report('completed'), evidence, usage },
  { kind: 'agent', path, status: 'completed', report: report('partial'), evidence, usage },
  { kind: 'agent', path, status: 'completed', report: report('completed'), usage },
  { kind: 'agent', path, status: 'failed', reason: 'the output contract was broken twice', failureClass: 'contract', usage },
  { kind: 'agent', path, status: 'failed', reason: 'model call failed', failureClass: 'runtime', usage },
  { kind: 'agent', path, status: 'budget-exhausted', reason: 'turn budget exhausted', failureClass: 'runtime', usage },
];

/** A child's actor id among the delegation's children is its task's index; its path names it everywhere else. */
const actorIdOf = (snapshot: Snapshot, path: string): string => String(snapshot.context.children.findIndex((child) => child.path === path));
const childOfEvent = (snapshot: Snapshot, type: string) =>
  type.startsWith('xstate.done.actor.') ? snapshot.context.children[Number(type.slice('xstate.done.actor.'.length))] : undefined;

const events = (snapshot: Snapshot): DelegationEvent[] => {
  const list: DelegationEvent[] = [
    { type: 'timer.fired', effectId: 'root/delegation-2:e99', elapsedMs: 1 },
    { type: 'xstate.done.actor.root/delegation-2/zzz', output: outcomes('root/delegation-2/zzz')[0]! },
    { type: 'xstate.done.actor.7', output: outcomes('root/delegation-2/zzz')[0]! },
    { type: 'delegation.cancel', reason: 'the user cancelled' },
  ];
  for (const [index, child] of snapshot.context.children.entries()) {
    for (const output of outcomes(child.path)) list.push({ type: `xstate.done.actor.${index}`, output });
    // A done event under the child's path (not its actor id) is not the child's: nothing changes.
    list.push({ type: `xstate.done.actor.${child.path}`, output: outcomes(child.path)[0]! });
    list.push({ type: 'timer.fired', effectId: child.deadline, elapsedMs: 60_000 });
    if (child.status === 'running') list.push({ type: 'child.escalated', taskId: child.taskId, approvalId: `${child.path}/approval-3`, tool: 'bash', summary: 'bash npm test', reason: 'commands need approval' });
    if (child.status === 'awaiting-approval') list.push({ type: 'child.resumed', taskId: child.taskId, approvalId: `${child.path}/approval-3` });
  }
  return list;
};

const active = (status: string) => status === 'running' || status === 'awaiting-approval';
const isFinal = (snapshot: Snapshot) => snapshot.status === 'done';
const childrenOf = (snapshot: Snapshot) => Object.values(snapshot.context.children);
const success = (child: { status: string; reportStatus?: string }) => child.status === 'completed' && child.reportStatus === 'completed';

/** The policy stated independently of the machine: may it still be undecided with these children? */
const undecidable = (join: JoinPolicy, children: ReturnType<typeof childrenOf>): boolean => {
  const ended = children.filter((child) => !active(child.status));
  const successes = ended.filter(success).length;
  const failures = ended.length - successes;
  if (join.policy === 'all') return ended.length < children.length;
  if (join.policy === 'any') return ended.length === 0;
  const k = join.policy === 'first-success' ? 1 : join.k!;
  return successes < k && children.length - failures >= k;
};

/** …and, once decided, whether it was satisfied. */
const satisfied = (join: JoinPolicy, children: ReturnType<typeof childrenOf>): boolean => {
  if (join.policy === 'all') return children.every(success);
  if (join.policy === 'any') return children.some((child) => child.status === 'completed');
  return children.filter(success).length >= (join.policy === 'first-success' ? 1 : join.k!);
};

const recordsOf = (step: ModelStep<Machine>, type: string) =>
  step.actions.filter((action) => action.type === 'emitRecord' && (action.params as { type: string }).type === type).map((action) => (action.params as { data: Record<string, unknown> }).data);

const stopped = (step: ModelStep<Machine>): string[] =>
  step.actions.filter((action) => action.type === 'xstate.stopChild').map((action) => String((action.params as { id?: string } | undefined)?.id));

const check = (join: JoinPolicy) =>
  checkMachine({
    machine,
    input: input(join),
    events,
    stateInvariants: {
      'final exactly when the join is decided': (snapshot) => isFinal(snapshot) === (snapshot.context.outcome !== null),
      'an open join is still undecidable by its policy': (snapshot) => isFinal(snapshot) || undecidable(join, childrenOf(snapshot)),
      'a decided join is satisfied exactly as its policy says': (snapshot) =>
        !isFinal(snapshot) || snapshot.context.outcome === 'cancelled' || (snapshot.context.outcome === 'satisfied') === satisfied(join, childrenOf(snapshot)),
      'no child runs after the join': (snapshot) => !isFinal(snapshot) || childrenOf(snapshot).every((child) => !active(child.status)),
      // Ended children are released in task order (their actors' map stays cheap to copy): an ended child keeps its
      // actor only while a child before it still runs.
      'a running child has its actor; an ended one keeps it only while a child before it runs': (snapshot) =>
        isFinal(snapshot) ||
        childrenOf(snapshot).every((child, index) => {
          const held = Object.hasOwn(snapshot.children, actorIdOf(snapshot, child.path));
          if (active(child.status)) return held;
          return !held || childrenOf(snapshot).slice(0, index).some((before) => active(before.status));
        }),
      'a merged (completed) child carries a report': (snapshot) => childrenOf(snapshot).every((child) => child.status !== 'completed' || child.report !== undefined),
      'the observation exists once decided and fits the limit': (snapshot) => !isFinal(snapshot) || (snapshot.context.observation !== null && snapshot.context.observation.length <= 4_000),
    },
    transitionInvariants: {
      'the join is recorded exactly once, on the deciding edge': (step) => recordsOf(step, 'delegation.joined').length === (isFinal(step.to) && !isFinal(step.from) ? 1 : 0),
      'deciding stops every child still running, recording each as cancelled': (step) => {
        if (isFinal(step.from) || !isFinal(step.to)) return true;
        const finishing = childOfEvent(step.from, step.event.type)?.path;
        const running = childrenOf(step.from).filter((child) => active(child.status) && child.path !== finishing && !(step.event.type === 'timer.fired' && step.event.effectId === child.deadline));
        const cancelled = recordsOf(step, 'delegation.failed').filter((data) => data.cancelled === true).map((data) => String(data.child));
        return running.every((child) => cancelled.includes(child.path) && stopped(step).includes(actorIdOf(step.from, child.path)));
      },
      'never merges without MutationReady evidence': (step) => {
        const output = (step.event as { output?: AgentOutput }).output;
        const merged = recordsOf(step, 'delegation.completed');
        if (merged.some((data) => !(data.evidence as { joinDigest?: string } | undefined)?.joinDigest)) return 'a completed record without evidence';
        if (!output || output.evidence) return true;
        const before = childrenOf(step.from).find((child) => child.path === output.path);
        return !before || !active(before.status) || childrenOf(step.to).every((child) => child.path !== output.path || child.status !== 'completed');
      },
      'a child that ends is released on that edge once no child before it runs, with the ended ones after it': (step) => {
        const child = childOfEvent(step.from, step.event.type);
        if (!child || !active(child.status)) return true;
        const children = childrenOf(step.to);
        const index = children.findIndex((candidate) => candidate.path === child.path);
        if (children.slice(0, index).some((before) => active(before.status))) return !stopped(step).includes(actorIdOf(step.from, child.path));
        for (let after = index; after < children.length && !active(children[after]!.status); after++) {
          if (Object.hasOwn(step.from.children, String(after)) && !stopped(step).includes(String(after))) return `child ${after} not released`;
        }
        return true;
      },
      'an event for an unknown or ended child changes nothing': (step) => {
        if (!step.event.type.startsWith('xstate.done.actor.')) return true;
        const child = childOfEvent(step.from, step.event.type);
        if (child && active(child.status) && (step.event as { output?: AgentOutput }).output?.path === child.path) return true;
        // The same context object is unchanged (no assign ran); only a new one needs comparing.
        return (step.from.context === step.to.context || JSON.stringify(step.from.context) === JSON.stringify(step.to.context)) && step.actions.every((action) => action.type !== 'emitRecord');
      },
      'a deadline fails only a running child, as a runtime failure': (step) => {
        if (step.event.type !== 'timer.fired') return true;
        const effectId = step.event.effectId;
        const child = childrenOf(step.from).find((candidate) => candidate.deadline === effectId);
        const failed = recordsOf(step, 'delegation.failed').filter((data) => data.cancelled !== true);
        if (!child || !active(child.status)) return failed.length === 0;
        return failed.length === 1 && failed[0]!.failureClass === 'runtime' && failed[0]!.child === child.path && stopped(step).includes(actorIdOf(step.from, child.path));
      },
      'an escalation of a running child is recorded once': (step) => {
        if (step.event.type !== 'child.escalated') return true;
        const escalated = recordsOf(step, 'delegation.permission-escalated');
        const taskId = step.event.taskId;
        const child = childrenOf(step.from).find((candidate) => candidate.taskId === taskId);
        return escalated.length === (child && active(child.status) ? 1 : 0);
      },
      'reaching a final state stops every child actor the delegation still holds (no orphans)': (step) => {
        if (isFinal(step.from) || !isFinal(step.to)) return true;
        const missing = Object.keys(step.from.children).filter((id) => !stopped(step).includes(id));
        return missing.length === 0 || `not stopped: ${missing.join(', ')}`;
      },
      'final states record nothing more': (step) => !isFinal(step.from) || step.actions.length === 0,
    },
  });

const policies: JoinPolicy[] = [{ policy: 'all' }, { policy: 'any' }, { policy: 'quorum', k: 2 }, { policy: 'first-success' }];

describe('delegation.machine model check', () => {
  const results = policies.map((join) => ({ join, result: check(join) }));

  for (const { join, result } of results) {
    it(`${join.policy}${join.k ? `(${join.k})` : ''}: decides exactly once, cancels the rest, never merges without MutationReady`, () => {
      expect(result.violations).toEqual([]);
      expect(result.stateValues).toEqual(['"cancelled"', '"joined"', '"running"']);
    });
  }

  it('keeps the size of each state graph under review', () => {
    expect(Object.fromEntries(results.map(({ join, result }) => [`${join.policy}${join.k ? `(${join.k})` : ''}`, { states: result.states, transitions: result.transitions }]))).toMatchSnapshot();
  });
});
