import type { RecordEnvelope } from '../../models/envelope.js';
import type { ApprovalReplied, ApprovalRequested } from '../../models/permission.records.js';
import type { CommandExecution, FileRead, FileWritten, ToolSettled } from '../../models/tool.records.js';
import type { HookDecided } from '../../models/hook.records.js';
import { parseRule, type PermissionRule } from '../policy/permission-rules.js';
import { foldEntries } from '../host/step-record.js';

/** How commands are compared: whitespace runs collapsed, ends trimmed (`npm  test ` is `npm test`). */
export const commandKey = (command: string): string => command.replace(/\s+/g, ' ').trim();

const toolStateTypes = new Set(['file.read', 'file.written', 'hook.decided', 'tool.settled', 'verification.recorded', 'delegation.completed', 'delegation.failed', 'approval.requested', 'approval.replied']);
const wanted = (type: string): boolean => toolStateTypes.has(type);

/**
 * What the tool pipeline remembers about one session, folded from its log so a resumed session has the same: file
 * baselines (`file.read` / `file.written`), the artifacts the model was shown (`tool.settled`), and the rules
 * granted with `allow for session` (`approval.replied`), and the commands each agent ran (`tool.settled.execution`).
 */
export class SessionToolState {
  readonly baselines = new Map<string, string>();
  readonly artifacts = new Set<string>();
  readonly grants: PermissionRule[] = [];
  /**
   * Hook decisions recorded for effects that have not settled yet, by `<effectId>|<point>`: a call found in doubt on
   * resume reuses them instead of running its hooks again. Dropped once the effect settles (bounded by what is open).
   */
  readonly hookDecisions = new Map<string, HookDecided>();
  private readonly suggested = new Map<string, string>();
  /** Per agent (actor path): the latest execution of each command it ran, keyed by `commandKey`. */
  private readonly executions = new Map<string, Map<string, CommandExecution>>();

  /** Per agent: the status of the latest verification of each command (keyed by `commandKey`), by the same run. */
  private readonly verifications = new Map<string, Map<string, string>>();

  /** The latest execution of each command the agent at `actor` ran (keyed by `commandKey`); empty when it ran none. */
  executionsOf(actor: string): ReadonlyMap<string, CommandExecution> {
    return this.executions.get(actor) ?? new Map();
  }

  /**
   * For each command the agent at `actor` ran, the status of the verification its latest run recorded (`passed`,
   * `failed`, `inconclusive`); a command whose latest run recorded none is absent (it is not a test run).
   */
  verificationsOf(actor: string): ReadonlyMap<string, string> {
    return this.verifications.get(actor) ?? new Map();
  }
  private lastSeq = 0;
  /** A `verification.recorded` waiting for its call's `tool.settled`. */
  private pendingVerification: { callId: string; status: string } | undefined;

  /** Fold one durable record (records at or below the last folded seq are ignored; a step record's entries are read). */
  observe(stored: RecordEnvelope): void {
    if (stored.seq <= this.lastSeq) return;
    this.lastSeq = stored.seq;
    foldEntries(undefined, stored, (_, record) => this.observeEntry(record), wanted);
  }

  private observeEntry(record: RecordEnvelope): undefined {
    switch (record.type) {
      case 'file.read':
      case 'file.written': {
        const data = record.data as FileRead | FileWritten;
        this.baselines.set(data.path, data.hash);
        break;
      }
      case 'hook.decided': {
        const data = record.data as HookDecided;
        if (data.effectId) this.hookDecisions.set(`${data.effectId}|${data.point}`, data);
        break;
      }
      case 'tool.settled': {
        const data = record.data as ToolSettled;
        if (this.hookDecisions.size > 0) for (const key of this.hookDecisions.keys()) if (key.startsWith(`${data.effectId}|`)) this.hookDecisions.delete(key);
        for (const artifact of data.artifacts ?? []) this.artifacts.add(artifact);
        if (data.truncated) this.artifacts.add(data.truncated.artifact);
        if (data.execution) {
          const own = this.executions.get(record.actor) ?? new Map<string, CommandExecution>();
          own.set(commandKey(data.execution.command), data.execution);
          this.executions.set(record.actor, own);
          // Its verification (same batch, written just before the settle) is kept only when it was this run's.
          const key = commandKey(data.execution.command);
          const pending = this.pendingVerification?.callId === data.callId ? this.pendingVerification : undefined;
          const verified = this.verifications.get(record.actor) ?? new Map<string, string>();
          if (pending) verified.set(key, pending.status);
          else verified.delete(key);
          this.verifications.set(record.actor, verified);
        }
        this.pendingVerification = undefined;
        break;
      }
      case 'verification.recorded': {
        const data = record.data as { callId?: string; status: string };
        if (data.callId !== undefined) this.pendingVerification = { callId: data.callId, status: data.status };
        break;
      }
      case 'delegation.completed':
      case 'delegation.failed':
        // A child that ended reports nothing more: what it ran is no longer asked for.
        this.executions.delete((record.data as { child: string }).child);
        this.verifications.delete((record.data as { child: string }).child);
        break;
      case 'approval.requested': {
        const data = record.data as ApprovalRequested;
        if (this.hookDecisions.size > 0) for (const key of this.hookDecisions.keys()) if (key.startsWith(`${data.effectId}|`)) this.hookDecisions.delete(key);
        this.suggested.set(data.approvalId, data.suggestedRule ?? data.tool);
        break;
      }
      case 'approval.replied': {
        const data = record.data as ApprovalReplied;
        const rule = data.rule ?? this.suggested.get(data.approvalId);
        this.suggested.delete(data.approvalId);
        if (data.decision !== 'allow-session' || !rule) break;
        try {
          this.grants.push({ ...parseRule(rule, 'allow'), action: 'allow', source: 'session' });
        } catch {
          // A grant that is not a valid rule grants nothing.
        }
        break;
      }
      default:
    }
    return undefined;
  }
}
