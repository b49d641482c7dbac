import type { RecordEnvelope } from '../../models/envelope.js';
import type { ModelEvent, ModelRequest } from '../../models/model-contract.js';
import { ModelFailed, ModelResponded } from '../../models/model.records.js';
import { SessionCreated } from '../../models/session.records.js';
import type { EventStore } from '../../stores/event-store.js';
import { rootPath } from '../host/actor-tree.js';
import { ReinError } from '../host/host-errors.js';
import type { ModelProvider } from './provider.js';

type Output = { kind: 'responded'; reply: ModelResponded } | { kind: 'failed'; failure: ModelFailed };

const keyOf = (actor: string, turn: number): string => `${actor}#${turn}`;

/** The model outputs of a logged session, by actor path and turn. */
export interface RecordedOutputs {
  sessionId: string;
  created: SessionCreated;
  outputs: ReadonlyMap<string, Output>;
}

/** Index a session's `model.responded` and `model.failed` records by actor and turn. */
export const recordedOutputsOf = (sessionId: string, records: readonly RecordEnvelope[]): RecordedOutputs => {
  const first = records[0];
  if (!first) throw new ReinError('SESSION_NOT_FOUND', `no session ${sessionId} in this store`);
  if (first.type !== 'session.created') throw new ReinError('SESSION_INVALID', `${sessionId} does not start with session.created`);
  const outputs = new Map<string, Output>();
  for (const record of records) {
    if (record.type === 'model.responded') {
      const reply = ModelResponded.parse(record.data);
      outputs.set(keyOf(record.actor, reply.turn), { kind: 'responded', reply });
    } else if (record.type === 'model.failed') {
      const failure = ModelFailed.parse(record.data);
      outputs.set(keyOf(record.actor, failure.turn), { kind: 'failed', failure });
    }
  }
  return { sessionId, created: SessionCreated.parse(first.data), outputs };
};

/**
 * Model replay: a provider that plays a logged session's model outputs (its `model.responded` records, keyed by
 * actor and turn) to a new session, so new harness code meets exactly the observations the old run saw. Replies
 * stream like a live model (started, reasoning, text in pieces, complete tool intents with the original vendor
 * ids, usage, finished). A recorded failure is replayed as a non-retryable error of the same code; a turn the log
 * does not have is `script_exhausted`.
 */
export const createRecordedProvider = (recorded: RecordedOutputs): ModelProvider => {
  const model = recorded.created.provider.model;
  return {
    name: 'recorded',
    ...(model === undefined ? {} : { model }),
    source: recorded.sessionId,
    async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
      yield { type: 'started', ...(model === undefined ? {} : { model }), requestId: `${recorded.sessionId}/${request.actor ?? rootPath}/${request.turn}` };
      const output = recorded.outputs.get(keyOf(request.actor ?? rootPath, request.turn));
      if (!output) {
        yield { type: 'error', error: { code: 'script_exhausted', message: `session ${recorded.sessionId} has no model output for ${request.actor ?? rootPath} turn ${request.turn}`, retryable: false } };
        return;
      }
      if (output.kind === 'failed') {
        yield { type: 'error', error: { ...output.failure.error, retryable: false } };
        return;
      }
      const { reply } = output;
      if (reply.reasoning) yield { type: 'reasoning-delta', text: reply.reasoning };
      for (let index = 0; index < reply.text.length; index += 64) yield { type: 'text-delta', text: reply.text.slice(index, index + 64) };
      for (const call of reply.toolCalls) {
        yield { type: 'tool-intent', ...(call.providerCallId === undefined ? {} : { providerCallId: call.providerCallId }), name: call.name, arguments: call.arguments };
      }
      yield { type: 'usage', usage: reply.usage };
      yield { type: 'finished', stopReason: reply.stopReason };
    },
  };
};

/** Read a session from `store` and build a recorded provider over it. */
export const loadRecordedProvider = async (store: EventStore, sessionId: string): Promise<{ provider: ModelProvider; recorded: RecordedOutputs }> => {
  const recorded = recordedOutputsOf(sessionId, await store.read(sessionId));
  return { provider: createRecordedProvider(recorded), recorded };
};
