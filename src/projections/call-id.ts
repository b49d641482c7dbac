import type { RecordEnvelope } from '../../models/envelope.js';

/** The tool call a record belongs to: its `corr`, else the `callId` in its data. */
export const callIdOf = (record: RecordEnvelope): string | undefined => record.corr ?? ((record.data as { callId?: unknown }).callId as string | undefined);
