import type { AnyActorRef, AnyStateMachine } from 'xstate';
import type { StateValue } from '../../models/actor.records.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { SessionCreated } from '../../models/session.records.js';
import { awaitsTimer, delegationMachine, type DelegationContext } from '../../machines/delegation.machine.js';
import { isBudgetSpentValue, isSessionMachine, sessionMachine, type SessionContext, type SessionInput } from '../../machines/session.machine.js';
import type { ApprovalQuestion, PermissionContext } from '../../machines/permission.machine.js';
import type { McpConnectionContext } from '../../machines/mcp-connection.machine.js';
import { eventOfRecord, PureTree, type PureTreeOptions, type TreeNode } from './pure-tree.js';
import { rootPath } from './root-path.js';
import type { DerivedDraft } from './step-record.js';

/** An approval question some agent of the tree waits on, with the call's arguments and the asking agent's path. */
export type PendingApproval = ApprovalQuestion & { arguments: Record<string, unknown>; actor: string };

/**
 * A session's actor tree as the host uses it: deliver an input, read what the step derived, ask about its agents.
 * Two implementations run the same machine definitions: the interpreted tree (the default: the host advances each
 * actor's snapshot with the machine's pure `transition`) and the running tree (`ActorTree`: xstate actors, whose
 * inspection stream the Stately inspector needs, used only when something inspects). Both derive the same records.
 */
export interface MachineTree {
  /** Deliver one input record to the actor its envelope names and return the derived drafts of that step. */
  apply(record: Pick<RecordEnvelope, 'type' | 'data' | 'actor'>): DerivedDraft[];
  /** The root ended: a final state, or `budgetExhausted` (which only `session.budgets-raised` leaves). */
  readonly done: boolean;
  readonly value: StateValue;
  readonly context: SessionContext;
  /** The questions every agent's permission actors are waiting on (depth first, oldest first). */
  pendingApprovals(): PendingApproval[];
  /** Every running agent (the root and each child session actor, depth first) with its mutation policy digest. */
  agents(): Array<{ path: string; mutationPolicyDigest: string }>;
  /** The root agent's MCP server connections (`root/mcp/<server>`): state and context, in spawn order. */
  mcpConnections(): Array<{ value: unknown; context: McpConnectionContext }>;
  /** True when an actor with this path is in the tree and running. */
  isActive(path: string): boolean;
  /** True while the tree still holds an actor at `path` (running, or finished and not yet released). */
  holds(path: string): boolean;
  /** True when the actor at `path` is running and still waits on `effectId` (an effect worth resuming). */
  isOutstanding(path: string, effectId: string): boolean;
  /** The paths of actors that ended or were stopped by the steps applied since the last call. */
  drainStopped(): string[];
  /** How many actors the tree holds (the root, every agent, delegation, turn and permission actor). */
  actorCount(): number;
  /** The persisted snapshot of the whole tree (xstate's format, children included: either tree restores it). */
  persisted(): unknown;
  stop(): void;
}

/** The root session machine's input for a session. */
export const rootInputOf = (created: SessionCreated): SessionInput => ({
  path: rootPath,
  sessionId: created.sessionId,
  budgets: created.budgets,
  ...(created.policy ? { mutationPolicyDigest: created.policy.mutationPolicyDigest } : {}),
  ...(created.conversation ? { conversation: true } : {}),
});

/** The interpreted tree (see `MachineTree` and pure-tree.ts): the session machine run by the host, no actor running. */
export class InterpretedTree implements MachineTree {
  private constructor(private readonly tree: PureTree) {}

  /** Build the tree for `session.created`, with the records its initial transition produced. */
  static create(created: SessionCreated, options: PureTreeOptions = {}): { tree: InterpretedTree; drafts: DerivedDraft[] } {
    const made = PureTree.create(sessionMachine, rootInputOf(created), rootPath, options);
    return { tree: new InterpretedTree(made.tree), drafts: made.drafts };
  }

  /** Rebuild the tree from a persisted snapshot; nothing is recorded while restoring. */
  static restore(persisted: unknown, options: PureTreeOptions = {}): InterpretedTree {
    return new InterpretedTree(PureTree.restore(sessionMachine, persisted, rootPath, options));
  }

  apply(record: Pick<RecordEnvelope, 'type' | 'data' | 'actor'>): DerivedDraft[] {
    const root = this.tree.rootNode;
    const target = record.actor === rootPath ? root : this.tree.nodeOf(record.actor);
    // An agent that ended or was stopped takes no more steps (the settlement of a call it started is still recorded).
    if (!target || (target !== root && target.snapshot.status !== 'active')) return this.tree.deliverNothing();
    return this.tree.deliver(target, eventOfRecord(record));
  }

