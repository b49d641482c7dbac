import { createActor, type Actor } from 'xstate';
import type { StateValue } from '../../models/actor.records.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { SessionCreated } from '../../models/session.records.js';
import { awaitsTimer, delegationMachine, type DelegationContext } from '../../machines/delegation.machine.js';
import { isBudgetSpentValue, isSessionMachine, sessionMachine, type SessionContext, type SessionEvent } from '../../machines/session.machine.js';
import type { PermissionContext } from '../../machines/permission.machine.js';
import { rootInputOf, type MachineTree, type PendingApproval } from './machine-tree.js';
import type { McpConnectionContext } from '../../machines/mcp-connection.machine.js';
import { ReinError } from './host-errors.js';
import { StepCollector, type DerivedDraft } from './step-collector.js';
import { rootPath } from './root-path.js';

export { rootPath } from './root-path.js';

type RootActor = Actor<typeof sessionMachine>;

export type { PendingApproval } from './machine-tree.js';

interface TreeSnapshot {
  status: string;
  value: unknown;
  context?: unknown;
  children?: Record<string, { getSnapshot(): TreeSnapshot }>;
}

/** The event an input record delivers (copied, then `type` set: see `eventOfRecord` in pure-tree.ts). */
const eventOf = (record: Pick<RecordEnvelope, 'type' | 'data'>): SessionEvent => {
  const event = Object.assign({}, record.data as Record<string, unknown>) as { type: string };
  event.type = record.type;
  return event as SessionEvent;
};

/**
 * The running tree (see `MachineTree`): a session's actors as xstate actors, plus the collector that turns their
 * inspection stream into records. Used when something inspects the session (the Stately inspector reads the same
 * stream); it derives exactly the records the interpreted tree derives. Deterministic: the same input records always
 * produce the same derived drafts, which is what lets replay verify a log.
 */
export class ActorTree implements MachineTree {
  private constructor(
    private readonly root: RootActor,
    private readonly collector: StepCollector,
  ) {}

  /** Build the tree for `session.created` and return it with the records its initial transition produced. */
  static create(created: SessionCreated, options: { inspect?: (event: unknown) => void } = {}): { tree: ActorTree; drafts: DerivedDraft[] } {
    const collector = new StepCollector();
    const root = createActor(sessionMachine, {
      id: rootPath,
      systemId: rootPath,
      input: rootInputOf(created),
      inspect: ActorTree.inspector(collector, options.inspect),
    });
    root.start();
    const tree = new ActorTree(root, collector);
    tree.assertHealthy();
    return { tree, drafts: collector.drain() };
  }

  /** Rebuild the tree from a persisted snapshot; nothing is recorded while restoring. */
  static restore(persisted: unknown, options: { inspect?: (event: unknown) => void } = {}): ActorTree {
    const collector = new StepCollector();
    collector.muted = true;
    const root = createActor(sessionMachine, {
      id: rootPath,
      systemId: rootPath,
      snapshot: persisted as never,
      input: undefined as never,
      inspect: ActorTree.inspector(collector, options.inspect),
    });
    root.start();
    collector.drain();
    collector.muted = false;
    const tree = new ActorTree(root, collector);
    tree.assertHealthy();
    return tree;
  }

  private static inspector(collector: StepCollector, extra?: (event: unknown) => void) {
    if (!extra) return collector.inspect;
    return (event: Parameters<StepCollector['inspect']>[0]) => {
      collector.inspect(event);
      extra(event);
    };
  }

  /** Deliver one input record to the actor its envelope names and return the derived drafts of that step. */
  apply(record: Pick<RecordEnvelope, 'type' | 'data' | 'actor'>): DerivedDraft[] {
    const target = record.actor === rootPath ? this.root : this.root.system.get(record.actor);
    // An agent that ended or was stopped takes no more steps (the settlement of a call it started is still recorded).
    if (target && (target === this.root || target.getSnapshot().status === 'active')) target.send(eventOf(record));
    this.assertHealthy();
    return this.collector.drain();
  }

  get done(): boolean {
    const root = this.root.getSnapshot();
    return root.status === 'done' || isBudgetSpentValue(root.value);
  }

  get value(): StateValue {
    return this.root.getSnapshot().value as StateValue;
  }

  get context(): SessionContext {
    return this.root.getSnapshot().context;
  }

