import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ModelEvent } from '../../models/model-contract.js';
import type { ToolSettled } from '../../models/tool.records.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createOpenAICompatibleProvider } from '../../src/providers/openai-compatible.provider.js';
import { createRein } from '../../src/rein.js';
import { normaliseArguments } from '../../src/tools/argument-hygiene.js';
import { builtinTools } from '../../src/tools/builtin-tools.js';
import { openLevelEventStore } from '../../stores/index.js';
import { startLoopbackServer, type LoopbackServer } from '../support/loopback-server.js';
import { doneChunks, echoTool, rawToolCallChunks } from '../support/raw-tool-call.js';
import { makeTempDir } from '../support/temp-dir.js';

let workspace: { path: string; remove: () => Promise<void> };
let server: LoopbackServer | undefined;
beforeAll(async () => {
  workspace = await makeTempDir('rein-arguments-');
  await writeFile(join(workspace.path, 'notes.txt'), 'remember the milk\n');
});
afterAll(() => workspace.remove());
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/**
 * Run one session on a real LevelDB store whose model is `provider`, then replay it and resume it from a fresh
 * harness over the same store: what the trial broke (replay diverged at `turn.requests`, resume refused).
 */
const runAndReopen = async (provider: ModelProvider) => {
  const storeDir = await makeTempDir('rein-arguments-store-');
  try {
    const store = await openLevelEventStore(storeDir.path);
    const tools = [...builtinTools(), echoTool];
    const rein = await createRein({ store, workspace: workspace.path, provider, tools, permissions: { mode: 'accept-edits' } });
    const session = await rein.startSession({ task: 'Go.' });
    const result = await session.whenQuiet();
    const records = await store.read(session.id);
    const replay = await rein.replaySession(session.id);
    const resumed = await rein.resumeSession(session.id);
    await rein.close?.();
    await store.close();
    return { result, records, replay, resumed, settled: records.filter((record) => record.type === 'tool.settled').map((record) => record.data as ToolSettled) };
  } finally {
    await storeDir.remove();
  }
};

const loopbackProvider = async (name: string, argumentsText: string): Promise<ModelProvider> => {
  server = await startLoopbackServer((_request, index) => ({ chunks: index === 0 ? rawToolCallChunks(name, argumentsText) : doneChunks() }));
  return createOpenAICompatibleProvider({ model: 'loopback-1', baseUrl: `${server.url}/v1`, apiKey: 'sk-test-0123456789abcdefghij' });
};

/** A custom provider (no wire format) that proposes one call with `args` as given, then ends. */
const customProvider = (args: unknown): ModelProvider => {
  let calls = 0;
  return {
    name: 'custom',
    async *stream(): AsyncIterable<ModelEvent> {
      calls++;
      yield { type: 'started', model: 'custom-1' };
      if (calls === 1) yield { type: 'tool-intent', name: 'echo', arguments: args as Record<string, unknown>, providerCallId: 'c1' } as ModelEvent;
      else yield { type: 'text-delta', text: 'Done.' };
      yield { type: 'finished', stopReason: calls === 1 ? 'tool_use' : 'end_turn' };
    },
  };
};

describe('tool-call arguments are normalised once, before they are recorded (issue 25 §7)', () => {
  it('a "__proto__" key from an OpenAI-compatible stream: refused with a recorded reason; replay verifies and resume works', async () => {
    const run = await runAndReopen(await loopbackProvider('read', '{"path":"notes.txt","__proto__":{"polluted":true}}'));
    expect(run.result.status).toBe('completed');
    expect(run.settled[0]).toMatchObject({ status: 'error', errorCode: 'InvalidInput' });
    expect(run.settled[0]!.observation).toContain('`__proto__`');
    expect(run.replay.head).toBe(run.records.at(-1)!.seq);
    expect(run.resumed.report.alreadyEnded).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a nested "__proto__" inside an object the schema accepts: refused, never run, and the log replays', async () => {
    const run = await runAndReopen(await loopbackProvider('echo', '{"options":{"deep":[{"__proto__":{"x":1},"kept":-0}]}}'));
    expect(run.settled[0]).toMatchObject({ status: 'error', errorCode: 'InvalidInput' });
    expect(run.settled[0]!.observation).toContain('`options.deep[0].__proto__`');
    expect(run.records.some((record) => record.type === 'tool.started')).toBe(false);
    expect(run.replay.head).toBe(run.records.at(-1)!.seq);
    expect(run.resumed.report.alreadyEnded).toBe(true);
  });

  it("a custom provider's Map and BigInt arguments are refused naming the field; the session completes and replays", async () => {
    for (const args of [new Map([['path', 'notes.txt']]), { path: 'notes.txt', offset: 10n }, { nested: { set: new Set([1]) } }]) {
      const run = await runAndReopen(customProvider(args));
      expect(run.result.status).toBe('completed');
      expect(run.settled[0]).toMatchObject({ status: 'error', errorCode: 'InvalidInput' });
      expect(run.settled[0]!.observation).toMatch(/is not a JSON value/);
      expect(run.replay.head).toBe(run.records.at(-1)!.seq);
      expect(run.resumed.report.alreadyEnded).toBe(true);
    }
  });

  it('JSON meanings are kept silently: -0 is 0, an undefined member is absent, a hole or undefined element is null', () => {
    const sparse: unknown[] = [1];
    sparse[2] = 3;
    const { value, problems } = normaliseArguments({ zero: -0, gone: undefined, list: [undefined, ...sparse], constructor: 'kept', toString: 'kept too' });
    expect(problems).toEqual([]);
    expect(value).toEqual({ zero: 0, list: [null, 1, null, 3], constructor: 'kept', toString: 'kept too' });
    expect(Object.is(value.zero, 0)).toBe(true);
    expect(Object.keys(value)).toEqual(['zero', 'list', 'constructor', 'toString']);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });
});
