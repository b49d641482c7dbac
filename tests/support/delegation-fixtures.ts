import fc from 'fast-check';
import type { ModelEvent, ModelRequest } from '../../models/model-contract.js';
import type { ReportFormat } from '../../models/report-contracts.js';
import type { Budgets } from '../../models/budgets.js';
import type { DelegatedTask } from '../../models/delegation.records.js';
import type { ModelProvider } from '../../src/providers/provider.js';

/** A valid report of each format, with the given status (a completed finding report carries a finding). */
export const validReport = (format: ReportFormat, status: string): Record<string, unknown> => {
  const common = { status, summary: `${format} ${status}`, unknowns: status === 'completed' ? [] : ['not everything was checked'] };
  if (format === 'finding-report') return { ...common, checked_paths: ['a.txt'], findings: [{ claim: 'a.txt says alpha', evidence: [{ file: 'a.txt', line: 1 }], confidence: 'high' }], recommendation: 'keep it' };
  if (format === 'test-report') return { ...common, command: 'npm test', exit_code: status === 'completed' ? 0 : 1, passed: status === 'completed', failing_tests: [], relevant_output: 'ok' };
  if (format === 'review-report') return { ...common, verdict: status === 'completed' ? 'pass' : 'needs_changes', findings: [], residual_risk: [] };
  return { ...common, changes: [{ path: 'a.txt', description: 'say beta' }], rationale: 'because' };
};

/** A report that breaks every contract: required fields are missing. */
export const brokenReport = (): Record<string, unknown> => ({ status: 'completed' });

/** The role that returns each format by default. */
export const roleFor: Record<ReportFormat, 'explorer' | 'tester' | 'reviewer' | 'worker'> = { 'finding-report': 'explorer', 'test-report': 'tester', 'review-report': 'reviewer', 'patch-proposal': 'worker' };

/** How one agent of a generated tree behaves. */
export type AgentPlan =
  | { kind: 'report'; status: 'completed' | 'partial' | 'unknown' | 'blocked' }
  | { kind: 'broken-then-report' }
  | { kind: 'broken-twice' }
  | { kind: 'silent-then-report' }
  | { kind: 'silent-twice' }
  | { kind: 'model-fails' }
  | { kind: 'escalate' }
  | { kind: 'delegate'; join: { policy: 'all' | 'any' | 'quorum' | 'first-success'; k?: number }; children: TreeNode[] };

/** One agent: its task id (global, so a provider can find it by its actor path) and its plan. */
export interface TreeNode {
  id: string;
  format: ReportFormat;
  contextMode: 'clean' | 'summary' | 'fork';
  plan: AgentPlan;
}

const leafPlan: fc.Arbitrary<AgentPlan> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('report' as const), status: fc.constantFrom('completed' as const, 'partial' as const, 'unknown' as const, 'blocked' as const) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'broken-then-report' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'broken-twice' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'silent-then-report' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'silent-twice' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'model-fails' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'escalate' as const }) },
);

const joinOf = (count: number) =>
  fc.oneof(
    fc.constant({ policy: 'all' as const }),
    fc.constant({ policy: 'any' as const }),
    fc.constant({ policy: 'first-success' as const }),
    fc.integer({ min: 1, max: count }).map((k) => ({ policy: 'quorum' as const, k })),
  );

/** Random delegation trees: the root delegates to 1–5 children; a child at depth < `maxDepth` may delegate to 1–3 of its own. */
export const delegationTree = (maxDepth: number): fc.Arbitrary<TreeNode> => {
  let next = 0;
  const node = (depth: number): fc.Arbitrary<TreeNode> => {
    const children = (count: { min: number; max: number }) => fc.array(node(depth + 1), { minLength: count.min, maxLength: count.max });
    const plan: fc.Arbitrary<AgentPlan> =
      depth === 0
        ? children({ min: 1, max: 5 }).chain((list) => joinOf(list.length).map((join) => ({ kind: 'delegate' as const, join, children: list })))
        : depth < maxDepth
          ? fc.oneof({ weight: 3, arbitrary: leafPlan }, { weight: 2, arbitrary: children({ min: 1, max: 3 }).chain((list) => joinOf(list.length).map((join) => ({ kind: 'delegate' as const, join, children: list }))) })
          : leafPlan;
    return fc.record({
      format: fc.constantFrom<ReportFormat>('finding-report', 'test-report', 'review-report', 'patch-proposal'),
      contextMode: fc.constantFrom('clean' as const, 'summary' as const, 'fork' as const),
      plan,
    }).map((fields) => ({ id: depth === 0 ? 'root' : `t${next++}`, ...fields }));
  };
  return node(0);
};

/** Every node of a tree by id. */
export const nodesOf = (tree: TreeNode): Map<string, TreeNode> => {
  const nodes = new Map<string, TreeNode>();
  const visit = (node: TreeNode) => {
    nodes.set(node.id, node);
    if (node.plan.kind === 'delegate') node.plan.children.forEach(visit);
  };
  visit(tree);
  return nodes;
};

type Reply = { text: string; calls: Array<{ name: string; arguments: Record<string, unknown> }> } | 'fail';

const finish = (node: TreeNode): Reply => (node.id === 'root' ? { text: 'Done.', calls: [] } : { text: 'reporting', calls: [{ name: 'submit_report', arguments: validReport(node.format, 'partial') }] });