  /**
   * The questions every agent's permission actors are waiting on (the root's and its children's, depth first, oldest
   * first), each with the call's arguments and the path of the agent that asked.
   */
  pendingApprovals(): PendingApproval[] {
    const pending: PendingApproval[] = [];
    const visit = (snapshot: TreeSnapshot) => {
      for (const [id, child] of Object.entries(snapshot.children ?? {})) {
        const state = child.getSnapshot();
        if (state.status !== 'active') continue;
        const permission = state.context as PermissionContext | undefined;
        if (state.value === 'awaitingReply' && permission?.question) {
          const approvals = (snapshot.context as Partial<SessionContext> | undefined)?.approvals;
          pending.push({ ...permission.question, arguments: approvals?.[id]?.arguments ?? {}, actor: (snapshot.context as { path?: string }).path ?? rootPath });
          continue;
        }
        visit(state);
      }
    };
    visit(this.root.getSnapshot() as unknown as TreeSnapshot);
    return pending;
  }

  /**
   * Every running agent of the tree (the root and each child session actor, depth first) with the mutation policy
   * digest its machine holds: what resume compares with the policy in force now.
   */
  agents(): Array<{ path: string; mutationPolicyDigest: string }> {
    const found: Array<{ path: string; mutationPolicyDigest: string }> = [];
    const visit = (ref: { logic?: unknown; getSnapshot(): unknown }) => {
      const snapshot = ref.getSnapshot() as { status?: string; context?: unknown; children?: Record<string, { logic?: unknown; getSnapshot(): unknown }> };
      if (snapshot.status !== 'active') return;
      if (isSessionMachine(ref.logic)) {
        const context = snapshot.context as SessionContext;
        found.push({ path: context.path, mutationPolicyDigest: context.mutationPolicyDigest });
      }
      for (const child of Object.values(snapshot.children ?? {})) visit(child);
    };
    visit(this.root as unknown as { logic?: unknown; getSnapshot(): unknown });
    return found;
  }

  /** The root agent's MCP server connections (`root/mcp/<server>`): state and context, in spawn order. */
  mcpConnections(): Array<{ value: unknown; context: McpConnectionContext }> {
    const children = (this.root.getSnapshot() as unknown as TreeSnapshot).children ?? {};
    const connections: Array<{ value: unknown; context: McpConnectionContext }> = [];
    for (const [id, child] of Object.entries(children)) {
      if (!id.startsWith(`${rootPath}/mcp/`)) continue;
      const snapshot = child.getSnapshot();
      connections.push({ value: snapshot.value, context: snapshot.context as McpConnectionContext });
    }
    return connections;
  }

  /** True when an actor with this path is in the tree and running. */
  isActive(path: string): boolean {
    const actor = path === rootPath ? this.root : this.root.system.get(path);
    return (actor?.getSnapshot() as { status?: string } | undefined)?.status === 'active';
  }

  /** True while the tree's actor system still holds an actor at `path` (running, or finished and not yet released). */
  holds(path: string): boolean {
    return path === rootPath || this.root.system.get(path) !== undefined;
  }

  /**
   * True when the actor at `path` is running and still waits on `effectId` (an effect worth resuming): an agent while
   * the effect is in its `outstanding` map, a delegation while the child that deadline timer guards still runs.
   */
  isOutstanding(path: string, effectId: string): boolean {
    const actor = (path === rootPath ? this.root : this.root.system.get(path)) as { logic?: unknown; getSnapshot(): unknown } | undefined;
    const snapshot = actor?.getSnapshot() as { status?: string; context?: unknown } | undefined;
    if (snapshot?.status !== 'active') return false;
    if ((actor?.logic as { id?: string } | undefined)?.id === delegationMachine.id) return awaitsTimer(snapshot.context as DelegationContext, effectId);
    const outstanding = (snapshot.context as { outstanding?: Record<string, unknown> } | undefined)?.outstanding;
    return outstanding !== undefined && Object.hasOwn(outstanding, effectId);
  }

  /** The paths of actors that ended or were stopped by the steps applied since the last call. */
  drainStopped(): string[] {
    return this.collector.drainStopped();
  }

  /** How many actors the tree holds (the root, every agent, delegation, turn and permission actor, finished or not). */
  actorCount(): number {
    const count = (snapshot: TreeSnapshot): number => {
      let total = 1;
      for (const child of Object.values(snapshot.children ?? {})) total += count(child.getSnapshot());
      return total;
    };
    return count(this.root.getSnapshot() as unknown as TreeSnapshot);
  }

  /** The XState persisted snapshot of the whole tree (children included). */
  persisted(): unknown {
    return this.root.getPersistedSnapshot();
  }

  stop(): void {
    this.root.stop();
  }

  private assertHealthy(): void {
    const snapshot = this.root.getSnapshot();
    if (snapshot.status === 'error') {
      throw new ReinError('MACHINE_ERROR', `the session machine failed: ${String(snapshot.error)}`, { cause: snapshot.error });
    }
  }
}
