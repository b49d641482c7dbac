import type { RecordDraft, RecordEnvelope } from '../../models/envelope.js';
import { recordVersion } from '../../models/records.js';
import type { EventStore } from '../../stores/event-store.js';
import type { FactDraft } from '../effects/effect.js';
import { rootPath } from './root-path.js';
import { createIdGenerator } from './record-ids.js';

/**
 * Append runtime facts to a stream no session host of this process writes any more (a session that ended, or is
 * quiet and done with here): at its head, stamped no earlier than its last record, as the root agent's. A concurrent
 * writer (another process resumed it) moves the head: read it again and retry, a few times. Resolves with the stored
 * records, or none when the stream does not exist.
 */
export const appendFacts = async (store: EventStore, stream: string, facts: readonly FactDraft[], clock: () => number = Date.now): Promise<RecordEnvelope[]> => {
  const newId = createIdGenerator();
  for (let attempt = 0; ; attempt++) {
    const [last] = await store.read(stream, { reverse: true, limit: 1 });
    if (!last) return [];
    const drafts = facts.map((fact): RecordDraft => ({ id: newId(), v: recordVersion(fact.type), actor: rootPath, ...fact, at: Math.max(last.at, fact.at ?? clock()) }));
    try {
      return await store.append(stream, drafts, { expectedSeq: last.seq });
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'STORE_CONFLICT' || attempt >= 3) throw error;
    }
  }
};
