import type { RecordEnvelope } from '../../models/envelope.js';
import type { DelegatedTask, DelegationStarted } from '../../models/delegation.records.js';
import { foldEntries } from '../host/step-record.js';

/** One running child agent as the runtime knows it: its resolved task package and the agent it serves. */
export interface ChildEntry {
  path: string;
  parent: string;
  callId: string;
  task: DelegatedTask;
}

const delegationTypes = new Set(['delegation.started', 'delegation.completed', 'delegation.failed']);
const wanted = (type: string): boolean => delegationTypes.has(type);

/**
 * The child agents of a session that are running, folded from the log (`delegation.started` adds one,
 * `delegation.completed` / `delegation.failed` remove it and its own children), so a resumed session knows the same. The runtime reads a
 * child's role, tools, permission mode and contract from here — never from its path.
 */
export class DelegationDirectory {
  private readonly children = new Map<string, ChildEntry>();
  private lastSeq = 0;

  /** Fold one durable record (records at or below the last folded seq are ignored; a step record's entries are read). */
  observe(stored: RecordEnvelope): void {
    if (stored.seq <= this.lastSeq) return;
    this.lastSeq = stored.seq;
    foldEntries(undefined, stored, (_, record) => this.observeEntry(record), wanted);
  }

  private observeEntry(record: RecordEnvelope): undefined {
    if (record.type === 'delegation.started') {
      const data = record.data as DelegationStarted;
      this.children.set(data.child, { path: data.child, parent: data.parent, callId: data.callId, task: data.task });
    } else if (record.type === 'delegation.completed' || record.type === 'delegation.failed') {
      const child = (record.data as { child: string }).child;
      const entry = this.children.get(child);
      this.children.delete(child);
      // A child that delegated itself takes its own children with it when it ends.
      if (entry && entry.task.tools.includes('delegate_task')) for (const path of [...this.children.keys()]) if (path.startsWith(`${child}/`)) this.children.delete(path);
    }
    return undefined;
  }

  get(path: string): ChildEntry | undefined {
    return this.children.get(path);
  }

  /** How many children are running. */
  get size(): number {
    return this.children.size;
  }
}