/** The replies of one agent, turn by turn. */
const repliesOf = (node: TreeNode): Reply[] => {
  const report = (status: string): Reply => ({ text: 'reporting', calls: [{ name: 'submit_report', arguments: validReport(node.format, status) }] });
  const broken: Reply = { text: 'reporting', calls: [{ name: 'submit_report', arguments: brokenReport() }] };
  const silent: Reply = { text: 'I think I am done.', calls: [] };
  switch (node.plan.kind) {
    case 'report':
      return [report(node.plan.status)];
    case 'broken-then-report':
      return [broken, report('completed')];
    case 'broken-twice':
      return [broken, broken];
    case 'silent-then-report':
      return [silent, report('completed')];
    case 'silent-twice':
      return [silent, silent];
    case 'model-fails':
      return ['fail'];
    case 'escalate':
      return [{ text: 'touching', calls: [{ name: 'bash', arguments: { command: 'touch escalated.txt' } }] }, report('completed')];
    default: {
      const tasks = node.plan.children.map((child) => ({ id: child.id, role: child.plan.kind === 'escalate' ? 'worker' : roleFor[child.format], objective: `task ${child.id}`, context_mode: child.contextMode, ...(child.plan.kind === 'escalate' ? { output_contract: child.format } : {}) }));
      return [{ text: 'delegating', calls: [{ name: 'delegate_task', arguments: { tasks, join: node.plan.join } }] }, finish(node)];
    }
  }
};

/** A provider that plays each agent of the tree by the task id at the end of its actor path (`root` for the root). */
export const treeProvider = (tree: TreeNode): ModelProvider => {
  const nodes = nodesOf(tree);
  return {
    name: 'tree',
    model: 'tree',
    async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
      yield { type: 'started', model: 'tree' };
      const node = nodes.get((request.actor ?? 'root').split('/').pop() ?? '');
      const reply = node ? repliesOf(node)[request.turn - 1] : undefined;
      if (!reply || reply === 'fail') {
        yield { type: 'error', error: { code: reply === 'fail' ? 'auth' : 'script_exhausted', message: `no reply for ${request.actor} turn ${request.turn}`, retryable: false } };
        return;
      }
      yield { type: 'text-delta', text: reply.text };
      for (const [index, call] of reply.calls.entries()) yield { type: 'tool-intent', providerCallId: `p${index}`, name: call.name, arguments: call.arguments };
      yield { type: 'usage', usage: { inputTokens: 20, outputTokens: 10 } };
      yield { type: 'finished', stopReason: reply.calls.length > 0 ? 'tool_use' : 'end_turn' };
    },
  };
};

/** One scripted reply: text and tool calls, a provider failure, or a call that never answers until it is aborted. */
export type ActorReply = { text?: string; calls?: Array<{ name: string; arguments: Record<string, unknown> }> } | 'fail' | 'hang';

/** A provider that plays `replies[<last segment of the actor path>][turn - 1]` (`root` for the root agent). */
export const actorProvider = (replies: Record<string, ActorReply[]>): ModelProvider => ({
  name: 'by-actor',
  model: 'by-actor',
  async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    yield { type: 'started', model: 'by-actor' };
    const reply = replies[(request.actor ?? 'root').split('/').pop() ?? '']?.[request.turn - 1];
    if (reply === 'hang') {
      await new Promise<void>((resolve) => (request.signal?.aborted ? resolve() : request.signal?.addEventListener('abort', () => resolve(), { once: true })));
      yield { type: 'error', error: { code: 'cancelled', message: 'aborted', retryable: false } };
      return;
    }
    if (reply === undefined || reply === 'fail') {
      yield { type: 'error', error: { code: reply === 'fail' ? 'auth' : 'script_exhausted', message: `no reply for ${request.actor} turn ${request.turn}`, retryable: false } };
      return;
    }
    const calls = reply.calls ?? [];
    if (reply.text) yield { type: 'text-delta', text: reply.text };
    for (const [index, call] of calls.entries()) yield { type: 'tool-intent', providerCallId: `p${index}`, name: call.name, arguments: call.arguments };
    yield { type: 'usage', usage: { inputTokens: 20, outputTokens: 10 } };
    yield { type: 'finished', stopReason: calls.length > 0 ? 'tool_use' : 'end_turn' };
  },
});

/** A `delegate_task` call as a scripted reply. */
export const delegate = (tasks: Array<Record<string, unknown>>, join?: Record<string, unknown>): ActorReply => ({ text: 'delegating', calls: [{ name: 'delegate_task', arguments: { tasks, ...(join ? { join } : {}) } }] });

/** A `submit_report` call as a scripted reply. */
export const submit = (report: Record<string, unknown>): ActorReply => ({ text: 'reporting', calls: [{ name: 'submit_report', arguments: report }] });

/** A validated tester task (`test-report`, bash only) wanting `budgets`: what the delegation machine receives. */
export const testerTask = (taskId: string, budgets: Budgets): DelegatedTask => ({
  taskId,
  title: taskId,
  role: 'tester',
  objective: `do ${taskId}`,
  scope: { files: [], directories: ['.'], symbols: [], commands: [] },
  contextMode: 'clean',
  inheritance: 'intersection',
  tools: ['bash'],
  permissionMode: 'default',
  mutationPolicyDigest: 'b3:policy',
  contract: { format: 'test-report', requiredFields: ['status'] },
  budgets,
  depth: 1,
});
