import type { Budgets } from '../../models/budgets.js';
import type { Script, ScriptInput } from '../../models/script.js';
import type { ReinRecord } from '../../models/records.js';
import type { EventStore } from '../../stores/event-store.js';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import type { SessionResult } from '../host/session-host.js';
import { createScriptedProvider } from '../providers/scripted-provider.js';
import type { Rein, ReinOptions } from '../rein.js';
import { createRein } from '../areas/lazy-exports.js';
import { sequentialIds } from './log-fixture.js';
import type { ApprovalAnswer, ApprovalRequest, ReinSession } from '../session/session-handle.js';

export interface ScriptedRunOptions {
  /** The script the model plays, as written (`ScriptInput`: defaults may be left out) or parsed; validated (`SCRIPT_INVALID`). */
  script: Script | ScriptInput;
  /** An existing directory the tools work in. */
  workspace: string;
  /** Default: a fresh in-memory store. */
  store?: EventStore;
  task?: string;
  budgets?: Partial<Budgets>;
  clock?: () => number;
  /** The session's id (default: a fresh `s-<date>-<random>`); give one, a fixed `clock` and `seed` for the same log every run. */
  sessionId?: string;
  /** Record ids `<seed>-<n>` (`sequentialIds(seed)`) instead of random-prefixed ones; `newRecordId` gives a generator of your own. */
  seed?: string | number;
  /** Record ids from this generator (wins over `seed`). */
  newRecordId?: () => string;
  /** Any other harness option (tools, system prompt, snapshot cadence, permissions…). */
  rein?: Partial<Omit<ReinOptions, 'store' | 'workspace' | 'provider'>>;
  /** Answer approval requests as a host would; without it a session that asks stops `paused`. */
  answer?: (request: ApprovalRequest) => ApprovalAnswer;
}

export interface ScriptedRun {
  rein: Rein;
  session: ReinSession;
  result: SessionResult;
  /**
   * Every stored record, typed by its `type`, as stored: what a step derived (transitions, turn witnesses,
   * `session.ended`…) is inside its `step.derived` record — `flattenRecords(records)` lists each as a record of its own.
   */
  records: ReinRecord[];
  store: EventStore;
}

/**
 * Run a scripted session to quiet (answering approvals with `answer`, if given) and return its result and every stored
 * record. With `sessionId`, `seed` and a fixed `clock`, two runs in the same workspace state write identical records
 * (write them with `writeLogFixture`, read them back with `readLogFixture`).
 */
export const runScriptedSession = async (options: ScriptedRunOptions): Promise<ScriptedRun> => {
  const store = options.store ?? createMemoryEventStore();
  const rein = await createRein({
    ...options.rein,
    store,
    workspace: options.workspace,
    provider: createScriptedProvider(options.script),
    ...(options.budgets ? { budgets: options.budgets } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.newRecordId ? { newRecordId: options.newRecordId } : options.seed !== undefined ? { newRecordId: sequentialIds(options.seed) } : {}),
  });
  const session = await rein.startSession({ task: options.task ?? 'Follow the script.', ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }) });
  let result = await session.whenQuiet();
  while (options.answer && result.status === 'paused') {
    const pending = session.pendingApprovals();
    if (pending.length === 0) break;
    for (const request of pending) await session.approve(request.approvalId, options.answer(request));
    result = await session.whenQuiet();
  }
  const records = (await store.read(session.id)) as ReinRecord[];
  return { rein, session, result, records, store };
};
