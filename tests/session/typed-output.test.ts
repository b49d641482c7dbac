import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import type { ModelRequest } from '../../models/model-contract.js';
import { openLevelEventStore } from '../../stores/level-event-store.js';
import { OutputError } from '../../src/host/host-errors.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createRein } from '../../src/rein.js';
import { replaySession } from '../../src/session/replay-session.js';
import { spansOfRecords } from '../../src/projections/spans.view.js';
import { rebuildTraceView } from '../../src/projections/rebuild.js';
import { makeTempDir } from '../support/temp-dir.js';
import { flattenRecords } from '../../src/host/step-record.js';

/** The scripted provider, keeping every request it was sent. */
const recording = (turns: unknown[]) => {
  const inner = createScriptedProvider(parseScript({ turns }));
  const requests: ModelRequest[] = [];
  const provider: ModelProvider = {
    name: inner.name,
    async *stream(request) {
      requests.push(request);
      yield* inner.stream(request);
    },
  };
  return { provider, requests };
};

const Verdict = z.object({ verdict: z.enum(['pass', 'fail']), failing: z.array(z.string()).max(3) });

describe('typed final answers', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  beforeEach(async () => {
    workspace = await makeTempDir('rein-typed-');
  });
  afterEach(() => workspace.remove());

  it('an invalid answer goes back to the model with the errors; the valid one is session.ended.output, typed by z.infer', async () => {
    const store = await openLevelEventStore(`${workspace.path}/.rein`);
    try {
      const { provider, requests } = recording([{ text: 'all good' }, { text: '```json\n{"verdict":"maybe","failing":[]}\n```' }, { text: '{"verdict":"fail","failing":["sum.test.js"]}' }]);
      const rein = await createRein({ store, workspace: workspace.path, provider, memory: false });
      const session = await rein.startSession({ task: 'check the tests', output: Verdict });
      const output = await session.output();
      expectTypeOf(output).toEqualTypeOf<z.infer<typeof Verdict>>();
      expect(output).toEqual({ verdict: 'fail', failing: ['sum.test.js'] });
      // The model was told the schema, then shown why each answer was refused.
      expect(JSON.stringify(requests[0]!.messages)).toContain('valid against this JSON Schema');
      expect(JSON.stringify(requests[1]!.messages)).toContain('the answer is not JSON');
      expect(JSON.stringify(requests[2]!.messages)).toContain('verdict: Invalid option');
      const records = await store.read(session.id);
      expect(records.find((record) => record.type === 'session.created')?.data).toMatchObject({ output: { schema: { type: 'object', required: ['verdict', 'failing'] } } });
      expect(records.filter((record) => record.type === 'model.responded').map((record) => (record.data as { output?: { ok: boolean } }).output?.ok)).toEqual([false, false, true]);
      expect(flattenRecords(records).find((record) => record.type === 'session.ended')?.data).toEqual({ status: 'completed', output: { verdict: 'fail', failing: ['sum.test.js'] } });
      expect((await session.whenQuiet()).output).toEqual({ verdict: 'fail', failing: ['sum.test.js'] });
      // Replay regenerates the same end from the recorded checks (no validation runs again).
      await expect(replaySession(store, session.id)).resolves.toMatchObject({ verified: records.length });
      // The trace view and the spans carry it (the spans only when content is captured).
      expect(rebuildTraceView(records).ended).toMatchObject({ status: 'completed', output: { verdict: 'fail', failing: ['sum.test.js'] } });
      const agentSpan = (capture: boolean) => spansOfRecords(records, { captureContent: capture }).find((span) => span.name.startsWith('invoke_agent'))!;
      expect(agentSpan(true).attributes['rein.session.output']).toBe('{"verdict":"fail","failing":["sum.test.js"]}');
      expect(agentSpan(false).attributes['rein.session.output']).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('past its corrections the session fails with OUTPUT_INVALID naming the last errors', async () => {
    const store = await openLevelEventStore(`${workspace.path}/.rein`);
    try {
      const { provider } = recording([{ text: '{}' }, { text: '{}' }, { text: '{}' }, { text: '{"verdict":"pass"}' }]);
      const rein = await createRein({ store, workspace: workspace.path, provider, memory: false });
      const session = await rein.startSession({ task: 'check', output: Verdict });
      const error = await session.output().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(OutputError);
      expect((error as OutputError).code).toBe('OUTPUT_INVALID');
      expect((error as OutputError).errors).toEqual(['failing: Invalid input: expected array, received undefined']);
      const ended = flattenRecords(await store.read(session.id)).find((record) => record.type === 'session.ended')?.data as { status: string; reason: string; outputErrors: string[] };
      expect(ended.status).toBe('failed');
      expect(ended.reason).toMatch(/^OUTPUT_INVALID: the final answer did not validate against the output schema after 3 correction\(s\)/);
      expect(ended.outputErrors).toEqual((error as OutputError).errors);
    } finally {
      await store.close();
    }
  });

  it('a JSON Schema (what --output-schema reads) is recorded and enforced on resume too; a bad one is refused before anything is written', async () => {
    const store = await openLevelEventStore(`${workspace.path}/.rein`);
    try {
      const schema = { type: 'object', properties: { count: { type: 'integer', minimum: 1 } }, required: ['count'], additionalProperties: false };
      const turns = [{ text: 'writing', toolCalls: [{ name: 'write', arguments: { path: 'n.txt', content: '2' } }] }, { text: '{"count":0}' }, { text: '{"count":2}' }];
      const first = await createRein({ store, workspace: workspace.path, provider: recording(turns).provider, memory: false });
      const asking = await first.startSession({ task: 'count', outputSchema: schema });
      // The write asks a person: the session pauses, and this harness lets go of it.
      expect((await asking.whenQuiet()).status).toBe('paused');
      await asking.release();
      expect((await store.read(asking.id)).find((record) => record.type === 'session.created')?.data).toMatchObject({ output: { schema } });
      // Another harness, without the schema in hand, resumes it: the recorded schema still judges the answers.
      const second = await createRein({ store, workspace: workspace.path, provider: recording(turns).provider, memory: false });
      const { session } = await second.resumeSession(asking.id);
      for (const request of session.pendingApprovals()) await session.approve(request.approvalId, { decision: 'allow-once' });
      await expect(session.output()).resolves.toEqual({ count: 2 });
      const checks = (await store.read(asking.id)).filter((record) => record.type === 'model.responded').map((record) => (record.data as { output?: unknown }).output);
      expect(checks).toEqual([undefined, { ok: false, errors: ['count: Too small: expected number to be >=1'] }, { ok: true, value: { count: 2 } }]);
      await expect(second.createSession({ task: 'x', outputSchema: { type: 'nonsense' } })).rejects.toMatchObject({ code: 'OUTPUT_SCHEMA_INVALID' });
    } finally {
      await store.close();
    }
  });

  it('a conversation waits for the next message after each final answer, and stays one resumable session', async () => {
    const store = await openLevelEventStore(`${workspace.path}/.rein`);
    try {
      const { provider, requests } = recording([{ text: 'hello' }, { text: 'again' }]);
      const rein = await createRein({ store, workspace: workspace.path, provider, memory: false });
      const session = await rein.startSession({ task: 'hi', conversation: true });
      expect((await session.whenQuiet()).status).toBe('paused');
      expect(session.snapshot().value).toBe('idle');
      await session.send('and now?');
      expect((await session.whenQuiet()).status).toBe('paused');
      expect(JSON.stringify(requests[1]!.messages)).toContain('and now?');
      const records = await store.read(session.id);
      expect(records.filter((record) => record.type === 'session.ended')).toEqual([]);
      expect(records.filter((record) => record.type === 'model.responded').map((record) => (record.data as { text: string }).text)).toEqual(['hello', 'again']);
      await expect(replaySession(store, session.id)).resolves.toMatchObject({ verified: records.length });
    } finally {
      await store.close();
    }
  });
});
