import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore } from '../../stores/event-store.js';
import type { ModelInputContent } from '../projections/span-attributes.js';
import { blobText } from '../session/session-records.js';

const inputRefOf = (data: unknown): string[] => {
  const ref = (data as { input?: unknown } | undefined)?.input;
  return typeof ref === 'string' && ref.startsWith('artifact://') ? [ref] : [];
};

/**
 * The model-input blobs a record names (a `context.projected`'s `input`): what a chat span's prompt is read from. Since
 * the step record (issue 26), a step's `context.projected` is a fact folded into its `step.derived` (`[type, data, …]`).
 */
export const modelInputRefsOf = (record: Pick<RecordEnvelope, 'type' | 'data'>): string[] => {
  if (record.type === 'context.projected') return inputRefOf(record.data);
  if (record.type !== 'step.derived') return [];
  const facts = (record.data as { facts?: ReadonlyArray<readonly [string, unknown, ...unknown[]]> }).facts ?? [];
  return facts.flatMap(([type, data]) => (type === 'context.projected' ? inputRefOf(data) : []));
};

/** The model input one blob holds (`{ messages, tools }`), or undefined when it is gone or not one. */
export const readModelInput = async (store: Pick<EventStore, 'readBlob'>, sessionId: string, ref: string): Promise<ModelInputContent | undefined> => {
  const text = await blobText(store, sessionId)(ref).catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<ModelInputContent>;
    return Array.isArray(parsed.messages) ? { messages: parsed.messages, ...(Array.isArray(parsed.tools) ? { tools: parsed.tools } : {}) } : undefined;
  } catch {
    return undefined;
  }
};

/** Every model input a session's records name, read from the store (for an export from the log). */
export const modelInputsOf = async (store: Pick<EventStore, 'readBlob'>, sessionId: string, records: Iterable<Pick<RecordEnvelope, 'type' | 'data'>>): Promise<Map<string, ModelInputContent>> => {
  const inputs = new Map<string, ModelInputContent>();
  for (const record of records) {
    for (const ref of modelInputRefsOf(record)) {
      if (inputs.has(ref)) continue;
      const input = await readModelInput(store, sessionId, ref);
      if (input) inputs.set(ref, input);
    }
  }
  return inputs;
};
