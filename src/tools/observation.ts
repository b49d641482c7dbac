import type { Denial } from '../../models/permission.records.js';
import type { CommandExecution, ToolErrorCode, Truncation } from '../../models/tool.records.js';
import type { GuardrailEvidence, Provenance } from '../../models/turn.records.js';
import type { BlobStore } from '../../stores/blob-store.js';

/** The terminal outcome of one call through the tool pipeline, ready to become a `tool.settled` record. */
export interface ToolOutcome {
  status: 'ok' | 'error';
  errorCode?: ToolErrorCode;
  /** The class of the error a tool threw, for a failure that was a throw. */
  errorClass?: string;
  observation: string;
  truncated?: Truncation;
  artifacts?: string[];
  provenance?: Provenance;
  /** The pipeline stage that refused the call (a failure that never ran); `cancelled`: cancelled before it started. */
  failedStage?: 'lookup' | 'visibility' | 'schema' | 'runtime-validation' | 'hook' | 'guardrail' | 'pre-flight' | 'permission' | 'cancelled' | 'budget' | 'parallel';
  /** A structured result a machine reads (a child's validated report). */
  value?: Record<string, unknown>;
  /** The command the tool ran and how it ended; the only source of a verification's status. */
  execution?: CommandExecution;
  /** Who denied or hid a call that never ran. */
  denial?: Denial;
  /** The guardrail stages the call passed through, in order. */
  guardrails?: GuardrailEvidence[];
}

/** Observations longer than this many characters are cut; the full output goes to the blob store. */
export const defaultObservationLimit = 16_000;

/** A model-visible failure as an outcome: `<Code>: <message>`, the code said once even if the message already starts with it. */
export const failureOutcome = (errorCode: ToolErrorCode, message: string, artifacts?: readonly string[]): ToolOutcome => ({
  status: 'error',
  errorCode,
  observation: message.startsWith(`${errorCode}: `) ? message : `${errorCode}: ${message}`,
  ...(artifacts && artifacts.length > 0 ? { artifacts: [...artifacts] } : {}),
});

/**
 * Truncate-to-artifact: an observation over `limit` characters keeps its head and tail around a marker that says
 * it was cut, how many bytes were left out, and which artifact holds the whole text (readable with read_artifact).
 * Truncation is never silent.
 */
export const truncateObservation = async (outcome: ToolOutcome, limit: number, blobs: BlobStore): Promise<ToolOutcome> => {
  const text = outcome.observation;
  if (text.length <= limit) return outcome;
  const artifact = await blobs.put(text);
  const head = text.slice(0, Math.floor(limit * 0.7));
  const tail = text.slice(text.length - Math.floor(limit * 0.2));
  const omittedBytes = Buffer.byteLength(text) - Buffer.byteLength(head) - Buffer.byteLength(tail);
  const marker = `\n[… truncated: ${omittedBytes} bytes omitted; full output in ${artifact} (read_artifact) …]\n`;
  return { ...outcome, observation: head + marker + tail, truncated: { omittedBytes, artifact }, artifacts: [...(outcome.artifacts ?? []), artifact] };
};
