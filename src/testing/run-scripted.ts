import type { Budgets } from '../../models/budgets.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore } from '../../stores/event-store.js';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import type { SessionResult } from '../host/session-host.js';
import { createScriptedProvider, parseScript } from '../providers/scripted-provider.js';
import { createRein, type Rein, type ReinOptions } from '../rein.js';
import type { ReinSession } from '../session/session-handle.js';

export interface ScriptedRunOptions {
  /** A script object in the scripted provider's format (validated). */
  script: unknown;
  /** An existing directory the tools work in. */
  workspace: string;
  /** Default: a fresh in-memory store. */
  store?: EventStore;
  task?: string;
  budgets?: Partial<Budgets>;
  clock?: () => number;
  /** Any other harness option (tools, system prompt, snapshot cadence…). */
  rein?: Partial<Omit<ReinOptions, 'store' | 'workspace' | 'provider'>>;
}

export interface ScriptedRun {
  rein: Rein;
  session: ReinSession;
  result: SessionResult;
  records: RecordEnvelope[];
  store: EventStore;
}

/** Run a scripted session to quiet and return its result and every stored record. */
export const runScriptedSession = async (options: ScriptedRunOptions): Promise<ScriptedRun> => {
  const store = options.store ?? createMemoryEventStore();
  const rein = await createRein({
    ...options.rein,
    store,
    workspace: options.workspace,
    provider: createScriptedProvider(parseScript(options.script)),
    ...(options.budgets ? { budgets: options.budgets } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const session = await rein.startSession({ task: options.task ?? 'Follow the script.' });
  const result = await session.whenQuiet();
  const records = await store.read(session.id);
  return { rein, session, result, records, store };
};
