import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore } from '../../stores/event-store.js';
import { upcastRecords } from '../../stores/upcasters.js';

/** Read a whole session lifted to the current record versions (the only way the runtime reads a log to rebuild it). */
export const readSessionRecords = async (store: EventStore, sessionId: string): Promise<RecordEnvelope[]> => upcastRecords(await store.read(sessionId));