  get done(): boolean {
    const root = this.tree.rootNode.snapshot;
    // Asked several times a step: answered once per root snapshot (a snapshot is never changed once made).
    if (root !== this.doneFor) {
      this.doneFor = root;
      this.doneValue = root.status === 'done' || isBudgetSpentValue(root.value);
    }
    return this.doneValue;
  }

  private doneFor: unknown;
  private doneValue = false;

  get value(): StateValue {
    return this.tree.rootNode.snapshot.value as StateValue;
  }

  get context(): SessionContext {
    return this.tree.rootNode.snapshot.context as SessionContext;
  }

  pendingApprovals(): PendingApproval[] {
    const pending: PendingApproval[] = [];
    const visit = (node: TreeNode) => {
      for (const [id, ref] of Object.entries((node.snapshot.children ?? {}) as Record<string, AnyActorRef>)) {
        const child = this.tree.childOf(ref);
        if (!child || child.snapshot.status !== 'active') continue;
        const permission = child.snapshot.context as PermissionContext | undefined;
        if (child.snapshot.value === 'awaitingReply' && permission?.question) {
          const approvals = (node.snapshot.context as Partial<SessionContext> | undefined)?.approvals;
          pending.push({ ...permission.question, arguments: approvals?.[id]?.arguments ?? {}, actor: (node.snapshot.context as { path?: string }).path ?? rootPath });
          continue;
        }
        visit(child);
      }
    };
    visit(this.tree.rootNode);
    return pending;
  }

  agents(): Array<{ path: string; mutationPolicyDigest: string }> {
    const found: Array<{ path: string; mutationPolicyDigest: string }> = [];
    const visit = (node: TreeNode) => {
      if (node.snapshot.status !== 'active') return;
      if (isSessionMachine(node.definition)) {
        const context = node.snapshot.context as SessionContext;
        found.push({ path: context.path, mutationPolicyDigest: context.mutationPolicyDigest });
      }
      for (const ref of Object.values((node.snapshot.children ?? {}) as Record<string, AnyActorRef>)) {
        const child = this.tree.childOf(ref);
        if (child) visit(child);
      }
    };
    visit(this.tree.rootNode);
    return found;
  }

  mcpConnections(): Array<{ value: unknown; context: McpConnectionContext }> {
    const connections: Array<{ value: unknown; context: McpConnectionContext }> = [];
    for (const [id, ref] of Object.entries((this.tree.rootNode.snapshot.children ?? {}) as Record<string, AnyActorRef>)) {
      if (!id.startsWith(`${rootPath}/mcp/`)) continue;
      const child = this.tree.childOf(ref);
      if (child) connections.push({ value: child.snapshot.value, context: child.snapshot.context as McpConnectionContext });
    }
    return connections;
  }

  isActive(path: string): boolean {
    // `nodeAt`, inlined: asked several times a step.
    const node = path === rootPath ? this.tree.rootNode : this.tree.nodeOf(path);
    return node?.snapshot.status === 'active';
  }

  holds(path: string): boolean {
    return path === rootPath || this.tree.nodeOf(path) !== undefined;
  }

  isOutstanding(path: string, effectId: string): boolean {
    const node = this.nodeAt(path);
    if (node?.snapshot.status !== 'active') return false;
    if (node.definition.id === delegationMachine.id) return awaitsTimer(node.snapshot.context as DelegationContext, effectId);
    const outstanding = (node.snapshot.context as { outstanding?: Record<string, unknown> } | undefined)?.outstanding;
    return outstanding !== undefined && Object.hasOwn(outstanding, effectId);
  }

  drainStopped(): string[] {
    return this.tree.drainStopped();
  }

  actorCount(): number {
    let count = 0;
    for (const _node of this.tree.nodes()) count++;
    return count;
  }

  persisted(): unknown {
    return this.tree.persisted();
  }

  stop(): void {
    this.tree.stop();
  }

  /** Every machine definition this tree has run an actor of: the definitions `rein graph` draws and the model checks explore. */
  definitions(): ReadonlySet<AnyStateMachine> {
    return this.tree.definitions;
  }

  /** The definitions among `definitions()` whose actors ran in their compiled form (derived from those same objects). */
  compiledDefinitions(): ReadonlySet<AnyStateMachine> {
    return this.tree.compiledDefinitions;
  }

  private nodeAt(path: string): TreeNode | undefined {
    return path === rootPath ? this.tree.rootNode : this.tree.nodeOf(path);
  }
}
