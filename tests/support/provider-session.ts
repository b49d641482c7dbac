import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ModelEvent, ModelRequest } from '../../models/model-contract.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { RetryPolicy } from '../../src/effects/model-retry.js';
import type { SessionResult } from '../../src/host/session-host.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createRein } from '../../src/rein.js';
import { createMemoryEventStore } from '../../stores/index.js';
import { makeTempDir } from './temp-dir.js';
import { flattenRecords } from '../../src/host/step-record.js';

/** Drain a provider stream into a list. */
export const collect = async (provider: ModelProvider, request: ModelRequest): Promise<ModelEvent[]> => {
  const events: ModelEvent[] = [];
  for await (const event of provider.stream(request)) events.push(event);
  return events;
};

/** A small request: a system prompt, a user message and the two read-only tools the transcripts call. */
export const sampleRequest = (overrides: Partial<ModelRequest> = {}): ModelRequest => ({
  runId: 's-test',
  turnId: 'root:e1',
  turn: 1,
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Read notes.txt' },
  ],
  tools: [{ name: 'read', description: 'Read a file.', inputSchema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }],
  options: {},
  ...overrides,
});

export interface ProviderSession {
  result: SessionResult;
  records: RecordEnvelope[];
  /** The data of every record of `type`, in order. */
  of(type: string): any[];
}

/**
 * Run one session with `provider` in a fresh workspace holding `notes.txt`, on an in-memory store, with a fast
 * retry budget; verify it by replay before returning.
 */
export const runProviderSession = async (provider: ModelProvider, options: { retry?: Partial<RetryPolicy>; task?: string } = {}): Promise<ProviderSession> => {
  const workspace = await makeTempDir('rein-provider-');
  try {
    await writeFile(join(workspace.path, 'notes.txt'), 'remember the milk\n');
    const store = createMemoryEventStore();
    const rein = await createRein({ store, workspace: workspace.path, provider, retry: { baseDelayMs: 5, maxDelayMs: 20, maxAttempts: 3, ...options.retry }, permissions: { mode: 'accept-edits' } });
    const session = await rein.startSession({ task: options.task ?? 'Read notes.txt' });
    const result = await session.whenQuiet();
    const records = await store.read(session.id);
    await rein.replaySession(session.id);
    return { result, records, of: (type) => flattenRecords(records).filter((record) => record.type === type).map((record) => record.data) };
  } finally {
    await workspace.remove();
  }
};
